"""The live preview's viewport overlay: what to draw, as world-space arrays,
and the drawing itself (gpu and blf; only ever called from draw handlers).

A simulation's state (bridge.preview.preview) holds the bake's result at its
own step; the scene frame shown picks the step. On a character the result lives
in the space Bake walks the database skeleton in (``posed["to_world"]``), else
in the previewed armature's object space.
"""

import numpy as np

from ...core.maths import transforms as tf
from ..blender.scene_data import scene_fps

# Overlay colours (RGBA): wanted path, matched path, toe locked / in contact / free, moves.
WANTED_COLOR = (0.2, 0.8, 1.0, 1.0)
MATCHED_COLOR = (1.0, 0.6, 0.1, 1.0)
LOCKED_COLOR = (1.0, 0.2, 0.2, 1.0)
CONTACT_COLOR = (0.2, 1.0, 0.3, 1.0)
FREE_COLOR = (0.6, 0.6, 0.6, 1.0)
MOVE_COLOR = (1.0, 0.85, 0.2, 1.0)


def _to_world(scene, st):
    posed = st.get("posed")
    if posed is not None:
        return posed["to_world"]
    arm = scene.motion_matching.preview_armature
    return np.asarray(arm.matrix_world, dtype=np.float64) if arm else np.eye(4)


def _world(mw, p):
    p = np.asarray(p, dtype=np.float64).reshape(-1, 3)
    return p @ mw[:3, :3].T + mw[:3, 3]


def _step(res, frames, fps, frame):
    """The simulation step shown on scene ``frame`` (clamped to the result)."""
    t = (frame - frames[0]) / fps
    return int(np.clip(np.rint(t / res.dt), 0, len(res.rows) - 1))


def lines_of(scene, st, database, horizon_s=1.0):
    """(wanted future path, matched path from the database, toe points, lock
    flags, contact flags) on the scene's current frame, in world space."""
    res = st["result"]
    mw = _to_world(scene, st)
    s = _step(res, st["frames"], scene_fps(scene), scene.frame_current)
    k = int(round(horizon_s / res.dt))
    wanted = res.sim_pos[s:s + k + 1]
    # Matched path: the playing row's own future root motion, placed at the root.
    rp, rq = database.root.positions, database.root.quats
    row = int(res.rows[s])
    db = database.matching
    end = min(row + k, int(db.clip_offsets[db.clip_index[row] + 1]) - 1)
    local = tf.quat_rotate(tf.quat_conjugate(rq[row]), rp[row:end + 1] - rp[row])
    matched = tf.quat_rotate(res.root_quat[s], local) + res.root_pos[s]
    toes = res.toes[s] if res.toes is not None else np.zeros((2, 3))
    return _world(mw, wanted), _world(mw, matched), _world(mw, toes), res.locked[s], res.contacts[s]


def move_marks_of(scene, st, moves):
    """[(world point, label)]: where the wanted path is on each move's frame,
    for the moves that fall within the simulated frames."""
    frames = st["frames"]
    if not moves or not len(frames):
        return []
    res = st["result"]
    mw = _to_world(scene, st)
    fps = scene_fps(scene)
    base = scene.motion_matching.tag_query.strip()
    out = []
    for frame, query in zip(moves.frames, moves.queries):
        if frames[0] <= frame <= frames[-1]:
            point = _world(mw, res.sim_pos[_step(res, frames, fps, frame)])[0]
            out.append((point, "%g: %s" % (frame, query or base or "any")))
    return out


def _point_shader(gpu):
    """Blender's shader for sized points: POINT_UNIFORM_COLOR where it exists
    (newer Blenders deprecate points drawn with UNIFORM_COLOR), else UNIFORM_COLOR."""
    try:
        return gpu.shader.from_builtin("POINT_UNIFORM_COLOR")
    except ValueError:
        return gpu.shader.from_builtin("UNIFORM_COLOR")


def _points(gpu, batch_for_shader, shader, points, color):
    batch = batch_for_shader(shader, "POINTS", {"pos": np.asarray(points, dtype=np.float32).reshape(-1, 3)})
    shader.uniform_float("color", color)
    batch.draw(shader)


def draw_overlay(lines, marks=()):
    """Draw :func:`lines_of` output in the current GPU context: both paths as
    2-pixel polylines, the toes as 8-pixel points, each move as a 12-pixel point.
    Wide lines go through POLYLINE_UNIFORM_COLOR (UNIFORM_COLOR wide lines are deprecated)."""
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
        _points(gpu, batch_for_shader, point_shader, toes[i:i + 1], color)
    if marks:
        gpu.state.point_size_set(12.0)
        _points(gpu, batch_for_shader, point_shader, [p for p, _label in marks], MOVE_COLOR)
    gpu.state.point_size_set(1.0)


def draw_labels(context, marks):
    """Each move's frame and query beside its point, in the region's pixels."""
    if not marks:
        return
    import blf
    from bpy_extras.view3d_utils import location_3d_to_region_2d

    region, rv3d = context.region, context.region_data
    if region is None or rv3d is None:
        return
    blf.size(0, 13)
    blf.color(0, *MOVE_COLOR)
    for point, label in marks:
        xy = location_3d_to_region_2d(region, rv3d, tuple(point))
        if xy is not None:
            blf.position(0, xy[0] + 8, xy[1] + 8, 0)
            blf.draw(0, label)
