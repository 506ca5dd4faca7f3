"""Live preview: pose the armature as the timeline plays or scrubs, with the
pose the bake would key on that frame, without writing keys.

Turning preview on runs the bake's simulation once over the scene's range, with
the scene's bake settings (the ones the Bake button uses), and keeps the result
in memory; a frame-change handler then sets each pose bone's channels from it,
so scrubbing backwards shows exactly what playing forward shows. The armature's
action is set aside while previewing (an action would override the pose) and
given back when preview is turned off. On a character chosen as the Bake
armature (not the database skeleton) the simulation is Bake's for that rig and
each frame sets the character's pose bones in bulk (bridge.preview.character).
A viewport overlay draws the controller's wanted future path, the matched path
from the database, and foot contacts and locks; it does nothing in background
mode and never raises.

What was set aside lives in the scene's settings as ID pointers (armature,
action) plus the bones' rotation modes, so it is saved with the file and
follows renames of the scene, the armature or the action; the pointer also
keeps the action alive with no other user. Only the simulation is in memory,
keyed by a token stored on the scene. A file opened with a preview on cannot
have its simulation back: opening it ends the preview (load_post handler).
"""

import json
import uuid

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ..bake import bake as bake_bridge
from ..blender import bake_settings, compat
from . import character, inputs as preview_inputs, overlay
from ..blender.scene_data import scene_fps

_state = {}          # preview key -> dict(result, frames, locs, rots, skeleton, report)
_draw_handle = []


def active(scene):
    return bool(scene.motion_matching.preview_active)


def _simulation(scene):
    """The in-memory simulation posing ``scene`` (None when there is none)."""
    mm = scene.motion_matching
    if not mm.preview_active or not mm.preview_key:
        return None
    return _state.get(mm.preview_key)


def start(context, settings=None):
    """Simulate with the scene's bake settings (or ``settings``, a
    core.bake.BakeSettings) and begin posing; returns the BakeReport of the
    simulation. With the scene's settings the preview then follows edits
    (bridge.preview.follow); with others it shows them until stopped."""
    scene = context.scene
    mm = scene.motion_matching
    ctrl = bake_bridge.controller_object(context)
    armature = bake_bridge.bake_target(context)
    frame = scene.frame_current
    follows = settings is None
    try:
        head = preview_inputs.head(scene)
        database = bake_bridge.ensure_database(context)
        posing = character.posing_for(context, armature, database[0])     # None: the database skeleton
        sampled = bake_bridge.sample_controller(
            context, ctrl, bake_bridge.sample_frames(scene, database[0])[1])
        output = bake_bridge.run(context, ctrl, armature, settings or bake_settings.to_core(mm.bake_settings),
                                 tag_query=mm.tag_query, database=database, sampled=sampled,
                                 moves=preview_inputs.moves(scene),
                                 **character.path_options(posing))
    finally:
        scene.frame_set(frame)
    if posing is None:
        bake_bridge.check_skeleton(armature, output.skeleton)
    posed = character.posed(output, posing, scene_fps(scene))
    # Rebuilding the database first changes its hash: digest the inputs as simulated.
    if database[1]:
        head = preview_inputs.head(scene)
    inputs = (head, preview_inputs.path_digest(sampled)) if follows else None
    key = uuid.uuid4().hex
    _state[key] = _simulation_of(output, inputs, posed)
    _take_armature(mm, armature, _quaternion_bones(output, posed), posed is not None)
    mm.preview_key = key
    mm.preview_active = True
    apply(scene)
    _ensure_overlay()
    return output.report


def _simulation_of(output, inputs, posed=None):
    """The state kept for a simulation; ``posed``: bridge.preview.character.posed
    (a character's pose per frame), None for the database skeleton."""
    return dict(result=output.result, frames=output.frames, locs=output.locations, rots=output.rotations,
                skeleton=output.skeleton, inputs=inputs, posed=posed)


def _quaternion_bones(output, posed):
    """The bones posed in quaternions: the skeleton's, or those Bake keys on a character."""
    return output.skeleton.names if posed is None else posed["keyed"]


def _take_armature(mm, armature, names, at_rest=False):
    """Set the armature's action and rotation modes aside (for Stop) and pose the
    bones ``names`` in quaternions (``at_rest``: the other channels at rest, as
    Bake leaves a character)."""
    ad = armature.animation_data or armature.animation_data_create()
    mm.preview_armature = armature
    mm.preview_action = ad.action
    modes = {pb.name: pb.rotation_mode for pb in armature.pose.bones}
    ad.action = None
    for name in names:
        armature.pose.bones[name].rotation_mode = "QUATERNION"
    if at_rest:
        character.at_rest(armature)
        modes[character.FK_SWITCHES] = character.to_fk(armature, names)
    mm.preview_modes = json.dumps(modes)


def replace(scene, output, inputs, armature, posed=None):
    """Show a new simulation of the same preview (made from ``inputs``, see
    :func:`inputs_of`; ``posed``: see :func:`_simulation_of`) on ``armature``:
    when the armature chosen changed, the previous one gets its action back
    and the new one's is set aside."""
    mm = scene.motion_matching
    key = mm.preview_key
    names = _quaternion_bones(output, posed)
    if armature != mm.preview_armature:
        _give_back(mm)
        _take_armature(mm, armature, names, posed is not None)
    else:
        for name in names:
            armature.pose.bones[name].rotation_mode = "QUATERNION"
    _state[key] = _simulation_of(output, inputs, posed)
    apply(scene)


