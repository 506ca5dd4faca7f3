"""Tests of core.paths.scenario: built-in paths, interpolation, JSON files, curve timing."""

import json

import numpy as np
import pytest

from core.paths import curve_timing, scenario as S, scenario_builtins
from core.errors import MotionMatchingError
from core.paths.scenario import Scenario, ScenarioError

RATE = 240.0


def _kinematics(sc, rate=RATE):
    t = np.arange(0.0, S.duration(sc) + 1e-9, 1.0 / rate)
    pos, _ = S.sample(sc, t)
    vel = np.gradient(pos[:, :2], t, axis=0)
    acc = np.diff(pos[:, :2], 2, axis=0) * rate * rate
    return t, pos, np.linalg.norm(vel, axis=1), np.linalg.norm(acc, axis=1), vel


def _moving_spans(t, speed, threshold=1e-9):
    moving = speed > threshold
    edges = np.flatnonzero(np.diff(moving.astype(int)))
    starts = list(edges[~moving[edges]] + 1) if len(edges) else []
    ends = list(edges[moving[edges]]) if len(edges) else []
    return [(t[a], t[b]) for a, b in zip(starts, ends)]


# -- built-ins -----------------------------------------------------------------


def test_showcase_is_start_run_stop_walk_back_curve_stop():
    sc = scenario_builtins.builtin("showcase")
    assert S.duration(sc) == pytest.approx(14.5, abs=0.25)
    t, pos, speed, acc, vel = _kinematics(sc)
    spans = _moving_spans(t, speed)
    assert len(spans) == 2, spans
    (a0, a1), (b0, b1) = spans
    assert a0 == pytest.approx(1.0, abs=0.02)                   # stands 1 s
    assert b0 - a1 == pytest.approx(1.0, abs=0.02)              # stops 1 s
    assert S.duration(sc) - b1 == pytest.approx(1.5, abs=0.02)  # stands 1.5 s at the end
    run = (t >= a0) & (t <= a1)
    walk = (t >= b0) & (t <= b1)
    assert 2.5 <= speed[run].max() <= 3.3
    assert 0.8 <= speed[walk].max() <= 1.5
    assert np.sum(speed[run] > 2.5) / RATE > 1.0   # runs for a while, not a blip
    # Walks back the other way, then curves (heading turns by about 90 degrees).
    head = np.degrees(np.unwrap(np.arctan2(vel[:, 0], -vel[:, 1])))
    fast = speed > 0.5
    run_dir = np.median(head[run & fast])
    walk_head = head[walk & fast]
    assert abs(walk_head[0] - run_dir) == pytest.approx(180.0, abs=5.0)
    assert abs(walk_head[-1] - walk_head[0]) == pytest.approx(90.0, abs=5.0)
    assert np.ptp(pos[run, 0]) < 1e-9    # the run is straight
    assert 5.0 < np.ptp(pos[run, 1]) < 12.0


@pytest.mark.parametrize("name", sorted(scenario_builtins.BUILTINS))
def test_builtins_stay_within_what_a_take_offers(name):
    sc = scenario_builtins.builtin(name)
    t, pos, speed, acc, _ = _kinematics(sc)
    assert speed.max() <= 3.3
    assert acc.max() < 3.0
    assert speed[0] == 0.0 and speed[-1] == 0.0   # starts and ends standing
    for a, b in _moving_spans(t, speed):
        peak = speed[(t >= a) & (t <= b)].max()
        assert 0.8 <= peak <= 1.5 or 2.5 <= peak <= 3.3
    assert np.diff(sc.times).max() <= 1.5
    assert sc.name == name and not sc.has_facing
    assert S.sample(sc, [0.0])[1] is None


def test_circle_comes_back_to_its_start():
    sc = scenario_builtins.builtin("circle")
    pos, _ = S.sample(sc, [0.0, S.duration(sc)])
    assert np.abs(pos[1] - pos[0]).max() < 1e-9
    mid, _ = S.sample(sc, np.linspace(2.0, S.duration(sc) - 2.0, 200))
    r = np.linalg.norm(mid[:, :2] - [2.5, 0.0], axis=1)
    assert np.abs(r - 2.5).max() < 0.01


def test_unknown_builtin():
    with pytest.raises(ScenarioError, match="showcase"):
        scenario_builtins.builtin("moonwalk")


# -- interpolation ------------------------------------------------------------


