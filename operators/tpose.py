"""motion_matching.load_tpose: keep a T-pose on an armature for retargeting."""

import os

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper, orientation_helper

from ..core.io import bvh_convert as core_bvh_convert, bvh_parse as core_bvh_parse
from ..core.maths import transforms as tf
from ..core.errors import MotionMatchingError
from ..bridge.blender import armature_data
from ..bridge.retarget import tpose as retarget_tpose


@orientation_helper(axis_forward="-Z", axis_up="Y")
class MOTION_MATCHING_OT_load_tpose(bpy.types.Operator, ImportHelper):
    """Read a T-pose from a BVH file (one frame of it) and keep it on the active armature for retargeting"""

    bl_idname = "motion_matching.load_tpose"
    bl_label = "Load T-Pose"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh", options={"HIDDEN"})
    global_scale: FloatProperty(name="Scale", description="Scale the BVH by this value",
                                min=0.0001, max=1000000.0, soft_min=0.001, soft_max=100.0, default=1.0)
    frame: IntProperty(name="Frame", description="Frame of the file that holds the T-pose (0: the first)",
                       default=0, min=0)
    handedness: EnumProperty(
        name="Handedness", description="Coordinate system the file was written in",
        items=(("RIGHT", "Right-Handed", "Used as is"), ("LEFT", "Left-Handed", "Mirrored along the forward axis")),
        default="RIGHT")

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("Select the armature that the T-pose belongs to")
            return False
        return True

    def execute(self, context):
        obj = context.active_object
        try:
            data = core_bvh_parse.read_bvh(self.filepath)
            if self.frame >= data.frame_count:
                raise MotionMatchingError("%s has %d frames; frame %d does not exist."
                                          % (os.path.basename(self.filepath), data.frame_count, self.frame))
            # Only the T-pose frame is converted (and checked).
            data = data.frame_range(self.frame, self.frame + 1)
            motion = core_bvh_convert.to_blender(data, self.global_scale, self.axis_forward, self.axis_up, self.handedness)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        bones = obj.data.bones
        shared = [j for j, n in enumerate(motion.names) if n in bones]
        if not shared:
            self.report({"ERROR"}, "No joint of %s is named like a bone of %s."
                        % (os.path.basename(self.filepath), obj.name))
            return {"CANCELLED"}
        names = [motion.names[j] for j in shared]
        rest = armature_data.rest_matrices(obj.data, names)[:, :3, :3]
        world = motion.world_rotations()[0, shared]
        heads = motion.world_positions()[0, shared]
        # Stored in each bone's own axes: the rotation its pose matrix has in T-pose.
        pose = tf.compose(heads, world @ rest)
        if not np.isfinite(pose).all():
            self.report({"ERROR"}, "The T-pose of %s does not give finite joint rotations and positions."
                        % os.path.basename(self.filepath))
            return {"CANCELLED"}
        retarget_tpose.store_tpose(obj, names, pose, os.path.abspath(self.filepath))
        missing = len(bones) - len(names)
        self.report({"INFO"}, "Stored the T-pose of %d bones on %s%s." % (
            len(names), obj.name, "" if not missing else " (%d bones not in the file keep their rest)" % missing))
        return {"FINISHED"}


classes = (MOTION_MATCHING_OT_load_tpose,)
