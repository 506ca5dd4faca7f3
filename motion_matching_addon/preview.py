"""Live preview: pose the armature as the timeline plays or scrubs, with the
pose the bake would key on that frame, without writing keys.

Turning preview on runs the bake's simulation once over the scene's range and
keeps the result in memory; a frame-change handler then sets each pose bone's
channels from it, so scrubbing backwards shows exactly what playing forward
shows. The armature's action is set aside while previewing (an action would
override the pose) and given back when preview is turned off. A viewport
overlay draws the controller's wanted future path, the matched path from the
database, and foot contacts and locks; it does nothing in background mode and
never raises.
"""

import bpy
import numpy as np
from bpy.app.handlers import persistent

from ..core import bake as core_bake
from ..core import transforms as tf
from . import bake_bridge, compat

_state = {}          # scene name -> dict(result, frames, locs, rots, skeleton, armature, action, report)
_draw_handle = []


def active(scene):
    return scene.name in _state


def start(context, settings=None):
    """Simulate and begin posing; returns the report dict of the simulation."""
    scene = context.scene
    mm = scene.motion_matching
    from ..operators.bake import _controller, _target

    ctrl = _controller(context, "")
    armature = _target(context, "")
    frame = scene.frame_current
    try:
        result, frames, _times, locs, rots, skeleton, report = bake_bridge.run(
            context, ctrl, armature, settings or core_bake.BakeSettings(), tag_query=mm.tag_query)
    finally:
        scene.frame_set(frame)
    bake_bridge.check_skeleton(armature, skeleton)
    ad = armature.animation_data or armature.animation_data_create()
    previous = ad.action
    if previous is not None:
        previous.use_fake_user = True
    _state[scene.name] = dict(result=result, frames=frames, locs=locs, rots=rots, skeleton=skeleton,
                              armature=armature.name, action=previous.name if previous else "",
                              modes={pb.name: pb.rotation_mode for pb in armature.pose.bones})
    ad.action = None
    for name in skeleton.names:
        armature.pose.bones[name].rotation_mode = "QUATERNION"
    mm.preview_active = True
    apply(scene)
    _ensure_overlay()
    return report


def stop(scene):
    """Give the armature its action back and stop posing."""
    st = _state.pop(scene.name, None)
    scene.motion_matching.preview_active = False
    if st is None:
        return
    armature = bpy.data.objects.get(st["armature"])
    if armature is not None:
        for name, mode in st["modes"].items():
            if name in armature.pose.bones:
                armature.pose.bones[name].rotation_mode = mode
        action = bpy.data.actions.get(st["action"]) if st["action"] else None
        if action is not None:
            compat.assign_action(armature, action)
    if not _state:
        _remove_overlay()


def pose_at(scene, frame):
    """(locations (J, 3), quaternions (J, 4)) of the previewed pose on ``frame``,
    exactly as the bake keys it on whole frames (blended between steps)."""
    st = _state[scene.name]
    frames = st["frames"]
    i = int(np.clip(np.rint(frame - frames[0]), 0, len(frames) - 1))
    return st["locs"][i], st["rots"][i]


def apply(scene):
    st = _state.get(scene.name)
    if st is None:
        return
    armature = bpy.data.objects.get(st["armature"])
    if armature is None:
        return
    locs, rots = pose_at(scene, scene.frame_current)
    bones = armature.pose.bones
    for j, name in enumerate(st["skeleton"].names):
        pb = bones[name]
        pb.location = locs[j]
        pb.rotation_quaternion = rots[j]


@persistent
def on_frame_change(scene, depsgraph=None):
    if scene.name in _state:
        try:
            apply(scene)
        except (ReferenceError, KeyError):
            _state.pop(scene.name, None)


@persistent
def on_load(*_args):
    # Cached simulations belong to the file that made them.
    _state.clear()
    _remove_overlay()


# ---------------------------------------------------------------------------
# Viewport overlay