def _random_scenario(rng, n=25, repeat=0.3):
    t = np.cumsum(rng.uniform(0.1, 1.0, n))
    t -= t[0]
    xy = np.cumsum(rng.normal(0.0, 1.0, (n, 2)), axis=0)
    for i in range(1, n):
        if rng.random() < repeat:
            xy[i] = xy[i - 1]
    return Scenario([(a, x, y) for a, (x, y) in zip(t, xy)], "random")


def test_holds_exactly_still_where_points_repeat():
    rng = np.random.default_rng(3)
    for _ in range(20):
        sc = _random_scenario(rng)
        for i in range(len(sc.points) - 1):
            if np.array_equal(sc.xy[i], sc.xy[i + 1]):
                ts = np.linspace(sc.times[i], sc.times[i + 1], 37)
                pos, _ = S.sample(sc, ts)
                assert np.array_equal(pos[:, :2], np.tile(sc.xy[i], (37, 1)))
                assert np.abs(S.velocity(sc, ts)).max() < 1e-12


def test_never_leaves_the_box_of_a_segment():
    rng = np.random.default_rng(4)
    for _ in range(20):
        sc = _random_scenario(rng, repeat=0.2)
        for i in range(len(sc.points) - 1):
            ts = np.linspace(sc.times[i], sc.times[i + 1], 50)
            xy = S.sample(sc, ts)[0][:, :2]
            lo = np.minimum(sc.xy[i], sc.xy[i + 1])
            hi = np.maximum(sc.xy[i], sc.xy[i + 1])
            assert np.all(xy >= lo) and np.all(xy <= hi)


def test_no_overshoot_when_stopping_from_a_run():
    # Run at 3 m/s along -Y, then stop dead at y = -6 and stand.
    sc = Scenario([(0, 0, 0), (1, 0, -3), (2, 0, -6), (3, 0, -6), (4, 0, -6)])
    ts = np.linspace(0, 4, 4001)
    pos, _ = S.sample(sc, ts)
    assert pos[:, 1].min() == -6.0
    assert np.all(np.diff(pos[:, 1]) <= 0.0)
    assert np.all(pos[ts >= 2.0, 1] == -6.0)


def test_constant_outside_and_exact_at_points():
    sc = Scenario([(0.5, 1, 2), (1.5, 3, 2), (2.0, 3, 5)])
    pos, _ = S.sample(sc, [-1.0, 0.0, 0.5, 1.5, 2.0, 9.0])
    assert np.array_equal(pos[:, :2], [[1, 2], [1, 2], [1, 2], [3, 2], [3, 5], [3, 5]])
    assert np.all(pos[:, 2] == 0.0)
    assert S.duration(sc) == 2.0


def test_two_points_move_at_constant_speed():
    sc = Scenario([(0, 0, 0), (4, 0, -4.8)])
    ts = np.linspace(0, 4, 41)
    pos, _ = S.sample(sc, ts)
    assert pos[:, 1] == pytest.approx(-1.2 * ts, abs=1e-12)


def test_constant_acceleration_is_reproduced():
    # Uneven waypoints on y = -a t^2 / 2: interior segments are exact.
    t = np.array([0.0, 0.3, 0.45, 0.9, 1.0, 1.6, 2.0])
    sc = Scenario([(a, 0.0, -0.9 * a * a) for a in t])
    ts = np.linspace(t[1], t[-2], 300)
    pos, _ = S.sample(sc, ts)
    assert pos[:, 1] == pytest.approx(-0.9 * ts * ts, abs=1e-12)


# -- facing -------------------------------------------------------------------


def test_facing_convention_and_shortest_arc():
    sc = Scenario([(0, 0, 0, 0.0), (1, 0, 0, 90.0), (2, 0, 0, 170.0), (3, 0, 0, -170.0), (4, 0, 0, -170.0)])
    _, f = S.sample(sc, [0.0, 1.0, 2.5, 3.5, 4.0])
    assert f[0] == pytest.approx([0.0, -1.0])       # 0 faces -Y
    assert f[1] == pytest.approx([1.0, 0.0])        # +90 is counter-clockwise: +X
    assert f[2, 1] > 0.98                            # 170 -> -170 passes 180, not 0
    assert f[3] == pytest.approx(f[4])               # equal facings hold
    assert np.linalg.norm(f, axis=1) == pytest.approx(1.0)
    _, f = S.sample(sc, np.linspace(2.0, 3.0, 101))
    yaw = np.degrees(np.unwrap(np.arctan2(f[:, 0], -f[:, 1])))
    assert np.all(np.diff(yaw) >= 0.0) and yaw[-1] - yaw[0] == pytest.approx(20.0)


