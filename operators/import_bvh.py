"""motion_matching.import_bvh: BVH motion capture to an armature with one action per take.

One call reads one file, a multi-selection (``files`` in ``directory``, as
Blender's own importers take them) or a folder's .bvh files, in file-name order.
Takes of the same skeleton share one armature; with several files every clip
is kept (fake user) and put in the database list. All or nothing: a file that
cannot be read is named, and nothing of the call is kept."""

import os
import traceback

import bpy
import numpy as np
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..core.io import bvh_convert as core_bvh_convert, bvh_parse as core_bvh_parse
from ..core.errors import MotionMatchingError
from ..bridge.blender import armature_data, compat
from ..bridge.files import import_bvh as bvh_build, virtual_root
from ..bridge.database.properties import mark_stale
from ..bridge.blender.scene_data import scene_fps
from .virtual_root import VirtualRootOptions


def key_frames(frame_count, take_fps, frame_start, use_fps_scale, fps):
    """Scene frames of the keys: one per BVH frame, or spread to the scene's rate."""
    step = fps / take_fps if use_fps_scale else 1.0
    return frame_start + np.arange(frame_count) * step


@orientation_helper(axis_forward="-Z", axis_up="Y")
class MOTION_MATCHING_OT_import_bvh(bpy.types.Operator, ImportHelper, VirtualRootOptions):
    """Import BVH motion capture takes (one file, several, or a folder) as armatures with one action per take"""

    bl_idname = "motion_matching.import_bvh"
    bl_label = "Import BVH for Motion Matching"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})
    files: CollectionProperty(name="File Path", type=bpy.types.OperatorFileListElement,
                              options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    global_scale: FloatProperty(
        name="Scale", description="Scale the BVH by this value (0.01 for a take in centimetres)",
        min=0.0001, max=1000000.0, soft_min=0.001, soft_max=100.0, default=1.0)
    frame_start: IntProperty(name="Start Frame", description="Scene frame of the take's first frame", default=1)
    use_fps_scale: BoolProperty(
        name="Scale FPS",
        description="Spread the take's frames to the scene's frame rate; otherwise each BVH frame is one scene frame",
        default=False)
    update_scene_fps: BoolProperty(
        name="Update Scene FPS",
        description="Set the scene's frame rate to the take's (then no scaling is needed)", default=False)
    update_scene_duration: BoolProperty(
        name="Update Scene Duration",
        description="Extend the scene's frame range to the take's last frame (never shortens it)", default=False)
    handedness: EnumProperty(
        name="Handedness",
        description="Coordinate system the file was written in",
        items=(
            ("RIGHT", "Right-Handed", "Most BVH files (Blender, MotionBuilder, CMU, Xsens): used as is"),
            ("LEFT", "Left-Handed", "Files written from Unity and other left-handed tools: mirrored along the forward axis"),
        ),
        default="RIGHT")
    add_virtual_root: BoolProperty(
        name="Add Virtual Root",
        description="Add a root bone on the ground under the hips, facing where the hips face (needed for motion matching)",
        default=False)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "global_scale")
        layout.prop(self, "frame_start")
        layout.prop(self, "use_fps_scale")
        layout.prop(self, "update_scene_fps")
        layout.prop(self, "update_scene_duration")
        layout.prop(self, "axis_forward")
        layout.prop(self, "axis_up")
        layout.prop(self, "handedness")
        layout.prop(self, "add_virtual_root")
        if self.add_virtual_root:
            self.draw_root_options(layout)

    def execute(self, context):
        try:
            paths = take_paths(self.filepath, self.directory, [f.name for f in self.files])
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        progress = _Progress(context.window_manager, len(paths))
        try:
            return self._import(context, paths, progress)
        finally:
            progress.end()

    def _read(self, path, scene, use_fps_scale, progress):
        """(motion, key frames, frame count, take fps) of one file; MotionMatchingError if unusable."""
        data = core_bvh_parse.read_bvh(path, progress=lambda f: progress.tell("parse", f))
        motion = core_bvh_convert.to_blender(data, self.global_scale, self.axis_forward, self.axis_up, self.handedness)
        progress.tell("convert", 1.0)
        frames = key_frames(data.frame_count, data.fps, self.frame_start, use_fps_scale, scene_fps(scene))
        check_key_frames(frames, data.source)
        return motion, frames, data.frame_count, data.fps

    def _import(self, context, paths, progress):
        scene = context.scene
        use_fps_scale = self.use_fps_scale and not self.update_scene_fps
        if context.mode != "OBJECT" and context.view_layer.objects.active is not None:
            bpy.ops.object.mode_set(mode="OBJECT")
        clips = _Clips(context)
        first_fps, last_frame = None, None
        try:
            for i, path in enumerate(paths):
                progress.file(i)
                try:
                    motion, frames, frame_count, take_fps = self._read(path, scene, use_fps_scale, progress)
                    name = bpy.path.display_name_from_filepath(path) or "BVH"
                    action = clips.add(name, motion, frames, progress.tell)
                except MotionMatchingError as ex:
                    raise MotionMatchingError(_naming(ex, path, len(paths))) from None
                del motion  # free the take's arrays before the next file
                # The rate of the action's timeline: the take's, or the scene's when spread to it.
                action.motion_matching.fps = scene_fps(scene) if use_fps_scale else take_fps
                action.motion_matching.source_path = os.path.abspath(path)
                first_fps = take_fps if first_fps is None else first_fps
                last_frame = frames[-1] if last_frame is None else max(last_frame, frames[-1])
            try:
                said = clips.finish(self.add_virtual_root and self.root_keywords(), list_them=len(paths) > 1)
            except MotionMatchingError as ex:
                raise MotionMatchingError(_naming(ex, None, len(paths))) from None
        except Exception as ex:
            clips.remove()
            if isinstance(ex, (MotionMatchingError, RuntimeError)):
                self.report({"ERROR"}, str(ex))
            else:  # not expected: say so in one sentence, keep the details for the console
                traceback.print_exc()
                self.report({"ERROR"}, "The import of %s failed (%s: %s); nothing was added."
                            % (os.path.basename(path), type(ex).__name__, ex))
            return {"CANCELLED"}
        # The scene changes only once every take is in.
        if self.update_scene_fps:
            scene.render.fps = max(1, int(round(first_fps)))
            scene.render.fps_base = scene.render.fps / first_fps
        if self.update_scene_duration:
            last = int(np.ceil(last_frame - 1e-6))
            if scene.frame_end < last:
                scene.frame_end = last
        said = "".join(" " + sentence for sentence in said)
        if len(paths) > 1:
            mark_stale(scene)
            self.report({"INFO"}, "Imported %d clips on %d armature%s and added them to the database list.%s"
                        % (len(paths), len(clips.groups), "" if len(clips.groups) == 1 else "s", said))
        else:
            self.report({"INFO"}, "Imported %s: %d joints, %d frames at %.4g fps.%s"
                        % (name, len(clips.groups[0].names), frame_count, take_fps, said))
        return {"FINISHED"}


