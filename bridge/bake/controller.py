"""Controllers: objects whose world position over the frames is the wanted path.

A controller is any object. Its world position per scene frame is where the
character should be; when ``obj["motion_matching_use_facing"]`` is true, the
direction its local -Y axis points on the ground is where the character should
face (otherwise the character faces where it goes). Two ways to make one:

- :func:`controller_from_scenario`: an Empty keyed on every scene frame from a
  :class:`core.paths.scenario.Scenario` (location, and rotation Z when the scenario has
  facings).
- :func:`controller_from_curve`: an Empty with a Follow Path constraint on a
  curve, its ``offset_factor`` keyed (see :func:`core.paths.curve_timing.curve_timing`).
  Follow Path places the Empty by arc length along the curve, so the slope of the
  offset curve is the speed; users can edit those keys in the Graph Editor.

:func:`sample_controller` reads any controller back as arrays for the bake.
"""

import math

import numpy as np

from ...core.paths import curve_timing as core_curve_timing, scenario as core_scenario
from ...core.maths import transforms as tf
from ...core.errors import MotionMatchingError
from ..blender import compat
from ..blender.armature_data import sample_curves
from ..blender.scene_data import scene_fps
from .moves import store_moves

USE_FACING = "motion_matching_use_facing"
SCENARIO = "motion_matching_scenario"
CONSTRAINT = "Follow Path"
GROUP = "Object Transforms"

# Blender keeps frames within +-1,048,574 (MAXFRAME).
MAX_FRAME = 1048574

# Keyframe handle types as foreach_set takes them (FREE keeps our handles as set).
_HANDLE_FREE = 0


class ControllerError(MotionMatchingError):
    """A controller cannot be made from what was given."""


def _new_empty(context, name):
    import bpy

    obj = bpy.data.objects.new(name, None)
    obj.empty_display_type = "ARROWS"
    obj.empty_display_size = 0.5
    obj.rotation_mode = "XYZ"
    collection = context.collection or context.scene.collection
    collection.objects.link(obj)
    return obj


def discard(obj):
    """Remove an object made here and its action (when a later step fails)."""
    import bpy

    ad = obj.animation_data
    action = ad.action if ad is not None else None
    bpy.data.objects.remove(obj)
    if action is not None and action.users == 0:
        bpy.data.actions.remove(action)


# ----------------------------------------------------------------------------
# From a scenario


def controller_from_scenario(context, scenario, fps=None, frame_start=1, name="Controller"):
    """An Empty keyed on every frame from ``frame_start`` to the scenario's end.

    Frame ``frame_start + k`` holds the scenario at ``k / fps`` seconds (``fps``:
    the scene's rate by default). Keys are linear, so the Empty holds exactly still
    where the scenario does. With facings, ``rotation_euler`` Z is keyed (unrolled,
    0 faces -Y) and the object is marked to use them. The points' tag queries
    become the controller's moves along the timeline (bridge.bake.moves).
    """
    fps = float(fps) if fps else scene_fps(context.scene)
    if not (math.isfinite(fps) and fps > 0):
        raise ControllerError("The frame rate must be positive.")
    n = int(math.ceil(core_scenario.duration(scenario) * fps - 1e-9)) + 1
    if not -MAX_FRAME <= frame_start <= MAX_FRAME - (n - 1):
        raise ControllerError(
            "%s lasts %.1f s: at %g fps from frame %d its keys would end on frame %d, beyond the %d frames "
            "Blender holds." % (scenario.name, core_scenario.duration(scenario), fps, frame_start,
                                frame_start + n - 1, MAX_FRAME))
    times = np.arange(n) / fps
    pos, facing = core_scenario.sample(scenario, times)
    frames = float(frame_start) + np.arange(n, dtype=np.float64)
    channels = [("location", k, GROUP) for k in range(3)]
    values = pos
    if facing is not None:
        yaw = np.unwrap(np.arctan2(facing[:, 0], -facing[:, 1]))
        channels.append(("rotation_euler", 2, GROUP))
        values = np.column_stack([pos, yaw])
    obj = _new_empty(context, name)
    try:
        obj.location = pos[0]
        if facing is not None:
            obj.rotation_euler[2] = values[0, 3]
        action = compat.new_action(obj, name + "Action")
        compat.write_curves(action, obj, channels, frames, values)
        obj[USE_FACING] = facing is not None
        obj[SCENARIO] = scenario.name
        store_moves(obj, core_scenario.scenario_moves(scenario, fps, frame_start))
    except Exception:
        discard(obj)
        raise
    return obj


# ----------------------------------------------------------------------------
# From a curve


def curve_length(context, curve_obj):
    """World length (m) of the path Follow Path moves along: the curve's first spline
    (see :func:`curve_world_points`)."""
    world, edges = curve_world_points(context, curve_obj)
    if len(edges) == 0:
        return 0.0
    return float(np.linalg.norm(world[edges[:, 1]] - world[edges[:, 0]], axis=1).sum())


