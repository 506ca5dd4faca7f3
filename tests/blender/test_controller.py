"""Controllers: scenario Empties keyed on every frame, curve Empties on Follow Path,
and sample_controller (bulk and frame by frame) against Blender's own evaluation."""

import json
import math

import bpy
import numpy as np
import pytest

from core.paths import scenario as S, scenario_builtins
import bl_helpers as H
from tools import scene_curves


def _world(obj, frames):
    """World positions (F, 3) and -Y axes on the ground (F, 2) after frame_set."""
    scene = bpy.context.scene
    pos = np.empty((len(frames), 3))
    fwd = np.empty((len(frames), 2))
    for i, f in enumerate(frames):
        whole = int(math.floor(f))
        scene.frame_set(whole, subframe=float(f - whole))
        mw = np.array(obj.matrix_world)
        pos[i] = mw[:3, 3]
        fwd[i] = -mw[:2, 1] / np.linalg.norm(mw[:2, 1])
    return pos, fwd


def _set_fps(fps):
    bpy.context.scene.render.fps = fps
    bpy.context.scene.render.fps_base = 1.0


def _bezier_curve(name="Path", points=((0, 0, 0), (4, -3, 0), (8, 1, 0), (12, -2, 0)), select=True):
    return scene_curves.bezier_curve(name, points, select)


def _active():
    return bpy.context.view_layer.objects.active


# -- scenario controllers -------------------------------------------------------


@pytest.mark.parametrize("fps", [24, 60])
def test_scenario_controller_is_the_scenario_on_every_frame(fps):
    _set_fps(fps)
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="showcase", frame_start=1) == {"FINISHED"}
    obj = _active()
    assert obj.type == "EMPTY" and obj.name.startswith("Controller")
    sc = scenario_builtins.builtin("showcase")
    n = int(math.ceil(S.duration(sc) * fps - 1e-9)) + 1
    frames = np.arange(1, n + 1, dtype=np.float64)
    assert np.array_equal(H.key_times(obj), frames)
    assert bpy.context.scene.frame_start == 1 and bpy.context.scene.frame_end == n
    assert not obj["motion_matching_use_facing"]
    pos, _ = _world(obj, frames)
    want, facing = S.sample(sc, (frames - 1) / fps)
    assert facing is None
    assert np.abs(pos - want).max() < 1e-5
    # The stands are exactly still.
    hold = frames[(frames - 1) / fps <= 1.0]
    assert np.ptp(pos[: len(hold)], axis=0).max() == 0.0


def test_scenario_from_file_with_facings(tmp_path):
    _set_fps(30)
    path = tmp_path / "strafe.json"
    path.write_text(json.dumps({"points": [
        {"t": 0, "x": 0, "y": 0, "facing": 0}, {"t": 1, "x": 0, "y": 0, "facing": 0},
        {"t": 3, "x": 2.4, "y": 0, "facing": 0}, {"t": 5, "x": 2.4, "y": -2.4, "facing": 170},
        {"t": 6, "x": 2.4, "y": -2.4, "facing": -170}]}))
    assert bpy.ops.motion_matching.add_scenario_controller(
        scenario="FILE", filepath=str(path), frame_start=11, update_scene_range=False) == {"FINISHED"}
    obj = _active()
    assert obj["motion_matching_use_facing"]
    assert obj["motion_matching_scenario"] == "strafe"
    assert bpy.context.scene.frame_end == 250  # left alone
    frames = np.arange(11, 11 + 6 * 30 + 1, dtype=np.float64)
    assert np.array_equal(H.key_times(obj), frames)
    pos, fwd = _world(obj, frames)
    want_pos, want_fwd = S.sample(S.load_scenario(str(path)), (frames - 11) / 30.0)
    assert np.abs(pos - want_pos).max() < 1e-5
    assert np.abs(fwd - want_fwd).max() < 1e-5
    # Rotation keys are unrolled: 170 -> -170 turns 20 degrees, not 340.
    compat = H.addon_module("bridge.blender.compat")
    rz = compat.find_fcurve(obj.animation_data.action, obj, "rotation_euler", 2)
    ys = compat.read_curve(rz)["co"][:, 1]
    assert np.abs(np.diff(ys)).max() < 0.1
    assert math.degrees(ys[-1]) == pytest.approx(190.0, abs=1e-3)


