"""Tests of core.database.auto_tags: suggested tags from root motion."""

import numpy as np
import pytest

from core.database import auto_tags as A
from core.io import bvh_convert, bvh_parse
from core.database.auto_tags import AutoTagError, suggest_tags, tags_summary
from core.database.tags import Tag, TagError
from sample_paths import SAMPLE_TAKE

FPS = 60.0
TOL = 3  # frames


def integrate(speed, yaw_deg, fps=FPS):
    """Root positions and facings of a root moving at ``speed`` (m/s per frame)
    along its facing; yaw 0 faces -Y and a rising yaw turns counter-clockwise seen
    from above (facing = (sin yaw, -cos yaw))."""
    yaw = np.radians(yaw_deg)
    facing = np.stack([np.sin(yaw), -np.cos(yaw)], axis=1)
    mid_yaw = 0.5 * (yaw[1:] + yaw[:-1])
    step = 0.5 * (speed[1:] + speed[:-1]) / fps
    pos = np.zeros((speed.shape[0], 3))
    pos[1:, 0] = np.cumsum(step * np.sin(mid_yaw))
    pos[1:, 1] = np.cumsum(-step * np.cos(mid_yaw))
    pos[:, 2] = 0.95
    return pos, facing


def demo_take(fps=FPS):
    """2 s idle, 1 s up to 1.2 m/s, 3 s walk, 1 s up to 3 m/s, 3 s run turning 90
    degrees over its middle second, 0.8 s down to 0, 2 s idle (12.8 s)."""
    t = np.arange(int(round(12.8 * fps))) / fps
    speed = np.interp(t, [0, 2, 3, 6, 7, 10, 10.8, 12.8], [0, 0, 1.2, 1.2, 3, 3, 0, 0])
    yaw = np.interp(t, [0, 8, 9, 12.8], [0, 0, 90, 90])
    return integrate(speed, yaw, fps)


def ranges(tags, name):
    return [(t.start, t.end) for t in tags if t.name == name]


def check_well_formed(tags, n):
    for t in tags:
        assert 0 <= t.start <= t.end <= n - 1
    for name in {t.key for t in tags}:
        rs = sorted((t.start, t.end) for t in tags if t.key == name)
        for (_, e0), (s1, _) in zip(rs[:-1], rs[1:]):
            assert s1 > e0 + 1, f"{name} ranges overlap or touch"
    assert tags == sorted(tags, key=lambda t: (t.start, t.end, t.key))


def near(got, want_s, fps=FPS):
    """``got`` (frames) within TOL frames of ``want_s`` seconds."""
    return abs(got - want_s * fps) <= TOL


# --------------------------------------------------------------------- synthetic take


def test_demo_take_tags_and_ranges():
    pos, facing = demo_take()
    n = pos.shape[0]
    tags = suggest_tags(pos, facing, FPS)
    check_well_formed(tags, n)
    assert {t.name for t in tags} == {"idle", "walk", "run", "start", "stop", "turn_left"}

    # Crossing times of the speed ramps (hysteresis 0.1 m/s): idle is left at
    # 0.3 m/s, walk entered at 0.5 and left at 1.8, run entered at 2.0 and left at
    # 1.9, idle entered again at 0.2 m/s.
    idle_out = 2 + 0.3 / 1.2
    walk_in = 2 + 0.5 / 1.2
    walk_out = 6 + 0.6 / 1.8
    run_in = 6 + 0.8 / 1.8
    run_out = 10 + 1.1 / 3.75
    idle_in = 10 + 2.8 / 3.75

    idle = ranges(tags, "idle")
    assert len(idle) == 2
    assert idle[0][0] == 0 and near(idle[0][1], idle_out)
    assert near(idle[1][0], idle_in) and idle[1][1] == n - 1
    (walk,) = ranges(tags, "walk")  # the 0.35 s of walking pace while stopping is too short
    assert near(walk[0], walk_in) and near(walk[1], walk_out)
    (run,) = ranges(tags, "run")
    assert near(run[0], run_in) and near(run[1], run_out)

    (start,) = ranges(tags, "start")
    assert start == (idle[0][1] - 15, walk[0] + 15)  # 0.25 s margins
    (stop,) = ranges(tags, "stop")
    assert stop == (run[1] - 15, idle[1][0] + 15)

    (left,) = ranges(tags, "turn_left")
    assert near(left[0], 8.0) and near(left[1], 9.0)