def test_points_without_facing_face_where_they_go():
    sc = Scenario([(0, 0, 0, 0.0), (1, 0, 0), (2, 2, 0), (3, 4, 0), (4, 4, 0)])
    _, f = S.sample(sc, [0.0, 1.0, 2.0, 3.0, 4.0])
    # Standing at t = 1 about to go +X: already turned to +X (90 degrees).
    assert f[1:] == pytest.approx(np.tile([1.0, 0.0], (4, 1)))
    assert f[0] == pytest.approx([0.0, -1.0])
    _, f = S.sample(sc, np.linspace(0.0, 1.0, 101))  # turns on the spot from 0 to 90 degrees
    yaw = np.degrees(np.arctan2(f[:, 0], -f[:, 1]))
    assert np.all(np.diff(yaw) >= 0.0) and yaw[0] == pytest.approx(0.0) and yaw[-1] == pytest.approx(90.0)


# -- JSON -----------------------------------------------------------------------


def _write(tmp_path, data, name="path.json"):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(p)


def test_json_round_trip(tmp_path):
    sc = Scenario([(0, 0, 0, None), (1.5, 1, -2, 45.0), (3, 1, -2, None)], "mine")
    path = str(tmp_path / "mine.json")
    S.save_scenario(sc, path)
    back = S.load_scenario(path)
    assert back.points == sc.points and back.name == "mine"
    ts = np.linspace(-1, 4, 55)
    assert np.array_equal(S.sample(back, ts)[0], S.sample(sc, ts)[0])
    unnamed = S.load_scenario(_write(tmp_path, {"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 1, "y": 0}]},
                                     "walk_here.json"))
    assert unnamed.name == "walk_here" and not unnamed.has_facing


@pytest.mark.parametrize("data, message", [
    ("{", "not valid JSON"),
    ("[1, 2]", 'object with a "points" list'),
    ({"point": []}, "Unknown key 'point'"),
    ({"points": {}}, '"points" list'),
    ({"points": [{"t": 0, "x": 0, "y": 0}]}, "at least two points"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, 5]}, "Point 1 must be an object"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 0}]}, "Point 1 has no 'y'"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 0, "y": 0, "z": 1}]}, "Point 1 has an unknown key 'z'"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": "2", "y": 0}]}, "Point 1: x must be a number"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": True, "y": 0}]}, "Point 1: x must be a number"),
    ('{"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": NaN, "y": 0}]}', "Point 1: x must be a finite"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 0, "y": 0, "facing": "left"}]},
     "Point 1: facing must be a number"),
    ({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 2, "x": 0, "y": 0}, {"t": 2, "x": 1, "y": 0}]},
     "Point 2 has time 2 s, which is not after point 1"),
    ({"points": [{"t": -1, "x": 0, "y": 0}, {"t": 2, "x": 0, "y": 0}]}, "Point 0 has a negative time"),
    ({"name": 3, "points": []}, '"name" must be a string'),
])
def test_json_errors_name_the_problem(tmp_path, data, message):
    path = _write(tmp_path, data)
    with pytest.raises(ScenarioError, match=message) as info:
        S.load_scenario(path)
    assert "path.json" in str(info.value)
    assert isinstance(info.value, MotionMatchingError)


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="Cannot read the scenario file"):
        S.load_scenario(str(tmp_path / "nothing.json"))


def test_facing_may_be_null(tmp_path):
    sc = S.load_scenario(_write(tmp_path, {"points": [{"t": 0, "x": 0, "y": 0, "facing": None},
                                                      {"t": 1, "x": 0, "y": 1}]}))
    assert not sc.has_facing


# -- curve timing ------------------------------------------------------------


def test_fit_range_is_linear():
    tm = curve_timing.curve_timing(12.0, 24.0, 1, 97)
    assert list(tm.frames) == [1.0, 97.0] and list(tm.offsets) == [0.0, 1.0] and tm.linear.all()
    assert tm.frame_end == 97.0


