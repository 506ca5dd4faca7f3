"""motion_matching.import_bvh: BVH motion capture to an armature with one action."""

import os
import traceback

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..core.io import bvh_convert as core_bvh_convert, bvh_parse as core_bvh_parse
from ..core.errors import MotionMatchingError
from ..bridge import bvh_import as bvh_build, virtual_root
from ..bridge.scene_data import scene_fps
from .virtual_root import VirtualRootOptions


def key_frames(frame_count, take_fps, frame_start, use_fps_scale, fps):
    """Scene frames of the keys: one per BVH frame, or spread to the scene's rate."""
    step = fps / take_fps if use_fps_scale else 1.0
    return frame_start + np.arange(frame_count) * step


@orientation_helper(axis_forward="-Z", axis_up="Y")
class MOTION_MATCHING_OT_import_bvh(bpy.types.Operator, ImportHelper, VirtualRootOptions):
    """Import a BVH motion capture take as an armature with one action, ready for motion matching"""

    bl_idname = "motion_matching.import_bvh"
    bl_label = "Import BVH for Motion Matching"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})

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
        wm = context.window_manager
        progress = _Progress(wm)
        try:
            return self._import(context, progress)
        finally:
            progress.end()

    def _import(self, context, progress):
        scene = context.scene
        try:
            data = core_bvh_parse.read_bvh(self.filepath, progress=lambda f: progress.tell("parse", f))
            motion = core_bvh_convert.to_blender(data, self.global_scale, self.axis_forward, self.axis_up, self.handedness)
            progress.tell("convert", 1.0)
            use_fps_scale = self.use_fps_scale and not self.update_scene_fps
            frames = key_frames(data.frame_count, data.fps, self.frame_start, use_fps_scale, scene_fps(scene))
            check_key_frames(frames, data.source)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        frame_count, take_fps = data.frame_count, data.fps
        del data  # the MOTION values are in ``motion`` now; free them before Blender copies the keys
        name = bpy.path.display_name_from_filepath(self.filepath) or "BVH"
        if context.mode != "OBJECT" and context.view_layer.objects.active is not None:
            bpy.ops.object.mode_set(mode="OBJECT")
        obj = None
        try:
            obj = bvh_build.build(context, name, motion, frames, progress=progress.tell)
            joints = len(motion.names)
            del motion
            action = obj.animation_data.action
            # The rate of the action's timeline: the take's, or the scene's when spread to it.
            action.motion_matching.fps = scene_fps(scene) if use_fps_scale else take_fps
            action.motion_matching.source_path = os.path.abspath(self.filepath)
            said = ""
            if self.add_virtual_root:
                said = " " + virtual_root.add_virtual_root(context, obj, **self.root_keywords())[1]
        except Exception as ex:
            if obj is not None:
                bvh_build.remove_created({"obj": obj, "action": obj.animation_data.action, "arm": obj.data})
            if isinstance(ex, (MotionMatchingError, RuntimeError)):
                self.report({"ERROR"}, str(ex))
            else:  # not expected: say so in one sentence, keep the details for the console
                traceback.print_exc()
                self.report({"ERROR"}, "The import of %s failed (%s: %s); nothing was added."
                            % (os.path.basename(self.filepath), type(ex).__name__, ex))
            return {"CANCELLED"}
        # The scene changes only once the take is in.
        if self.update_scene_fps:
            scene.render.fps = max(1, int(round(take_fps)))
            scene.render.fps_base = scene.render.fps / take_fps
        if self.update_scene_duration:
            last = int(np.ceil(frames[-1] - 1e-6))
            if scene.frame_end < last:
                scene.frame_end = last
        self.report({"INFO"}, "Imported %s: %d joints, %d frames at %.4g fps.%s"
                    % (name, joints, frame_count, take_fps, said))
        return {"FINISHED"}


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
    """One progress bar over the import's stages (parse, convert, create, keys),
    each given a share of the bar by its usual time."""

    SHARES = (("parse", 0.3), ("convert", 0.1), ("create", 0.2), ("keys", 0.4))

    def __init__(self, wm):
        self.wm = wm
        self.start = {}
        total = 0.0
        for stage, share in self.SHARES:
            self.start[stage] = (total, share)
            total += share
        wm.progress_begin(0, 1000)

    def tell(self, stage, fraction):
        begin, share = self.start.get(stage, (0.0, 0.0))
        self.wm.progress_update(int(1000 * (begin + share * min(1.0, max(0.0, fraction)))))

    def end(self):
        self.wm.progress_end()


def menu_import(self, context):
    self.layout.operator(MOTION_MATCHING_OT_import_bvh.bl_idname, text="Motion Capture for Motion Matching (.bvh)")


classes = (MOTION_MATCHING_OT_import_bvh,)
