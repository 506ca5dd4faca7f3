"""core.measure.report: one report shape, built in core from arrays, with its
JSON and text forms."""

import dataclasses
import json
import re

import numpy as np
import pytest

from core.bake import pipeline as bake
from core.measure import report as rp
from core.measure.joints import Take
from leg_skeleton import leg_skeleton

FPS = 60.0
SPEED = 0.8      # m/s: slower than the planted speed limit, so the dragged feet count as planted


def _take(skeleton, n=240):
    """One clip: the skeleton at rest dragged along -Y (its feet slide with it)."""
    J = len(skeleton.names)
    pos = np.zeros((n, 3))
    pos[:, 1] = -SPEED * np.arange(n) / FPS
    locs = np.zeros((n, J, 3))
    locs[:, skeleton.root] = pos
    rots = np.tile([1.0, 0.0, 0.0, 0.0], (n, J, 1))
    pose = bake.forward_kinematics(leg_skeleton(), locs, rots)
    feet = pose[:, [4, 8]][:, :, :3, 3]
    toes = pose[:, [5, 9]][:, :, :3, 3]
    return Take(clip_offsets=np.array([0, n]), clip_fps=np.array([FPS]), mirrored=np.zeros(1, bool),
                clip_index=np.zeros(n, np.int64), contacts=np.ones((n, 2), bool), toe_positions=toes,
                foot_positions=feet, root_positions=pos, root_quats=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
                pose_locations=locs, pose_rotations=rots)


def _played(take, steps=200):
    """A BakeResult that plays the take's rows one per step, searching every 20th."""
    S = steps
    searched = np.arange(S) % 20 == 0
    return bake.BakeResult(
        dt=1.0 / FPS, locations=take.pose_locations[:S], rotations=take.pose_rotations[:S], rows=np.arange(S),
        searched=searched, jumped=searched & (np.arange(S) > 0), cost=np.where(searched, np.arange(S) % 7, 0.0),
        contacts=take.contacts[:S], locked=np.zeros((S, 2), bool), lock_count=0,
        root_pos=take.root_positions[:S], root_quat=take.root_quats[:S], sim_pos=take.root_positions[:S],
        controller=take.root_positions[:S])


def _report(skeleton, scene_fps=30.0):
    take = _take(skeleton)
    result = _played(take)
    frames = np.arange(1, int((len(result.rows) - 1) / FPS * scene_fps) + 2, dtype=np.float64)
    times = (frames - 1) / scene_fps
    x = np.clip(times * FPS, 0, len(result.rows) - 1)
    locs = np.stack([result.locations[int(round(i))] for i in x])   # whole rows: the scene rate divides 60
    rots = np.stack([result.rotations[int(round(i))] for i in x])
    baked = rp.BakeFrames(frames, times, scene_fps, locs, rots)
    return rp.measure_bake(take, skeleton, result, baked, np.ones(len(take.clip_index), bool), None, 0.5)


def test_a_bake_that_plays_its_take_slides_as_the_take():
    r = _report(leg_skeleton())
    # Both feet are dragged at SPEED the whole time, all of it planted and in contact.
    assert r.contact_sliding_cm_per_foot_per_moving_s == pytest.approx(100 * SPEED, rel=0.02)
    assert r.contact_sliding_ratio == pytest.approx(1.0, abs=1e-9)
    assert r.foot_sliding_cm_per_foot_per_moving_s == pytest.approx(r.raw_foot_sliding_cm_per_foot_per_moving_s,
                                                                    rel=0.02)
    assert r.tracking_error_max_m == 0.0 and r.hips_tracking_max_m == pytest.approx(0.0, abs=1e-12)
    assert (r.frames, r.searches, r.jumps, r.steps) == (100, 10, 9, 200)
    assert [(w["frame"], w["cost"]) for w in r.worst_moments] == [(11, 6.0), (81, 6.0), (21, 5.0)]
    assert r.per_frame.match_cost.shape == (100,) and r.per_frame.contact.shape == (100, 2)
    assert r.real_time_factor == pytest.approx(r.frames / 30.0 / 0.5, rel=0.02)