def take_paths(filepath, directory, names):
    """The BVH files one import reads, in file-name order: the files chosen in
    ``directory``, else ``filepath``; a folder stands for the .bvh files in it.
    Raises MotionMatchingError (nothing is read yet) for a file that is not a
    .bvh file or a folder without one."""
    names = [n for n in names if n]
    if names:
        paths = [os.path.join(directory or os.path.dirname(filepath), n) for n in names]
    elif filepath and not os.path.isdir(filepath):
        paths = [filepath]
    else:
        folder = filepath if filepath and os.path.isdir(filepath) else directory
        if not folder:
            raise MotionMatchingError("Choose a BVH file or a folder of them.")
        if not os.path.isdir(folder):
            raise MotionMatchingError("The folder %s does not exist." % folder)
        paths = [os.path.join(folder, n) for n in os.listdir(folder)
                 if n.lower().endswith(".bvh") and os.path.isfile(os.path.join(folder, n))]
        if not paths:
            raise MotionMatchingError("The folder %s holds no .bvh file; nothing was imported." % folder)
    for path in paths:
        if not path.lower().endswith(".bvh"):
            raise MotionMatchingError("%s is not a .bvh file; nothing was imported (choose BVH files only)."
                                      % os.path.basename(path))
    return sorted(paths, key=lambda p: (os.path.basename(p), p))


def _naming(ex, path, count):
    """The error's sentence, naming the file when it does not yet, and saying
    that nothing was imported when there were several files."""
    text = str(ex)
    base = os.path.basename(path) if path else None
    if base and base not in text:
        text = "%s: %s" % (base, text)
    if count > 1:
        text = "Nothing was imported from the %d files: %s" % (count, text)
    return text


