"""Property groups of retargeting.

- ``armature.motion_matching.bone_map``: one item per canonical humanoid joint
  (the item's ``name``) with the bone it is mapped to (``bone``, empty when
  unmapped), shown and edited in the Retarget panel's list;
  ``armature.motion_matching.active_bone_map`` is the list's active row.
- ``scene.motion_matching.retarget``: the panel's choices (source, target,
  T-pose sources, root motion), copied into the operator when run from the panel.

properties.py declares those properties on its Armature and Scene groups;
register :data:`classes` first.
"""

import bpy
from bpy.props import (
    BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty,
)

TPOSE_SOURCES = (
    ("AUTO", "Automatic", "The stored T-pose if the armature has one, else its rest pose"),
    ("STORED", "Stored", "The T-pose stored on the armature (Load T-Pose or Make T-Pose)"),
    ("REST", "Rest Pose", "The armature's rest pose"),
    ("FRAME", "Frame", "The pose the armature has on a chosen frame"),
)
ROOT_MOTION = (
    ("HIPS", "Hips", "All of the motion goes on the target's hips; bones above them stay at rest"),
    ("ROOT", "Root Bone", "The source root's ground motion and turn go on the target's bone above the "
     "hips (its root); the hips move relative to it"),
)
PREFER = (
    ("DEF", "Deform Bones", "On a generated Rigify rig, map its deform (DEF-) bones"),
    ("FK", "FK Controls", "On a generated Rigify rig, map its FK controls"),
)


def _poll_armature(self, obj):
    return obj.type == "ARMATURE"


class MOTION_MATCHING_PG_bone_map(bpy.types.PropertyGroup):
    """One canonical humanoid joint and the bone mapped to it."""

    # name (built in): the canonical joint, e.g. LeftUpperArm
    bone: StringProperty(name="Bone", description="The bone mapped to this joint (empty: unmapped)")


class MOTION_MATCHING_PG_retarget(bpy.types.PropertyGroup):
    """The Retarget panel's choices."""

    source: PointerProperty(type=bpy.types.Object, name="Source", poll=_poll_armature,
                            description="The armature whose action is retargeted")
    target: PointerProperty(type=bpy.types.Object, name="Target", poll=_poll_armature,
                            description="The armature that receives the new action")
    source_tpose: EnumProperty(name="Source T-Pose", items=TPOSE_SOURCES, default="AUTO")
    source_tpose_frame: IntProperty(name="Source T-Pose Frame", default=1)
    target_tpose: EnumProperty(name="Target T-Pose", items=TPOSE_SOURCES, default="AUTO")
    target_tpose_frame: IntProperty(name="Target T-Pose Frame", default=1)
    root_motion: EnumProperty(name="Root Motion", items=ROOT_MOTION, default="HIPS")
    prefer: EnumProperty(name="Rigify Bones", items=PREFER, default="DEF",
                         description="Which bones of a generated Rigify rig automatic mapping picks")
    auto_scale: BoolProperty(name="Scale by Hips Height", default=True,
                             description="Scale the translation by the ratio of the hips heights")
    scale: FloatProperty(name="Scale", default=1.0, min=0.0001, soft_max=100.0,
                         description="Scale of the translation when not scaled by the hips height")


classes = (MOTION_MATCHING_PG_bone_map, MOTION_MATCHING_PG_retarget)
