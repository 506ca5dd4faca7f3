"""Property groups: one prefixed pointer per owner (Scene, Action, Armature, Object).

``scene.motion_matching``: the database inputs (actions, feature set, weights)
and its state, and the bake's controller, armature and settings
(bake_settings.py); ``action.motion_matching``: the take's frame rate and its
tags (the dance card); ``armature.motion_matching``: root/hips bones, a T-pose
and the bone map (retarget_props.py); ``object.motion_matching``: a
controller's moves along the timeline (frame, tag query).
"""

import bpy
from bpy.props import (
    BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
    IntProperty, PointerProperty, StringProperty,
)

from . import store as database_store
from ..blender.bake_settings import MOTION_MATCHING_PG_bake_settings
from ...core.bake.settings import GROUND_TOOLTIP
from ..blender.retarget_props import MOTION_MATCHING_PG_bone_map, MOTION_MATCHING_PG_retarget


# Mirror Takes was a switch: a file saved with it off stored 0 (Off), with it on 1
# (Automatic, the old default's successor), so the numbers must stay.
MIRROR_TAKES_ITEMS = (
    ("OFF", "Off", "Build from the takes alone", 0),
    ("AUTO", "Automatic", "Mirror when the skeleton's sides pair; otherwise build without mirror images and say why",
     1),
    ("ON", "On", "Mirror every take; refuse to build when the skeleton cannot be mirrored", 2),
)


def mark_stale(scene):
    """Say that the scene's database no longer matches its inputs (if it has one
    built from them: an imported database does not depend on the list)."""
    settings = getattr(scene, "motion_matching", None) if scene else None
    if settings is not None and settings.database_built and not settings.database_stale \
            and not database_store.is_imported(scene):
        settings.database_stale = True


def _mark_stale(self, context):
    mark_stale(getattr(context, "scene", None))


class MOTION_MATCHING_PG_tpose_bone(bpy.types.PropertyGroup):
    """One joint of a stored T-pose: its world rotation in Blender's axes."""

    # name (built in): the joint or bone name
    rotation: FloatVectorProperty(name="Rotation", size=4, default=(1.0, 0.0, 0.0, 0.0),
                                  subtype="QUATERNION")
    head: FloatVectorProperty(name="Head", size=3, subtype="TRANSLATION")


class MOTION_MATCHING_PG_armature(bpy.types.PropertyGroup):
    root_bone: StringProperty(name="Root Bone", description="The virtual root (simulation) bone")
    hips_bone: StringProperty(name="Hips Bone", description="The bone the virtual root follows")
    root_note: StringProperty(name="Root Note", description="How the virtual root was made, in one sentence")
    tpose_source: StringProperty(name="T-Pose Source", description="Where the stored T-pose came from",
                                 subtype="FILE_PATH")
    tpose: CollectionProperty(type=MOTION_MATCHING_PG_tpose_bone,
                              description="World rotations of each joint in T-pose, for retargeting")
    bone_map: CollectionProperty(type=MOTION_MATCHING_PG_bone_map,
                                 description="Canonical humanoid joint -> bone, for retargeting")
    active_bone_map: IntProperty(name="Active Joint", default=0)


class MOTION_MATCHING_PG_tag(bpy.types.PropertyGroup):
    """A named frame range of an action: one move of the dance card."""

    # name (built in): the move, e.g. walk, run, stop_left
    frame_start: IntProperty(name="Start", description="First frame of the move (action frames)",
                             update=_mark_stale)
    frame_end: IntProperty(name="End", description="Last frame of the move (action frames, included)",
                           update=_mark_stale)


class MOTION_MATCHING_PG_action(bpy.types.PropertyGroup):
    fps: FloatProperty(name="Take Rate",
                       description="Frames per second of this action's timeline (0: the scene's rate)",
                       default=0.0, min=0.0, update=_mark_stale)
    source_path: StringProperty(name="Source", description="The file this action was imported from",
                                subtype="FILE_PATH")
    tags: CollectionProperty(type=MOTION_MATCHING_PG_tag, description="Named frame ranges (the dance card)")
    active_tag: IntProperty(name="Active Tag", default=0)


def _poll_armature(self, obj):
    return obj.type == "ARMATURE"


def _poll_mesh(self, obj):
    return obj.type == "MESH"


class MOTION_MATCHING_PG_database_entry(bpy.types.PropertyGroup):
    """One action of the database and the armature it plays on."""

    action: PointerProperty(type=bpy.types.Action, name="Action", update=_mark_stale)
    armature: PointerProperty(type=bpy.types.Object, name="Armature", poll=_poll_armature,
                              description="The armature (skeleton) the action plays on", update=_mark_stale)