class _Group:
    """One armature made by an import and the clips it plays."""

    def __init__(self, obj, names, motion):
        self.obj, self.names, self.actions = obj, names, []
        self.rest = armature_data.rest_matrices(obj.data, names)
        self.reference = motion   # its rest geometry (the keys are dropped below)

    def same_skeleton(self, motion):
        return core_bvh_convert.skeleton_difference(self.reference, motion) is None


class _Clips:
    """The armatures and actions one import makes: takes of the same skeleton
    share one armature (one action per take); everything goes again on failure."""

    def __init__(self, context):
        self.context = context
        self.groups = []

    def add(self, name, motion, frames, tell):
        for group in self.groups:
            if group.same_skeleton(motion):
                action = bvh_build.add_action(group.obj, group.names, group.rest, name, motion, frames, tell)
                break
        else:
            names = []
            obj = bvh_build.build(self.context, name, motion, frames, progress=tell, names_out=names)
            group = _Group(obj, names, _rest_only(motion))
            self.groups.append(group)
            action = obj.animation_data.action
        group.actions.append(action)
        return action

    def finish(self, root_keywords, list_them):
        """Add the virtual root to each armature (in all its clips), make it
        play its first clip, keep the others with a fake user and list them.
        Returns the sentences saying how each armature's root was made."""
        said = []
        for group in self.groups:
            compat.assign_action(group.obj, group.actions[0])
            if root_keywords:
                said.append(virtual_root.add_virtual_root(self.context, group.obj, actions=group.actions,
                                                          **root_keywords)[1])
        if not list_them:
            return said
        entries = self.context.scene.motion_matching.entries
        for group in self.groups:
            for action in group.actions:
                action.use_fake_user = True
                entry = entries.add()
                entry.action, entry.armature = action, group.obj
        self.context.scene.motion_matching.active_entry = len(entries) - 1
        return said

    def remove(self):
        """Remove everything made so far (the list entries included)."""
        made = {a for g in self.groups for a in g.actions}
        entries = self.context.scene.motion_matching.entries
        for i in reversed(range(len(entries))):
            if entries[i].action in made:
                entries.remove(i)
        for group in self.groups:
            arm = group.obj.data
            bpy.data.objects.remove(group.obj)
            for action in group.actions:
                bpy.data.actions.remove(action)
            bpy.data.armatures.remove(arm)
        self.groups = []


def _rest_only(motion):
    """A copy of a converted take without its keys (what :func:`skeleton_difference` compares)."""
    import dataclasses

    return dataclasses.replace(motion, rotations=motion.rotations[:1].copy(),
                               translations=motion.translations[:1].copy())


# Blender keeps frames within +-1,048,574 (MAXFRAME).
MAX_FRAME = 1048574


def check_key_frames(frames, source):
    """Refuse keys that would land outside the frames Blender can hold."""
    if not (np.isfinite(frames[0]) and np.isfinite(frames[-1])) or frames[0] < -MAX_FRAME or frames[-1] > MAX_FRAME:
        raise MotionMatchingError(
            "The keys of %s would span frames %.0f to %.0f; Blender holds frames between -%d and %d "
            "(choose another Start Frame, or import without Scale FPS)." % (source, frames[0], frames[-1],
                                                                           MAX_FRAME, MAX_FRAME))


class _Progress:
    """One progress bar over the files, each in the import's stages (parse,
    convert, create, keys), each stage given a share of a file by its usual time."""

    SHARES = (("parse", 0.3), ("convert", 0.1), ("create", 0.2), ("keys", 0.4))

    def __init__(self, wm, files=1):
        self.wm = wm
        self.start = {}
        self.done = 0
        total = 0.0
        for stage, share in self.SHARES:
            self.start[stage] = (total, share)
            total += share
        wm.progress_begin(0, 1000 * max(1, files))

    def file(self, index):
        """Start the ``index``-th file (0-based)."""
        self.done = index
        self.wm.progress_update(1000 * index)

    def tell(self, stage, fraction):
        begin, share = self.start.get(stage, (0.0, 0.0))
        self.wm.progress_update(int(1000 * (self.done + begin + share * min(1.0, max(0.0, fraction)))))

    def end(self):
        self.wm.progress_end()


def menu_import(self, context):
    self.layout.operator(MOTION_MATCHING_OT_import_bvh.bl_idname, text="Motion Capture for Motion Matching (.bvh)")


classes = (MOTION_MATCHING_OT_import_bvh,)