def test_one_shape_with_or_without_legs():
    legs = _report(leg_skeleton())
    none = _report(dataclasses.replace(leg_skeleton(), legs=[]))
    assert list(legs.to_json()) == list(none.to_json())
    assert none.contact_sliding_ratio is None and none.hips_tracking_mean_m is None
    assert none.foot_sliding_m == {"left": 0.0, "right": 0.0} and none.raw_foot_sliding_m["left"] > 0
    text = none.to_text()
    assert re.search(r"planted sliding cm/foot/moving s +-$", text, re.M)
    assert re.search(r"planted sliding cm/foot/moving s +80\.\d\d \(raw take 80\.\d\d, 1\.00x\)$",
                     legs.to_text(), re.M)
    assert [t for t, _i in none.summary_lines()][2] == "Planted sliding: - cm/foot/s (take -, -x)"
    assert len(none.summary_lines()) == len(legs.summary_lines())


def test_json_round_trip_and_documented_fields():
    r = _report(leg_skeleton())
    data = json.loads(json.dumps(r.to_json()))
    assert "per_frame" not in data and "size_ratio" not in data
    again = rp.BakeReport.from_json(data)
    assert again.to_text() == r.to_text() and again.to_json() == data
    r.size_ratio, r.retargeted_onto = 1.5, "Rig"
    assert r.to_json()["size_ratio"] == 1.5
    assert "size ratio" in r.to_text() and "(onto Rig)" in r.to_text()
    for name in r.to_json():   # every field of report.json is listed in the module's notes
        assert "``%s``" % name in rp.__doc__, name
    # A stored report from before a field existed still reads (the defaults).
    old = rp.BakeReport.from_json({"frames": 3, "unknown": 1})
    assert old.frames == 3 and old.contact_sliding_ratio is None and "frames" in old.to_text()


def test_tracking_on_a_retargeted_rig_replaces_the_root_figures():
    r = _report(leg_skeleton())
    hips = np.zeros((r.frames, 3))
    ctrl = np.zeros((r.frames, 3))
    ctrl[:, 0] = np.linspace(0.0, 0.3, r.frames)
    r.track_target(hips, ctrl)
    assert r.tracking_error_max_m == pytest.approx(0.3) and r.final_distance_m == pytest.approx(0.3)
    assert r.tracking_error_mean_m == pytest.approx(0.15)
    np.testing.assert_allclose(r.per_frame.tracking_error, ctrl[:, 0])


def test_joints_over_a_ground_are_read_as_over_the_flat_floor():
    """Feet standing on a ground 0.3 m up (left) and 0.1 m up (right) read as
    feet on the flat floor: each foot drops by the ground under it, the hips by the mean."""
    from core.measure.bake_quality import Joints
    from core.measure.joints import above_ground

    T = 4
    feet = np.zeros((T, 2, 3))
    feet[:, 0, 2], feet[:, 1, 2] = 0.38, 0.18
    j = Joints(fps=30.0, hips=np.tile([0.0, 0.0, 1.2], (T, 1)), hip_joints=np.tile([0.0, 0.0, 1.1], (T, 2, 1)),
               ankles=feet.copy(), toes=feet - [0.0, 0.0, 0.05], contacts=np.ones((T, 2), dtype=bool))
    ground = np.tile([0.3, 0.1], (T, 1))
    out = above_ground(j, ground)
    assert np.allclose(out.ankles[..., 2], 0.08) and np.allclose(out.toes[..., 2], 0.03)
    assert np.allclose(out.hips[:, 2], 1.0) and np.allclose(out.hip_joints[..., 2], 0.9)
    assert np.array_equal(j.ankles, feet)                  # the joints given are left as they were
    assert np.array_equal(out.ankles[..., :2], feet[..., :2])