def curve_world_points(context, curve_obj):
    """World points (P, 3), in order along the path, and edges (E, 2) of the
    path Follow Path moves along: the curve's first spline.

    Follow Path interpolates linearly between the curve's evaluated points (for a
    Bezier spline, ``resolution_u`` points per segment), so that polyline is
    measured: Bezier segments are evaluated with ``mathutils.geometry.interpolate_bezier``
    at the spline's resolution, poly splines use their points. NURBS splines are
    measured on the evaluated curve converted to a mesh (all its edges); that mesh
    is sampled a little differently from the path in Blender 5.0 (about 0.05 %
    shorter on a typical curve), which no one will see in a speed. Points are
    taken to world space first; non-uniform scale makes speeds uneven along the path.
    Deforming modifiers on the curve are not included.
    """
    from mathutils.geometry import interpolate_bezier

    if curve_obj is None or curve_obj.type != "CURVE":
        raise ControllerError("Select a curve object to follow.")
    splines = curve_obj.data.splines
    if len(splines) == 0:
        raise ControllerError("The curve %s has no splines." % curve_obj.name)
    spline = splines[0]
    mw = np.array(curve_obj.matrix_world)
    if spline.type == "BEZIER":
        bp = spline.bezier_points
        count = len(bp)
        pairs = [(k, k + 1) for k in range(count - 1)]
        if spline.use_cyclic_u and count > 1:
            pairs.append((count - 1, 0))
        res = max(1, spline.resolution_u)
        pts = [np.array(bp[0].co)] if pairs else []
        for a, b in pairs:
            seg = interpolate_bezier(bp[a].co, bp[a].handle_right, bp[b].handle_left, bp[b].co, res + 1)
            pts.extend(np.array(v) for v in seg[1:])
        local = np.array(pts).reshape(-1, 3)
        edges = np.column_stack([np.arange(len(local) - 1), np.arange(1, len(local))])
    elif spline.type == "POLY":
        local = np.array([p.co[:3] for p in spline.points], dtype=np.float64).reshape(-1, 3)
        if spline.use_cyclic_u and len(local) > 1:
            local = np.vstack([local, local[:1]])
        edges = np.column_stack([np.arange(len(local) - 1), np.arange(1, len(local))])
    else:
        depsgraph = context.evaluated_depsgraph_get()
        evaluated = curve_obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        try:
            co = np.empty(len(mesh.vertices) * 3)
            mesh.vertices.foreach_get("co", co)
            ed = np.empty(len(mesh.edges) * 2, dtype=np.int64)
            mesh.edges.foreach_get("vertices", ed)
        finally:
            evaluated.to_mesh_clear()
        local, edges = co.reshape(-1, 3), ed.reshape(-1, 2)
    return local @ mw[:3, :3].T + mw[:3, 3], edges


def controller_from_curve(context, curve_obj, frame_start, frame_end=None, speed=None, stops=(),
                          follow_curve_rotation=False, use_facing=False, name="Controller", fps=None):
    """An Empty that moves along ``curve_obj`` with a Follow Path constraint.

    ``offset_factor`` (0 at the curve's start, 1 at its end) is keyed as
    :func:`core.paths.curve_timing.curve_timing` says: ``speed`` None covers the curve evenly
    from ``frame_start`` to ``frame_end``; a number (m/s) gives a constant speed and
    the end follows from the curve length; ``[(frame, m/s), ...]`` are speed keys.
    ``stops``: ``[(frame, seconds), ...]`` where the Empty stands still (later motion
    is shifted later). Constant-speed stretches are linear keys; stretches where the
    speed changes are Bezier keys with free handles that make the speed change
    linearly. ``follow_curve_rotation`` turns the Empty with the curve (its -Y along
    the path); ``use_facing`` marks the Empty so the bake uses its rotation as the
    facing (for strafing: key the Empty's rotation, or add a fixed rotation on top of
    the curve's).

    Returns the Empty. Raises ControllerError / ScenarioError before anything is
    created when the input cannot be used.
    """
    fps = float(fps) if fps else scene_fps(context.scene)
    length = curve_length(context, curve_obj)
    if length <= 1e-9:
        raise ControllerError("The curve %s has no length to follow." % curve_obj.name)
    timing = core_curve_timing.curve_timing(length, fps, frame_start, frame_end, speed, stops)
    obj = _new_empty(context, name)
    try:
        con = obj.constraints.new("FOLLOW_PATH")
        con.name = CONSTRAINT
        con.target = curve_obj
        con.use_fixed_location = True
        con.use_curve_follow = bool(follow_curve_rotation)
        con.forward_axis = "TRACK_NEGATIVE_Y"
        con.up_axis = "UP_Z"
        con.offset_factor = 0.0
        action = compat.new_action(obj, name + "Action")
        data_path = 'constraints["%s"].offset_factor' % CONSTRAINT
        _write_timing(action, obj, data_path, timing)
        obj[USE_FACING] = bool(use_facing)
        if not curve_obj.data.use_path:
            curve_obj.data.use_path = True  # Follow Path needs the curve's path data
        # The curve may have been evaluated before anything asked for its path:
        # have it evaluated again, now with the path Follow Path reads.
        curve_obj.data.update_tag()
    except Exception:
        discard(obj)
        raise
    return obj