def simulation_result(scene):
    """The core BakeResult shown (None when there is none)."""
    st = _simulation(scene)
    return None if st is None else st["result"]


def inputs_of(scene):
    """(head digest, path digest) the preview's simulation was made from; None
    when it follows no edits (started with other settings than the scene's)."""
    st = _simulation(scene)
    return None if st is None else st.get("inputs")


def _give_back(mm):
    armature, action = mm.preview_armature, mm.preview_action
    try:
        modes = json.loads(mm.preview_modes) if mm.preview_modes else {}
    except ValueError:
        modes = {}
    if armature is not None and armature.type == "ARMATURE":
        bones = armature.pose.bones
        for name, mode in (modes.items() if isinstance(modes, dict) else ()):
            if name in bones:
                try:
                    bones[name].rotation_mode = mode
                except TypeError:   # not a rotation mode (a hand-edited file): leave the bone as it is
                    pass
        if isinstance(modes, dict):
            character.give_back_fk(armature, modes.get(character.FK_SWITCHES))
        if action is not None:
            compat.assign_action(armature, action)
    mm.preview_armature = None
    mm.preview_action = None
    mm.preview_modes = ""


def stop(scene):
    """Give the armature its action and rotation modes back and stop posing."""
    mm = scene.motion_matching
    _state.pop(mm.preview_key, None)
    _give_back(mm)
    mm.preview_key = ""
    mm.preview_active = False
    if not _state:
        _remove_overlay()


def pose_at(scene, frame):
    """(locations (J, 3), quaternions (J, 4)) of the previewed pose on ``frame``,
    exactly as the bake keys it on whole frames (blended between steps)."""
    st = _simulation(scene)
    i = _frame_index(st, frame)
    return st["locs"][i], st["rots"][i]


def _frame_index(st, frame):
    frames = st["frames"]
    return int(np.clip(np.rint(frame - frames[0]), 0, len(frames) - 1))


def apply(scene):
    st = _simulation(scene)
    if st is None:
        return
    armature = scene.motion_matching.preview_armature
    if armature is None:
        return
    posed = st.get("posed")
    if posed is not None:
        character.apply(armature, posed, _frame_index(st, scene.frame_current))
        return
    locs, rots = pose_at(scene, scene.frame_current)
    bones = armature.pose.bones
    for j, name in enumerate(st["skeleton"].names):
        pb = bones[name]
        pb.location = locs[j]
        pb.rotation_quaternion = rots[j]


@persistent
def on_frame_change(scene, depsgraph=None):
    mm = getattr(scene, "motion_matching", None)
    if mm is None or not mm.preview_active or preview_inputs.busy:
        return
    try:
        apply(scene)
    except (ReferenceError, KeyError):
        # The armature lost a bone the simulation poses: stop posing, keep what
        # was set aside for Stop.
        _state.pop(mm.preview_key, None)


@persistent
def on_load(*_args):
    # Cached simulations and retarget set-ups belong to the file that made them.
    _state.clear()
    character.forget()
    _remove_overlay()


@persistent
def on_load_post(*_args):
    """A file saved with a preview on has lost its simulation: end the preview
    there, giving the armature its action back."""
    for scene in bpy.data.scenes:
        mm = getattr(scene, "motion_matching", None)
        if mm is not None and (mm.preview_active or mm.preview_action is not None) and _simulation(scene) is None:
            stop(scene)


# ---------------------------------------------------------------------------
# Viewport overlay (drawn by bridge.preview.overlay)


def overlay_lines(scene, horizon_s=1.0):
    """World-space polylines for the overlay: (wanted future path, matched path
    from the database, toe points, lock flags). Pure data, for drawing and tests."""
    st = _simulation(scene)
    if st is None:
        return None
    return overlay.lines_of(scene, st, bake_bridge.database_store.load(scene), horizon_s)


def move_marks(scene):
    """[(world point on the simulated path, label)] for each move along the
    timeline that falls in the previewed frames; [] without a preview or moves."""
    st = _simulation(scene)
    if st is None:
        return []
    return overlay.move_marks_of(scene, st, preview_inputs.moves(scene))


def _draw():
    try:
        lines = overlay_lines(bpy.context.scene)
        if lines is not None:
            overlay.draw_overlay(lines, move_marks(bpy.context.scene))
    except Exception:  # noqa: BLE001  (an overlay must never break drawing)
        pass


def _draw_labels():
    try:
        overlay.draw_labels(bpy.context, move_marks(bpy.context.scene))
    except Exception:  # noqa: BLE001  (an overlay must never break drawing)
        pass


def _ensure_overlay():
    if bpy.app.background or _draw_handle:
        return
    _draw_handle.append(bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW"))
    _draw_handle.append(bpy.types.SpaceView3D.draw_handler_add(_draw_labels, (), "WINDOW", "POST_PIXEL"))


def _remove_overlay():
    while _draw_handle:
        bpy.types.SpaceView3D.draw_handler_remove(_draw_handle.pop(), "WINDOW")


def register():
    if on_frame_change not in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.append(on_frame_change)
    if on_load not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(on_load)
    if on_load_post not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(on_load_post)


def unregister():
    # bpy.data is restricted while Blender itself starts or quits: nothing to give back then.
    for scene in getattr(bpy.data, "scenes", ()):
        mm = getattr(scene, "motion_matching", None)
        if mm is not None and (mm.preview_active or mm.preview_action is not None):
            stop(scene)
    _state.clear()
    _remove_overlay()
    if on_frame_change in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.remove(on_frame_change)
    if on_load in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(on_load)
    if on_load_post in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(on_load_post)