def test_tags_summary_of_demo_take():
    pos, facing = demo_take()
    summary = tags_summary(suggest_tags(pos, facing, FPS), FPS)
    assert list(summary) == ["idle", "start", "walk", "run", "turn_left", "stop"]
    assert summary["idle"] == pytest.approx(2.25 + 12.8 - 10.75, abs=0.1)
    assert summary["walk"] == pytest.approx(6.33 - 2.42, abs=0.1)
    assert summary["turn_left"] == pytest.approx(1.0, abs=0.1)


def test_speed_noise_near_a_boundary_does_not_chop():
    """A walk wobbling across 1.7 m/s, with millimetre jitter on the positions."""
    rng = np.random.default_rng(1)
    t = np.arange(int(10 * FPS)) / FPS
    speed = 1.65 - 0.1 * np.cos(2 * np.pi * 0.5 * t)  # 1.55 to 1.75 m/s
    pos, facing = integrate(speed, np.zeros_like(t))
    pos[:, :2] += rng.normal(0, 0.001, (t.size, 2))
    tags = suggest_tags(pos, facing, FPS)
    assert [(t.name, t.start, t.end) for t in tags] == [("walk", 0, t.size - 1)]
    # Without hysteresis the same take falls apart: the test does test something.
    assert len(ranges(suggest_tags(pos, facing, FPS, speed_hysteresis=0.0), "walk")) > 1


def test_jittery_idle_is_one_range_without_turns():
    rng = np.random.default_rng(2)
    n = int(6 * FPS)
    pos = np.zeros((n, 3)) + rng.normal(0, 0.001, (n, 3))
    yaw = np.radians(rng.normal(0, 1.0, n))
    facing = np.stack([np.sin(yaw), -np.cos(yaw)], axis=1)
    assert suggest_tags(pos, facing, FPS) == [Tag("idle", 0, n - 1)]


# ------------------------------------------------------------------------- turn sign


