"""Property groups: one prefixed pointer per owner (Scene, Action, Armature)."""

import bpy
from bpy.props import (
    CollectionProperty, FloatProperty, FloatVectorProperty, PointerProperty, StringProperty,
)


class MOTION_MATCHING_PG_tpose_bone(bpy.types.PropertyGroup):
    """One joint of a stored T-pose: its world rotation in Blender's axes."""

    # name (built in): the joint or bone name
    rotation: FloatVectorProperty(name="Rotation", size=4, default=(1.0, 0.0, 0.0, 0.0),
                                  subtype="QUATERNION")
    head: FloatVectorProperty(name="Head", size=3, subtype="TRANSLATION")


class MOTION_MATCHING_PG_armature(bpy.types.PropertyGroup):
    root_bone: StringProperty(name="Root Bone", description="The virtual root (simulation) bone")
    hips_bone: StringProperty(name="Hips Bone", description="The bone the virtual root follows")
    tpose_source: StringProperty(name="T-Pose Source", description="Where the stored T-pose came from",
                                 subtype="FILE_PATH")
    tpose: CollectionProperty(type=MOTION_MATCHING_PG_tpose_bone,
                              description="World rotations of each joint in T-pose, for retargeting")


class MOTION_MATCHING_PG_action(bpy.types.PropertyGroup):
    fps: FloatProperty(name="Source Rate", description="Frames per second of the captured take (0: the scene's)",
                       default=0.0, min=0.0)
    source_path: StringProperty(name="Source", description="The file this action was imported from",
                                subtype="FILE_PATH")


class MOTION_MATCHING_PG_scene(bpy.types.PropertyGroup):
    pass


CLASSES = (
    MOTION_MATCHING_PG_tpose_bone,
    MOTION_MATCHING_PG_armature,
    MOTION_MATCHING_PG_action,
    MOTION_MATCHING_PG_scene,
)

POINTERS = (
    (bpy.types.Armature, MOTION_MATCHING_PG_armature),
    (bpy.types.Action, MOTION_MATCHING_PG_action),
    (bpy.types.Scene, MOTION_MATCHING_PG_scene),
)


def attach():
    for owner, group in POINTERS:
        owner.motion_matching = PointerProperty(type=group)


def detach():
    for owner, _group in POINTERS:
        del owner.motion_matching