def test_controller_from_scenario_api_takes_an_fps():
    build = H.addon_module("bridge.bake.controller")
    obj = build.controller_from_scenario(bpy.context, scenario_builtins.builtin("straight_walk"), 50, frame_start=-5, name="Walker")
    keys = H.key_times(obj)
    assert keys[0] == -5 and len(keys) == 10 * 50 + 1 and obj.name == "Walker"


# -- curve controllers -----------------------------------------------------------


def _speeds(pos, fps):
    return np.linalg.norm(np.diff(pos, axis=0), axis=1) * fps


def test_curve_controller_fits_the_range_at_constant_speed():
    _set_fps(24)
    curve = _bezier_curve()
    assert bpy.ops.motion_matching.add_controller(frame_start=1, frame_end=121) == {"FINISHED"}
    obj = _active()
    assert obj.type == "EMPTY" and obj.constraints[0].type == "FOLLOW_PATH"
    assert obj.constraints[0].target == curve and obj.constraints[0].use_fixed_location
    frames = np.arange(1, 122, dtype=np.float64)
    pos, _ = _world(obj, frames)
    assert pos[0] == pytest.approx([0, 0, 0], abs=1e-5)
    assert pos[-1] == pytest.approx([12, -2, 0], abs=1e-5)
    speed = _speeds(pos, 24)
    assert np.ptp(speed) / speed.mean() < 0.03
    build = H.addon_module("bridge.bake.controller")
    length = build.curve_length(bpy.context, curve)
    assert speed.mean() == pytest.approx(length / 5.0, rel=0.01)
    assert not obj["motion_matching_use_facing"]


def test_curve_controller_speed_and_stops():
    _set_fps(30)
    curve = _bezier_curve()
    curve.location = (1, 2, 0)
    assert bpy.ops.motion_matching.add_controller(
        frame_start=1, speed=1.5, stops="40:1.0, 100:0.5", extend_scene_range=True) == {"FINISHED"}
    obj = _active()
    build = H.addon_module("bridge.bake.controller")
    length = build.curve_length(bpy.context, curve)
    end = 1 + length / 1.5 * 30 + 45
    keys = H.key_times(obj)
    assert keys[-1] == pytest.approx(end, abs=1e-3)
    assert bpy.context.scene.frame_end == math.ceil(end)
    frames = np.arange(1, math.floor(end) + 1, dtype=np.float64)
    pos, _ = _world(obj, frames)
    assert pos[0] == pytest.approx([1, 2, 0], abs=1e-5)
    for a, b in ((40, 70), (100, 115)):
        still = pos[(frames >= a) & (frames <= b)]
        assert len(still) == b - a + 1
        assert np.abs(still - still[0]).max() < 1e-6
    speed = _speeds(pos, 30)
    moving = np.array([not (40 <= f < 70 or 100 <= f < 115) for f in frames[:-1]])
    assert speed[moving] == pytest.approx(1.5, rel=0.03)
    assert speed[~moving].max() < 1e-4


def test_curve_controller_speed_keys_and_rotation():
    _set_fps(24)
    _bezier_curve(points=((0, 0, 0), (0, -6, 0), (6, -6, 0)))
    assert bpy.ops.motion_matching.add_controller(
        frame_start=1, speed_keys="1:1.0, 49:3.0", follow_curve_rotation=True, use_facing=True) == {"FINISHED"}
    obj = _active()
    frames = np.arange(1, 80, dtype=np.float64)
    pos, fwd = _world(obj, frames)
    speed = _speeds(pos, 24)
    mid = 0.5 * (frames[1:] + frames[:-1])
    want = np.interp(mid, [1, 49], [1.0, 3.0])
    going = mid < H.key_times(obj)[-1] - 1
    assert speed[going] == pytest.approx(want[going], rel=0.03)
    # Turned with the curve: -Y along the direction of travel.
    vel = np.diff(pos[:, :2], axis=0)
    vel /= np.linalg.norm(vel, axis=1, keepdims=True)
    cos = np.sum(vel * 0.5 * (fwd[1:] + fwd[:-1]), axis=1)
    assert cos[going].min() > 0.99
    assert obj["motion_matching_use_facing"]


@pytest.mark.parametrize("kind, cyclic", [("BEZIER", False), ("BEZIER", True), ("POLY", False), ("POLY", True),
                                          ("NURBS", False), ("NURBS", True)])