@pytest.mark.parametrize("to_x, kind", [(+1.0, "turn_left"), (-1.0, "turn_right")])
def test_turn_sign(to_x, kind):
    """Facing -Y (Z up), the right hand is forward x up = -X, so turning toward +X
    is turning left and toward -X is turning right."""
    forward, up = np.array([0.0, -1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    right = np.cross(forward, up)
    np.testing.assert_allclose(right, [-1.0, 0.0, 0.0])
    side = "turn_left" if np.dot([to_x, 0.0, 0.0], right) < 0 else "turn_right"
    assert side == kind

    t = np.arange(int(3 * FPS)) / FPS
    angle = np.radians(np.interp(t, [0, 1, 2, 3], [0, 0, 90, 90]))
    # Rotate from -Y toward (to_x, 0): at the end the facing is (to_x, 0).
    facing = np.stack([to_x * np.sin(angle), -np.cos(angle)], axis=1)
    np.testing.assert_allclose(facing[-1], [to_x, 0.0], atol=1e-12)
    pos = np.zeros((t.size, 3))
    tags = suggest_tags(pos, facing, FPS)
    turns = [x for x in tags if x.name.startswith("turn")]
    assert len(turns) == 1 and turns[0].name == kind
    assert near(turns[0].start, 1.0) and near(turns[0].end, 2.0)


def test_turn_across_the_angle_wrap():
    """Two full turns to the left stay one range (the angle is unwrapped)."""
    t = np.arange(int(10 * FPS)) / FPS
    angle = np.radians(np.interp(t, [0, 1, 9, 10], [0, 0, 2 * 360, 2 * 360]))
    facing = np.stack([np.sin(angle), -np.cos(angle)], axis=1)
    tags = suggest_tags(np.zeros((t.size, 3)), facing, FPS)
    (left,) = ranges(tags, "turn_left")
    assert near(left[0], 1.0) and near(left[1], 9.0)
    assert not ranges(tags, "turn_right")


# ---------------------------------------------------------------------------- names


def test_names_mapping():
    pos, facing = demo_take()
    plain = suggest_tags(pos, facing, FPS)
    named = suggest_tags(pos, facing, FPS,
                         names={"walk": "Gehen", "start": "Anfahrt", "turn_left": None})
    assert {t.name for t in named} == {"idle", "Gehen", "run", "Anfahrt", "stop"}
    assert ranges(named, "Gehen") == ranges(plain, "walk")
    assert ranges(named, "Anfahrt") == ranges(plain, "start")


def test_names_shared_by_two_kinds_are_merged():
    pos, facing = demo_take()
    tags = suggest_tags(pos, facing, FPS, names={"idle": "still", "start": "still",
                                                 "stop": "Still"})
    check_well_formed(tags, pos.shape[0])
    still = ranges(tags, "still")
    assert len(still) == 2  # idle + start, and stop + idle, each one range
    assert still[0][0] == 0 and still[1][1] == pos.shape[0] - 1
    assert not ranges(tags, "Still")


@pytest.mark.parametrize("names, words", [
    ({"jog": "jog"}, "not a kind of move"),
    ({"walk": "slow walk"}, "a space"),
    ({"walk": "and"}, "query language"),
    (["walk"], "must map"),
])
def test_bad_names(names, words):
    pos, facing = demo_take()
    with pytest.raises(AutoTagError, match=words):
        suggest_tags(pos, facing, FPS, names=names)


# ------------------------------------------------------------------ options and input


def test_margin_is_clamped_to_the_take():
    pos, facing = demo_take()
    n = pos.shape[0]
    tags = suggest_tags(pos, facing, FPS, transition_margin_s=5.0)
    check_well_formed(tags, n)
    assert ranges(tags, "start")[0][0] == 0
    assert ranges(tags, "stop")[0][1] == n - 1


def test_thresholds_are_used():
    pos, facing = demo_take()
    tags = suggest_tags(pos, facing, FPS, turn_rate_deg_s=120.0, min_run_s=4.0)
    assert not ranges(tags, "turn_left") and not ranges(tags, "run")
    assert set(A.DEFAULT_THRESHOLDS) >= {"idle_max_speed", "walk_min_speed",
                                         "walk_max_speed", "run_min_speed"}


@pytest.mark.parametrize("kwargs, words", [
    (dict(idle_speed=0.1), "Unknown threshold"),
    (dict(min_turn_s=-1), "0 or more"),
    (dict(walk_max_speed=2.5), "must rise"),
    (dict(turn_hysteresis_deg_s=50), "turn_rate_deg_s"),
])
def test_bad_thresholds(kwargs, words):
    pos, facing = demo_take()
    with pytest.raises(AutoTagError, match=words):
        suggest_tags(pos, facing, FPS, **kwargs)


def test_bad_motion():
    pos, facing = demo_take()
    with pytest.raises(AutoTagError, match="frame rate"):
        suggest_tags(pos, facing, 0)
    with pytest.raises(AutoTagError, match="shape"):
        suggest_tags(pos, facing[:-1], FPS)
    bad = facing.copy()
    bad[3] = 0.0
    with pytest.raises(AutoTagError, match="horizontal"):
        suggest_tags(pos, bad, FPS)
    assert issubclass(AutoTagError, TagError)
    assert suggest_tags(np.zeros((0, 3)), np.zeros((0, 2)), FPS) == []
    assert suggest_tags(np.zeros((1, 3)), [[0.0, -1.0]], FPS) == []


def test_tags_summary_counts_frames_once():
    tags = [Tag("walk", 0, 59), Tag("Walk", 30, 89), ("run", 100, 129)]
    assert tags_summary(tags, 30.0) == {"walk": 3.0, "run": 1.0}
    assert tags_summary([], 30.0) == {}
    with pytest.raises(AutoTagError):
        tags_summary(tags, -1)


# ------------------------------------------------------------------ real sample take


def sample_root():
    motion = bvh_convert.to_blender(bvh_parse.read_bvh(SAMPLE_TAKE), 0.01)
    pos = motion.world_positions()[:, 0].copy()
    pos[:, 2] = 0.0
    forward = motion.world_rotations()[:, 0] @ np.array([0.0, -1.0, 0.0])
    facing = forward[:, :2] / np.linalg.norm(forward[:, :2], axis=1, keepdims=True)
    return pos, facing, 1.0 / motion.frame_time


def test_sample_take():
    pos, facing, fps = sample_root()
    tags = suggest_tags(pos, facing, fps)
    check_well_formed(tags, pos.shape[0])
    summary = tags_summary(tags, fps)
    for name in ("idle", "walk", "run"):
        assert summary[name] >= 10.0, (name, summary)
    assert len(ranges(tags, "start")) >= 3
    assert len(ranges(tags, "stop")) >= 3
    assert summary.get("turn_left", 0) > 1.0 and summary.get("turn_right", 0) > 1.0