def _write_timing(action, obj, data_path, timing):
    """Key the offset: linear where the speed is constant, exact Bezier elsewhere."""
    compat.write_curves(action, obj, [(data_path, 0, CONSTRAINT)], timing.frames, timing.offsets[:, None])
    fc = compat.find_fcurve(action, obj, data_path, 0)
    kp = fc.keyframe_points
    n = len(kp)
    left, right = timing.handles()
    interp = np.full(n, compat.INTERPOLATION["LINEAR"], dtype=np.int8)
    interp[:-1][~timing.linear] = compat.INTERPOLATION["BEZIER"]
    kinds = np.full(n, _HANDLE_FREE, dtype=np.int8)
    kp.foreach_set("handle_left_type", kinds)
    kp.foreach_set("handle_right_type", kinds)
    kp.foreach_set("handle_left", left.astype(np.float32).ravel())
    kp.foreach_set("handle_right", right.astype(np.float32).ravel())
    kp.foreach_set("interpolation", interp)
    fc.update()


# ----------------------------------------------------------------------------
# Reading a controller back


def can_sample_in_bulk(obj):
    """True when the object's world transform is its own keyed channels alone:
    no parent, constraints, drivers, NLA tracks or delta transforms."""
    if obj.parent is not None or len(obj.constraints) > 0:
        return False
    if any(tuple(v) != d for v, d in ((obj.delta_location, (0, 0, 0)), (obj.delta_rotation_euler, (0, 0, 0)),
                                      (obj.delta_scale, (1, 1, 1)))):
        return False
    if tuple(obj.delta_rotation_quaternion) != (1, 0, 0, 0):
        return False
    ad = obj.animation_data
    if ad is None:
        return True
    return len(ad.drivers) == 0 and len(ad.nla_tracks) == 0


def sample_controller(context, obj, frames, use_bulk=True):
    """World positions (F, 3) and ground facings (F, 2) or None on scene ``frames``
    (whole or fractional).

    Facings are returned when ``obj["motion_matching_use_facing"]`` is true: the
    object's -Y axis on the ground, normalised. When :func:`can_sample_in_bulk`, the
    keyed channels are evaluated in bulk (armature_data.sample_curves); otherwise the
    scene is set to each frame and the current frame is restored afterwards.
    """
    frames = np.atleast_1d(np.asarray(frames, dtype=np.float64))
    want_facing = bool(obj.get(USE_FACING, False))
    if use_bulk and can_sample_in_bulk(obj):
        pos, axis_y = _sample_bulk(obj, frames)
    else:
        pos, axis_y = _sample_frame_set(context.scene, obj, frames)
    if not want_facing:
        return pos, None
    fwd = -axis_y[:, :2]
    norm = np.linalg.norm(fwd, axis=1, keepdims=True)
    ok = norm[:, 0] > 1e-9
    out = np.tile([0.0, -1.0], (len(frames), 1))
    out[ok] = fwd[ok] / norm[ok]
    return pos, out


def _sample_frame_set(scene, obj, frames):
    current, sub = scene.frame_current, scene.frame_subframe
    pos = np.empty((len(frames), 3))
    axis_y = np.empty((len(frames), 3))
    try:
        for i, f in enumerate(frames):
            whole = int(math.floor(f))
            scene.frame_set(whole, subframe=float(f - whole))
            mw = obj.matrix_world
            pos[i] = mw.translation
            axis_y[i] = mw.col[1][:3]
    finally:
        scene.frame_set(current, subframe=sub)
    return pos, axis_y


def _sample_bulk(obj, frames):
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    values = sample_curves(action, obj, frames) if action is not None else {}
    n = len(frames)

    def channel(prop, current):
        out = np.empty((n, len(current)))
        for k in range(len(current)):
            v = values.get((prop, k))
            out[:, k] = current[k] if v is None else v
        return out

    pos = channel("location", obj.location)
    scale = channel("scale", obj.scale)
    mode = obj.rotation_mode
    if mode == "QUATERNION":
        rot = tf.quat_to_matrix(channel("rotation_quaternion", obj.rotation_quaternion))
    elif mode == "AXIS_ANGLE":
        aa = channel("rotation_axis_angle", obj.rotation_axis_angle)
        rot = tf.quat_to_matrix(tf.quat_from_axis_angle(aa[:, 1:], aa[:, 0]))
    else:
        eul = channel("rotation_euler", obj.rotation_euler)
        listing = mode[::-1]  # Blender's mode names the axis applied first first
        rot = tf.euler_to_matrix(eul[:, ["XYZ".index(a) for a in listing]], listing)
    axis_y = rot[:, :, 1] * scale[:, 1:2]
    return pos, axis_y