def test_speed_sets_the_end_and_stops_shift_what_follows():
    tm = curve_timing.curve_timing(10.0, 24.0, 1, speed=2.0, stops=[(60, 0.5), (30, 1.0)])
    # 5 s of motion plus 1.5 s of stops.
    assert tm.frame_end == pytest.approx(1 + 24 * 6.5)
    f = np.linspace(1, tm.frame_end, 5000)
    y = tm.evaluate(f)
    held = ((f >= 30) & (f <= 54)) | ((f >= 60) & (f <= 72))
    assert np.ptp(y[(f >= 30) & (f <= 54)]) == 0.0 and np.ptp(y[(f >= 60) & (f <= 72)]) == 0.0
    speed = np.diff(y) / np.diff(f) * 10.0 * 24.0
    moving = ~held[:-1] & ~held[1:]
    assert speed[moving] == pytest.approx(2.0, rel=1e-9)


def test_speed_keys_change_speed_linearly():
    tm = curve_timing.curve_timing(20.0, 30.0, 1, speed=[(31, 1.0), (91, 3.0)])
    # 1 m/s for 1 s, speeding up to 3 m/s over 2 s (4 m), then 3 m/s for the last 15 m.
    assert tm.frame_end == pytest.approx(91 + 30 * 5.0)
    f = np.array([1.0, 31.0, 61.0, 91.0])
    assert tm.evaluate(f) * 20.0 == pytest.approx([0.0, 1.0, 1.0 + 0.5 * (1.0 + 2.0), 5.0])
    assert list(tm.linear) == [True, False, True]
    left, right = tm.handles()
    assert right[1] == pytest.approx([51.0, (1.0 + 1.0 / 3.0 * 60 * (1.0 / 30.0)) / 20.0])


@pytest.mark.parametrize("kw, message", [
    (dict(frame_end=1), "end frame .* must come after"),
    (dict(frame_end=100, stops=[(0, 1.0)]), "before the start frame"),
    (dict(frame_end=100, stops=[(30, 1.0), (40, 1.0)]), "before the previous stop ends"),
    (dict(frame_end=100, stops=[(100, 1.0)]), "after the controller reaches the end"),
    (dict(frame_end=100, stops=[(50, 0.0)]), "positive time"),
    (dict(speed=0.0), "speed must be positive"),
    (dict(speed=[(1, 1.0), (20, 0.0)]), "standing before the end"),
    (dict(speed=[(1, 1.0), (1, 2.0)]), "Two speed keys"),
    (dict(speed=[(1, -1.0)]), "must not be negative"),
    (dict(frame_end=100, stops=[(50,)]), "pair"),
])
def test_timing_errors(kw, message):
    with pytest.raises(ScenarioError, match=message):
        curve_timing.curve_timing(10.0, 24.0, 1, **kw)


def test_parse_pairs():
    assert curve_timing.parse_pairs("120:1.0, 300:2") == [(120.0, 1.0), (300.0, 2.0)]
    assert curve_timing.parse_pairs(" ") == [] and curve_timing.parse_pairs("5:1;") == [(5.0, 1.0)]
    for bad in ("120", "a:1", "1:2:3", "1:inf"):
        with pytest.raises(ScenarioError, match="frame:value"):
            curve_timing.parse_pairs(bad)


def test_a_points_query_goes_through_a_file_and_back(tmp_path):
    data = {"name": "walk_run_walk", "points": [
        {"t": 0.0, "x": 0.0, "y": 0.0, "query": "walk"},
        {"t": 3.0, "x": 0.0, "y": -4.0, "query": "run and not stop"},
        {"t": 6.0, "x": 0.0, "y": -16.0},
        {"t": 8.0, "x": 0.0, "y": -18.0, "query": ""}]}
    sc = S.scenario_from_dict(data)
    assert sc.queries == ((0.0, "walk"), (3.0, "run and not stop"), (8.0, ""))
    path = tmp_path / "moves.json"
    S.save_scenario(sc, str(path))
    again = S.load_scenario(str(path))
    assert again.queries == sc.queries and S.scenario_to_dict(again) == S.scenario_to_dict(sc)
    assert "query" not in S.scenario_to_dict(again)["points"][2]
    moves = S.scenario_moves(again, fps=24, frame_start=11)
    assert moves.frames == (11.0, 83.0, 203.0) and moves.queries == ("walk", "run and not stop", "")


@pytest.mark.parametrize("query, said", [(3, "query must be a tag query"), ("walk and", "expected a tag name")])
def test_a_bad_query_in_a_scenario_names_its_point(query, said):
    data = {"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 0, "y": 1, "query": query}]}
    with pytest.raises(ScenarioError, match="Point 1: .*" + said):
        S.scenario_from_dict(data)