class MOTION_MATCHING_PG_crowd_pair(bpy.types.PropertyGroup):
    """One character of a crowd and the controller it follows."""

    controller: PointerProperty(type=bpy.types.Object, name="Controller", description="The object this character follows")
    armature: PointerProperty(type=bpy.types.Object, name="Character", poll=_poll_armature,
                              description="The armature baked along the controller")


FEATURE_KINDS = (
    ("bone_position", "Bone Position", "Bone positions in the root's ground frame"),
    ("bone_velocity", "Bone Velocity", "Bone velocities in the root's ground frame"),
    ("trajectory_position", "Trajectory Position", "Future (or past) root positions, on the ground"),
    ("trajectory_direction", "Trajectory Direction", "Future (or past) root facing, on the ground"),
)


class MOTION_MATCHING_PG_feature_group(bpy.types.PropertyGroup):
    """A group of features that share one normalisation scale and one weight."""

    # name (built in)
    kind: EnumProperty(name="Kind", items=FEATURE_KINDS, update=_mark_stale)
    bones: StringProperty(name="Bones", description="Comma-separated bone names (for bone kinds)",
                          update=_mark_stale)
    times: StringProperty(name="Times", description="Comma-separated seconds; negative for the past "
                          "(for trajectory kinds)", update=_mark_stale)
    weight: FloatProperty(name="Weight", default=1.0, min=0.0, soft_max=10.0, update=_mark_stale,
                          description="How much this group counts in the search")


class MOTION_MATCHING_PG_move(bpy.types.PropertyGroup):
    """One move of the dance card: what the capture session was asked to record."""

    # name (built in): the tag name
    duration: FloatProperty(name="Duration", description="Seconds of this move the card asks for (0: any)",
                            default=0.0, min=0.0, unit="TIME_ABSOLUTE")
    description: StringProperty(name="Description")


class MOTION_MATCHING_PG_timeline_move(bpy.types.PropertyGroup):
    """One move along the timeline: from this frame the bake searches the rows of this tag query."""

    frame: FloatProperty(name="Frame", description="Scene frame where this tag query starts", default=1.0,
                         step=100, precision=1)
    query: StringProperty(name="Tag Query", default="",
                          description="The tag query from this frame on, e.g. 'run'; empty: back to the scene's")


class MOTION_MATCHING_PG_object(bpy.types.PropertyGroup):
    moves: CollectionProperty(type=MOTION_MATCHING_PG_timeline_move,
                              description="Where the bake's tag query changes while following this controller")
    active_move: IntProperty(name="Active Move", default=0)


class MOTION_MATCHING_PG_file_rule(bpy.types.PropertyGroup):
    """One file-name rule of the dance card: files matching a pattern get a tag on every frame."""

    files: StringProperty(name="Files", description="Pattern of file names, e.g. *walk-turn-left* (ignoring case)")
    tag: StringProperty(name="Tag", description="The move those files are tagged with, e.g. turn_left")