def test_curve_length_is_the_length_follow_path_travels(kind, cyclic):
    data = bpy.data.curves.new(kind, "CURVE")
    data.dimensions = "3D"
    spline = data.splines.new(kind)
    pts = [(0, 0, 0), (3, -2, 0), (5, 1, 1), (9, 0, 0), (10, 4, 0)]
    if kind == "BEZIER":
        spline.bezier_points.add(len(pts) - 1)
        for bp, co in zip(spline.bezier_points, pts):
            bp.co = co
            bp.handle_left_type = bp.handle_right_type = "AUTO"
    else:
        spline.points.add(len(pts) - 1)
        for p, co in zip(spline.points, pts):
            p.co = co + (1.0,)
        spline.use_endpoint_u = True
    spline.use_cyclic_u = cyclic
    curve = bpy.data.objects.new(kind, data)
    bpy.context.scene.collection.objects.link(curve)
    curve.scale = (2.0, 2.0, 2.0)
    curve.rotation_euler = (0.0, 0.0, 0.7)
    build = H.addon_module("bridge.bake.controller")
    obj = build.controller_from_curve(bpy.context, curve, 1, 101)
    pos, _ = _world(obj, np.linspace(1, 101, 20001))
    travelled = np.linalg.norm(np.diff(pos, axis=0), axis=1).sum()
    # NURBS are measured on the evaluated mesh, which Blender 5.0 samples more coarsely than the path.
    assert build.curve_length(bpy.context, curve) == pytest.approx(travelled, rel=2e-4 if kind != "NURBS" else 1e-3)


def test_no_curve_selected_fails_poll():
    assert not bpy.ops.motion_matching.add_controller.poll()
    _bezier_curve(select=False)
    assert not bpy.ops.motion_matching.add_controller.poll()
    with pytest.raises(RuntimeError):
        bpy.ops.motion_matching.add_controller()
    empty = bpy.data.objects.new("NotACurve", None)
    bpy.context.scene.collection.objects.link(empty)
    bpy.context.view_layer.objects.active = empty
    assert not bpy.ops.motion_matching.add_controller.poll()


def _refused(op, **kw):
    before = H.datablock_counts()
    with pytest.raises(RuntimeError) as info:
        op(**kw)
    assert H.datablock_counts() == before, "something was left behind"
    return str(info.value)


@pytest.mark.parametrize("kw, words", [
    (dict(frame_start=1, frame_end=100, stops="200:1.0"), ["stop at frame 200", "end of the curve"]),
    (dict(frame_start=10, frame_end=100, stops="5:1.0"), ["before the start frame 10"]),
    (dict(frame_start=1, frame_end=100, stops="50:1, 60:1"), ["before the previous stop ends"]),
    (dict(frame_start=1, frame_end=100, stops="50"), ["frame:value"]),
    (dict(frame_start=100, frame_end=100), ["must come after the start"]),
    (dict(frame_start=1, speed_keys="1:1, 30:0"), ["standing before the end"]),
])
def test_bad_curve_controller_options_are_refused(kw, words):
    _bezier_curve()
    message = _refused(bpy.ops.motion_matching.add_controller, **kw)
    for w in words:
        assert w in message, (w, message)
    assert not any(o.type == "EMPTY" for o in bpy.data.objects)