def overlay_lines(scene, horizon_s=1.0):
    """World-space polylines for the overlay: (wanted future path, matched path
    from the database, toe points, lock flags). Pure data, for drawing and tests."""
    st = _state.get(scene.name)
    if st is None:
        return None
    res = st["result"]
    arm = bpy.data.objects.get(st["armature"])
    mw = np.asarray(arm.matrix_world, dtype=np.float64) if arm else np.eye(4)
    frames = st["frames"]
    fps = scene.render.fps / scene.render.fps_base
    t = (scene.frame_current - frames[0]) / fps
    s = int(np.clip(np.rint(t / res.dt), 0, len(res.rows) - 1))
    k = int(round(horizon_s / res.dt))
    wanted = res.sim_pos[s:s + k + 1]
    # Matched path: the playing row's own future root motion, placed at the root.
    db_state = bake_bridge.database_store.load(scene)
    arrays = db_state[1]
    rp, rq = np.asarray(arrays["root_positions"]), np.asarray(arrays["root_quats"])
    row = int(res.rows[s])
    db = db_state[0]
    end = min(row + k, int(db.clip_offsets[db.clip_index[row] + 1]) - 1)
    local = tf.quat_rotate(tf.quat_conjugate(rq[row]), rp[row:end + 1] - rp[row])
    matched = tf.quat_rotate(res.root_quat[s], local) + res.root_pos[s]

    def world(p):
        p = np.asarray(p, dtype=np.float64).reshape(-1, 3)
        return p @ mw[:3, :3].T + mw[:3, 3]

    toes = res.toes[s] if res.toes is not None else np.zeros((2, 3))
    return world(wanted), world(matched), world(toes), res.locked[s], res.contacts[s]


# Overlay colours (RGBA): wanted path, matched path, toe locked / in contact / free.
WANTED_COLOR = (0.2, 0.8, 1.0, 1.0)
MATCHED_COLOR = (1.0, 0.6, 0.1, 1.0)
LOCKED_COLOR = (1.0, 0.2, 0.2, 1.0)
CONTACT_COLOR = (0.2, 1.0, 0.3, 1.0)
FREE_COLOR = (0.6, 0.6, 0.6, 1.0)


def _point_shader(gpu):
    """Blender's shader for sized points: POINT_UNIFORM_COLOR where it exists
    (newer Blenders deprecate points drawn with UNIFORM_COLOR), else UNIFORM_COLOR."""
    try:
        return gpu.shader.from_builtin("POINT_UNIFORM_COLOR")
    except ValueError:
        return gpu.shader.from_builtin("UNIFORM_COLOR")


def draw_overlay(lines):
    """Draw :func:`overlay_lines` output in the current GPU context: both paths
    as 2-pixel polylines, the toes as 8-pixel points. Wide lines go through
    POLYLINE_UNIFORM_COLOR (UNIFORM_COLOR wide lines are deprecated)."""
    import gpu
    from gpu_extras.batch import batch_for_shader

    wanted, matched, toes, locked, contacts = lines
    line_shader = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    line_shader.uniform_float("viewportSize", gpu.state.viewport_get()[2:])
    line_shader.uniform_float("lineWidth", 2.0)
    for pts, color in ((wanted, WANTED_COLOR), (matched, MATCHED_COLOR)):
        if len(pts) > 1:
            batch = batch_for_shader(line_shader, "LINE_STRIP", {"pos": np.asarray(pts, dtype=np.float32)})
            line_shader.uniform_float("color", color)
            batch.draw(line_shader)
    point_shader = _point_shader(gpu)
    gpu.state.point_size_set(8.0)
    for i in range(2):
        color = LOCKED_COLOR if locked[i] else (CONTACT_COLOR if contacts[i] else FREE_COLOR)
        batch = batch_for_shader(point_shader, "POINTS", {"pos": np.asarray(toes[i:i + 1], dtype=np.float32)})
        point_shader.uniform_float("color", color)
        batch.draw(point_shader)
    gpu.state.point_size_set(1.0)


def _draw():
    try:
        lines = overlay_lines(bpy.context.scene)
        if lines is not None:
            draw_overlay(lines)
    except Exception:  # noqa: BLE001  (an overlay must never break drawing)
        pass


def _ensure_overlay():
    if bpy.app.background or _draw_handle:
        return
    _draw_handle.append(bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW"))


def _remove_overlay():
    while _draw_handle:
        bpy.types.SpaceView3D.draw_handler_remove(_draw_handle.pop(), "WINDOW")


def register():
    if on_frame_change not in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.append(on_frame_change)
    if on_load not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(on_load)


def unregister():
    for scene_name in list(_state):
        scene = bpy.data.scenes.get(scene_name)
        if scene is not None:
            stop(scene)
    _state.clear()
    _remove_overlay()
    if on_frame_change in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.remove(on_frame_change)
    if on_load in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(on_load)
