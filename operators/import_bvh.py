"""motion_matching.import_bvh: BVH motion capture to an armature with one action."""

import os

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..core import bvh as core_bvh
from ..core.errors import MotionMatchingError
from ..motion_matching_addon import bvh_build, virtual_root
from ..motion_matching_addon.scene_data import scene_fps
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
        try:
            data = core_bvh.read_bvh(self.filepath)
            motion = core_bvh.to_blender(data, self.global_scale, self.axis_forward, self.axis_up, self.handedness)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        scene = context.scene
        use_fps_scale = self.use_fps_scale and not self.update_scene_fps
        frames = key_frames(data.frame_count, data.fps, self.frame_start, use_fps_scale, scene_fps(scene))
        name = bpy.path.display_name_from_filepath(self.filepath) or "BVH"
        if context.mode != "OBJECT" and context.view_layer.objects.active is not None:
            bpy.ops.object.mode_set(mode="OBJECT")
        obj = None
        try:
            obj = bvh_build.build(context, name, motion, frames)
            action = obj.animation_data.action
            # The rate of the action's timeline: the take's, or the scene's when spread to it.
            action.motion_matching.fps = scene_fps(scene) if use_fps_scale else data.fps
            action.motion_matching.source_path = os.path.abspath(self.filepath)
            if self.add_virtual_root:
                virtual_root.add_virtual_root(context, obj, **self.root_keywords())
        except (MotionMatchingError, RuntimeError) as ex:
            if obj is not None:
                bvh_build.remove_created({"obj": obj, "action": obj.animation_data.action, "arm": obj.data})
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        # The scene changes only once the take is in.
        if self.update_scene_fps:
            fps = data.fps
            scene.render.fps = max(1, int(round(fps)))
            scene.render.fps_base = scene.render.fps / fps
        if self.update_scene_duration:
            last = int(np.ceil(frames[-1] - 1e-6))
            if scene.frame_end < last:
                scene.frame_end = last
        self.report({"INFO"}, "Imported %s: %d joints, %d frames at %.4g fps."
                    % (name, len(motion.names), data.frame_count, data.fps))
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(MOTION_MATCHING_OT_import_bvh.bl_idname, text="Motion Capture for Motion Matching (.bvh)")


classes = (MOTION_MATCHING_OT_import_bvh,)