class MOTION_MATCHING_PG_scene(bpy.types.PropertyGroup):
    dance_card: CollectionProperty(type=MOTION_MATCHING_PG_move, description="The moves to capture")
    dance_card_rules: CollectionProperty(type=MOTION_MATCHING_PG_file_rule,
                                         description="The dance card's file-name rules")
    dance_card_title: StringProperty(name="Dance Card")
    entries: CollectionProperty(type=MOTION_MATCHING_PG_database_entry)
    active_entry: IntProperty(name="Active Action", default=0)

    feature_groups: CollectionProperty(type=MOTION_MATCHING_PG_feature_group)
    active_feature_group: IntProperty(default=0)
    left_foot: StringProperty(name="Left Foot", description="Left ankle bone (empty: found by name)",
                              update=_mark_stale)
    right_foot: StringProperty(name="Right Foot", description="Right ankle bone (empty: found by name)",
                               update=_mark_stale)
    left_toe: StringProperty(name="Left Toe", description="Left toe bone, for contacts (empty: found by name)",
                             update=_mark_stale)
    right_toe: StringProperty(name="Right Toe", description="Right toe bone, for contacts (empty: found by name)",
                              update=_mark_stale)
    hips: StringProperty(name="Hips", description="Hips bone (empty: found by name)", update=_mark_stale)
    responsiveness: FloatProperty(
        name="Responsiveness", default=1.0, min=0.0, soft_max=5.0, update=_mark_stale,
        description="Weight of the trajectory against the pose: higher follows the path more eagerly, "
                    "lower keeps the motion smoother")
    quality: FloatProperty(
        name="Quality", default=1.0, min=0.0, soft_max=5.0, update=_mark_stale,
        description="Weight of the pose against the trajectory: higher favours continuous poses")
    exclude_tags: StringProperty(
        name="Exclude Tags", default="exclude, tpose, t-pose, calibration, mistake", update=_mark_stale,
        description="Frames tagged with any of these names are left out of the database")
    contact_speed: FloatProperty(name="Contact Speed", default=0.15, min=0.0, soft_max=1.0, unit="VELOCITY",
                                 description="A toe slower than this (m/s) is in contact", update=_mark_stale)
    contact_filter: FloatProperty(name="Contact Filter", default=0.1, min=0.0, soft_max=0.5, unit="TIME_ABSOLUTE",
                                  description=("Seconds: shorter contacts are dropped, shorter toe rolls between "
                                               "two contacts bridged"),
                                  update=_mark_stale)
    mirror_takes: EnumProperty(
        name="Mirror Takes", items=MIRROR_TAKES_ITEMS, default="AUTO", update=_mark_stale,
        description="Also put each take's mirror image in the database: left and right swapped, twice the rows")
    tag_query: StringProperty(
        name="Tag Query", default="",
        description="Restrict the search to tagged frames, e.g. 'walk or run', '(walk or run) and not stop'")

    controller: PointerProperty(type=bpy.types.Object, name="Controller",
                                description="The object whose path (and, when strafing, rotation) the character follows")
    ground: PointerProperty(type=bpy.types.Object, name="Ground", poll=_poll_mesh, description=GROUND_TOOLTIP)
    bake_armature: PointerProperty(type=bpy.types.Object, name="Bake Onto", poll=_poll_armature,
                                   description="Armature that receives the baked action (empty: the database's armature)")
    bake_settings: PointerProperty(type=MOTION_MATCHING_PG_bake_settings,
                                   description="The bake's settings (the bake and the live preview use these)")
    last_bake_report: StringProperty(name="Last Bake", default="")
    preview_active: BoolProperty(name="Preview", default=False,
                                 description="The armature is posed live from a simulation (no keys)")
    # What the preview set aside, kept as ID pointers in the file so that saving,
    # reopening and renaming the scene, the armature or the action keep them.
    preview_armature: PointerProperty(type=bpy.types.Object, options={"HIDDEN"})
    preview_action: PointerProperty(type=bpy.types.Action, options={"HIDDEN"})
    preview_modes: StringProperty(options={"HIDDEN"}, description="Bone rotation modes before the preview (JSON)")
    preview_key: StringProperty(options={"HIDDEN"}, description="Which simulation in memory poses this scene")

    database_built: BoolProperty(name="Database Built", default=False)
    database_stale: BoolProperty(name="Database Stale", default=False,
                                 description="An action or a setting changed since the database was built")
    database_summary: StringProperty(name="Database", default="")
    database_note: StringProperty(name="Database Note", default="",
                                  description="What the last build left out and why (empty: nothing)")
    retarget: PointerProperty(type=MOTION_MATCHING_PG_retarget)
    crowd: CollectionProperty(type=MOTION_MATCHING_PG_crowd_pair, description="What Bake All bakes")
    active_crowd_pair: IntProperty(name="Active Pair", default=0)
    crowd_processes: IntProperty(name="Processes", default=0, min=0, soft_max=64,
                                 description="Blender processes Bake All bakes in side by side; 0: one per processor")


# The retarget and bake-settings groups (their modules' classes) are registered before these.
classes = (
    MOTION_MATCHING_PG_tpose_bone,
    MOTION_MATCHING_PG_armature,
    MOTION_MATCHING_PG_tag,
    MOTION_MATCHING_PG_action,
    MOTION_MATCHING_PG_database_entry,
    MOTION_MATCHING_PG_crowd_pair,
    MOTION_MATCHING_PG_feature_group,
    MOTION_MATCHING_PG_move,
    MOTION_MATCHING_PG_timeline_move,
    MOTION_MATCHING_PG_object,
    MOTION_MATCHING_PG_file_rule,
    MOTION_MATCHING_PG_scene,
)

POINTERS = (
    (bpy.types.Armature, MOTION_MATCHING_PG_armature),
    (bpy.types.Action, MOTION_MATCHING_PG_action),
    (bpy.types.Scene, MOTION_MATCHING_PG_scene),
    (bpy.types.Object, MOTION_MATCHING_PG_object),
)


def attach():
    """Give Armature, Action, Scene and Object their ``motion_matching`` pointer (after registering the classes)."""
    for owner, group in POINTERS:
        owner.motion_matching = PointerProperty(type=group)


def detach():
    for owner, _group in POINTERS:
        del owner.motion_matching