def test_empty_curve_is_refused():
    data = bpy.data.curves.new("Nothing", "CURVE")
    obj = bpy.data.objects.new("Nothing", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    assert "no splines" in _refused(bpy.ops.motion_matching.add_controller)


@pytest.mark.parametrize("text, words", [
    ("{ not json", ["bad.json", "not valid JSON"]),
    ('{"points": [{"t": 0, "x": 0, "y": 0}, {"t": 0, "x": 1, "y": 0}]}', ["bad.json", "Point 1", "not after point 0"]),
    ('{"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 1}]}', ["Point 1 has no 'y'"]),
])
def test_malformed_json_is_refused(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    frame_end = bpy.context.scene.frame_end
    message = _refused(bpy.ops.motion_matching.add_scenario_controller, scenario="FILE", filepath=str(path))
    for w in words:
        assert w in message, (w, message)
    assert bpy.context.scene.frame_end == frame_end


def test_missing_file_is_refused(tmp_path):
    assert "Cannot read" in _refused(bpy.ops.motion_matching.add_scenario_controller,
                                     scenario="FILE", filepath=str(tmp_path / "none.json"))
    assert "Choose a JSON file" in _refused(bpy.ops.motion_matching.add_scenario_controller, scenario="FILE")


# -- sample_controller -------------------------------------------------------------


@pytest.mark.parametrize("use_facing", [False, True])
def test_sample_controller_bulk_and_fallback_equal_frame_set(tmp_path, use_facing):
    _set_fps(60)
    build = H.addon_module("bridge.bake.controller")
    if use_facing:
        sc = S.Scenario([(0, 0, 0, 0.0), (1, 0, -1, 45.0), (2, 1, -1, None), (3, 1, -1, -120.0)], "turns")
    else:
        sc = scenario_builtins.builtin("circle")
    obj = build.controller_from_scenario(bpy.context, sc, None, frame_start=1)
    assert build.can_sample_in_bulk(obj)
    scene = bpy.context.scene
    scene.frame_set(7)
    frames = np.concatenate([np.arange(-3, 200, dtype=np.float64), [10.25, 55.5, 180.75]])
    bulk_pos, bulk_fwd = build.sample_controller(bpy.context, obj, frames)
    assert scene.frame_current == 7
    slow_pos, slow_fwd = build.sample_controller(bpy.context, obj, frames, use_bulk=False)
    assert scene.frame_current == 7
    pos, fwd = _world(obj, frames)
    assert np.abs(bulk_pos - pos).max() < 1e-6
    assert np.abs(slow_pos - pos).max() < 1e-6
    if use_facing:
        assert np.abs(bulk_fwd - fwd).max() < 1e-6
        assert np.abs(slow_fwd - fwd).max() < 1e-6
    else:
        assert bulk_fwd is None and slow_fwd is None


@pytest.mark.parametrize("mode", ["ZXY", "QUATERNION", "AXIS_ANGLE"])
def test_bulk_sampling_reads_any_rotation_mode_and_sparse_keys(mode):
    build = H.addon_module("bridge.bake.controller")
    obj = bpy.data.objects.new("Hand", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.rotation_mode = mode
    obj["motion_matching_use_facing"] = True
    rng = np.random.default_rng(0)
    for f in (1, 13, 40):  # sparse Bezier keys, as a user would set them
        obj.location = rng.normal(size=3)
        obj.scale = (1.0, rng.uniform(0.5, 2.0), 1.0)
        if mode == "QUATERNION":
            obj.rotation_quaternion = rng.normal(size=4)
        elif mode == "AXIS_ANGLE":
            obj.rotation_axis_angle = [rng.uniform(-3, 3)] + list(rng.normal(size=3))
        else:
            obj.rotation_euler = rng.uniform(-0.3, 0.3, 3) + [0, 0, rng.uniform(-3, 3)]
        for prop in ("location", "scale", {"QUATERNION": "rotation_quaternion",
                                           "AXIS_ANGLE": "rotation_axis_angle"}.get(mode, "rotation_euler")):
            obj.keyframe_insert(prop, frame=f)  # test set-up only; the add-on keys in bulk
    assert build.can_sample_in_bulk(obj)
    frames = np.linspace(-2, 45, 95)
    pos, fwd = build.sample_controller(bpy.context, obj, frames)
    want_pos, want_fwd = _world(obj, frames)
    assert np.abs(pos - want_pos).max() < 1e-5
    assert np.abs(fwd - want_fwd).max() < 1e-5


def test_curve_controller_is_sampled_frame_by_frame():
    _set_fps(24)
    curve = _bezier_curve()
    build = H.addon_module("bridge.bake.controller")
    obj = build.controller_from_curve(bpy.context, curve, 1, 60, stops=[(20, 0.5)], follow_curve_rotation=True,
                                      use_facing=True)
    assert not build.can_sample_in_bulk(obj)
    bpy.context.scene.frame_set(3)
    frames = np.arange(1, 80, dtype=np.float64)
    pos, fwd = build.sample_controller(bpy.context, obj, frames)
    assert bpy.context.scene.frame_current == 3
    want_pos, want_fwd = _world(obj, frames)
    assert np.abs(pos - want_pos).max() < 1e-6
    assert np.abs(fwd - want_fwd).max() < 1e-6
    # A parented object is not sampled in bulk either.
    child = build.controller_from_scenario(bpy.context, scenario_builtins.builtin("straight_walk"), 24)
    child.parent = curve
    assert not build.can_sample_in_bulk(child)
    pos, _ = build.sample_controller(bpy.context, child, frames)
    assert np.abs(pos - _world(child, frames)[0]).max() < 1e-6
