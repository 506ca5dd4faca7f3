"""Tests of core.database (feature set, clip features, normalisation, the matching database) and core.skeleton.contacts on synthetic clips with known answers."""

import io
import math

import numpy as np
import pytest

from python_calls import python_calls
from core.skeleton.contacts import (ContactError, bridge_then_drop, central_velocity, filter_radius, foot_contacts,
                                    majority_filter)
from core.database.checks import database_from_arrays
from core.errors import MotionMatchingError
from core.database.clip_features import Clip, clip_features, clip_valid_rows
from core.database.feature_database import Database, build_database, query_features, reweight
from core.database.normalization import compute_normalization, denormalize, normalize
from core.database.feature_spec import (
    FeatureError,
    FeatureGroup,
    FeatureSpec,
    default_spec,
    feature_names,
    feature_weights,
    group_slices,
)
from core.maths.transforms import quat_from_axis_angle, quat_to_matrix

JOINTS = ["Hips", "LeftFoot", "RightFoot", "LeftToe", "RightToe", "LeftHand"]
Z = np.array([0.0, 0.0, 1.0])


def yaw_quats(yaw):
    yaw = np.asarray(yaw, dtype=np.float64)
    return quat_from_axis_angle(np.broadcast_to(Z, yaw.shape + (3,)), yaw)


def facing(yaw):
    """R_z(yaw) @ (0, -1, 0)."""
    return np.stack([np.sin(yaw), -np.cos(yaw), np.zeros_like(yaw)], axis=-1)


def clip_from_local(name, fps, root_pos, yaw, local, excluded=None):
    """Clip whose joints sit at ``local`` (F, J, 3) in root space."""
    q = yaw_quats(yaw)
    rot = quat_to_matrix(q)
    world = root_pos[:, None, :] + np.einsum("fij,fkj->fki", rot, local)
    return Clip(name=name, fps=fps, joint_names=list(JOINTS), positions=world,
                root_pos=root_pos, root_rot=q, excluded=excluded)


AMP, OMEGA = 0.2, 2.0 * math.pi * 1.5  # foot swing amplitude (m) and angular rate


def straight_walk(n=300, fps=60.0, heading_deg=30.0, speed=1.0, name="walk"):
    """Root walking at ``speed`` m/s along its facing, which is rotated by
    ``heading_deg``; feet swing sinusoidally along local y."""
    t = np.arange(n) / fps
    yaw = np.full(n, math.radians(heading_deg))
    root = speed * t[:, None] * facing(yaw)
    s = AMP * np.sin(OMEGA * t)
    local = np.zeros((n, len(JOINTS), 3))
    local[:, 0] = (0.0, 0.0, 1.0)
    local[:, 1] = np.stack([np.full(n, 0.1), s, np.full(n, 0.1)], axis=1)
    local[:, 2] = np.stack([np.full(n, -0.1), -s, np.full(n, 0.1)], axis=1)
    local[:, 3] = local[:, 1] + (0.0, -0.15, -0.08)
    local[:, 4] = local[:, 2] + (0.0, -0.15, -0.08)
    local[:, 5] = (0.3, 0.0, 1.0)
    return clip_from_local(name, fps, root, yaw, local)


def spec_default():
    return default_spec("LeftFoot", "RightFoot", "Hips")


def cols(spec, name):
    return group_slices(spec)[name]


# ------------------------------------------------------------------------------- spec


def test_default_spec_layout():
    spec = spec_default()
    assert spec.dim == 27
    names = feature_names(spec)
    assert len(names) == 27
    assert names[:3] == ["LeftFoot.pos.x", "LeftFoot.pos.y", "LeftFoot.pos.z"]
    assert "traj.pos+0.33s.x" in names and "traj.dir+1.00s.y" in names
    sl = group_slices(spec)
    assert [s.stop - s.start for s in sl.values()] == [6, 6, 3, 6, 6]
    assert sl["trajectory_directions"].stop == 27
    assert spec.effective_end_margin_s() == 1.0 and spec.effective_start_margin_s() == 0.0


def test_spec_json_round_trip():
    spec = spec_default()
    spec.responsiveness, spec.quality, spec.end_margin_s = 1.5, 0.5, 0.5
    again = FeatureSpec.from_json(spec.to_json())
    assert again == spec
    assert FeatureSpec.from_dict(spec.to_dict()) == spec


# ----------------------------------------------------------------------- raw features


def test_straight_walk_features_are_analytic():
    fps = 60.0
    clip = straight_walk(fps=fps)
    spec = spec_default()
    raw = clip_features(spec, clip)
    n = clip.num_frames
    assert raw.shape == (n, 27) and raw.dtype == np.float64
    t = np.arange(n) / fps
    h = 1.0 / fps
    s = AMP * np.sin(OMEGA * t)

    pos = raw[:, cols(spec, "foot_positions")].reshape(n, 2, 3)
    np.testing.assert_allclose(pos[:, 0], np.stack([np.full(n, 0.1), s, np.full(n, 0.1)], 1),
                               atol=1e-12)
    np.testing.assert_allclose(pos[:, 1], np.stack([np.full(n, -0.1), -s, np.full(n, 0.1)], 1),
                               atol=1e-12)

    # Central difference of sin(wt) is cos(wt) sin(wh)/h, exactly; the root adds
    # (0, -1, 0) m/s in root space (it walks forward, toward local -y).
    vel = raw[:, cols(spec, "foot_velocities")].reshape(n, 2, 3)
    dy = AMP * np.cos(OMEGA * t) * np.sin(OMEGA * h) / h
    np.testing.assert_allclose(vel[1:-1, 0, 1], dy[1:-1] - 1.0, atol=1e-9)
    np.testing.assert_allclose(vel[1:-1, 1, 1], -dy[1:-1] - 1.0, atol=1e-9)
    np.testing.assert_allclose(vel[:, :, [0, 2]], 0.0, atol=1e-9)
    # One-sided at the ends.
    np.testing.assert_allclose(vel[0, 0, 1], (s[1] - s[0]) / h - 1.0, atol=1e-9)
    np.testing.assert_allclose(vel[-1, 0, 1], (s[-1] - s[-2]) / h - 1.0, atol=1e-9)
    np.testing.assert_allclose(raw[:, cols(spec, "hips_velocity")],
                               np.tile([0.0, -1.0, 0.0], (n, 1)), atol=1e-9)

    traj = raw[:, cols(spec, "trajectory_positions")].reshape(n, 3, 2)
    ok = n - 60
    np.testing.assert_allclose(traj[:ok, 2], np.tile([0.0, -1.0], (ok, 1)), atol=1e-12)
    np.testing.assert_allclose(traj[:ok, 0], np.tile([0.0, -1.0 / 3.0], (ok, 1)), atol=1e-12)
    np.testing.assert_allclose(traj[:ok, 1], np.tile([0.0, -2.0 / 3.0], (ok, 1)), atol=1e-12)
    dirs = raw[:, cols(spec, "trajectory_directions")].reshape(n, 3, 2)
    np.testing.assert_allclose(dirs, np.tile([0.0, -1.0], (n, 3, 1)), atol=1e-12)


def test_trajectory_clamps_at_the_end_of_the_clip():
    fps = 60.0
    clip = straight_walk(fps=fps)
    spec = spec_default()
    raw = clip_features(spec, clip)
    n = clip.num_frames
    traj = raw[:, cols(spec, "trajectory_positions")].reshape(n, 3, 2)
    # Last frame: every future sample is the last frame itself.
    np.testing.assert_allclose(traj[-1], 0.0, atol=1e-12)
    # 30 frames before the end: +1 s is clamped to 29 frames ahead, +1/3 s is not.
    np.testing.assert_allclose(traj[n - 30, 2], [0.0, -29.0 / fps], atol=1e-12)
    np.testing.assert_allclose(traj[n - 30, 0], [0.0, -20.0 / fps], atol=1e-12)
    # Exactly 60 frames before the end nothing is clamped.
    np.testing.assert_allclose(traj[n - 61, 2], [0.0, -1.0], atol=1e-12)


def test_turning_clip_gives_rotated_directions_and_arc_positions():
    fps, n, v, w = 30.0, 200, 1.5, 0.8  # m/s and rad/s, turning left
    t = np.arange(n) / fps
    yaw = w * t + 0.3
    root = (v / w) * np.stack([-np.cos(yaw), -np.sin(yaw), np.zeros(n)], axis=1)
    np.testing.assert_allclose(np.gradient(root, axis=0)[5:-5] * fps,
                               v * facing(yaw)[5:-5], atol=2e-3)  # it walks forward
    local = np.zeros((n, len(JOINTS), 3))
    clip = clip_from_local("turn", fps, root, yaw, local)
    spec = spec_default()
    raw = clip_features(spec, clip)
    ok = n - 30
    d = w * np.array([10, 20, 30]) / fps  # yaw gained after 1/3, 2/3, 1 s
    dirs = raw[:ok, cols(spec, "trajectory_directions")].reshape(ok, 3, 2)
    expect_dir = np.stack([np.sin(d), -np.cos(d)], axis=1)
    np.testing.assert_allclose(dirs, np.broadcast_to(expect_dir, dirs.shape), atol=1e-12)
    pos = raw[:ok, cols(spec, "trajectory_positions")].reshape(ok, 3, 2)
    expect_pos = (v / w) * np.stack([1.0 - np.cos(d), -np.sin(d)], axis=1)
    np.testing.assert_allclose(pos, np.broadcast_to(expect_pos, pos.shape), atol=1e-12)
    assert (pos[:, :, 0] > 0).all()  # a left turn bends toward the character's left (+x)


def test_quadratic_motion_velocity_is_exact_and_rotated_only():
    fps, n = 50.0, 40
    t = np.arange(n) / fps
    h = 1.0 / fps
    a = np.array([0.7, -1.2, 0.4])
    b = np.array([0.3, 0.5, -0.2])
    yaw = np.full(n, math.radians(45.0))
    rot = quat_to_matrix(yaw_quats(yaw))
    root = np.stack([2.0 * t, 3.0 * t ** 2, np.zeros(n)], axis=1)  # moving root: no effect
    world = np.zeros((n, len(JOINTS), 3))
    world[:, 1] = a * t[:, None] ** 2 + b * t[:, None] + 5.0
    clip = Clip("quad", fps, list(JOINTS), world, root, yaw_quats(yaw))
    spec = FeatureSpec([FeatureGroup("v", "bone_velocity", bones=["LeftFoot"])])
    vel = clip_features(spec, clip)
    expect = 2.0 * a * t[:, None] + b
    expect[0] = a * h + b
    expect[-1] = 2.0 * a * t[-1] - a * h + b
    np.testing.assert_allclose(vel, np.einsum("fji,fj->fi", rot, expect), atol=1e-10)
    np.testing.assert_allclose(central_velocity(world[:, 1], fps)[1:-1], expect[1:-1], atol=1e-10)


def test_past_times_and_custom_bone_position():
    fps = 60.0
    clip = straight_walk(fps=fps)
    spec = FeatureSpec([
        FeatureGroup("hand", "bone_position", bones=["LeftHand"], weight=0.5),
        FeatureGroup("traj", "trajectory_position", times_s=[-0.33, 0.33, 1.0]),
    ])
    names = feature_names(spec)
    assert names == ["LeftHand.pos.x", "LeftHand.pos.y", "LeftHand.pos.z",
                     "traj.pos-0.33s.x", "traj.pos-0.33s.y", "traj.pos+0.33s.x",
                     "traj.pos+0.33s.y", "traj.pos+1.00s.x", "traj.pos+1.00s.y"]
    raw = clip_features(spec, clip)
    n = clip.num_frames
    np.testing.assert_allclose(raw[:, :3], np.tile([0.3, 0.0, 1.0], (n, 1)), atol=1e-12)
    # -0.33 s is 19.8 frames, rounded to 20: 20/60 m behind (local +y).
    np.testing.assert_allclose(raw[20:, 3:5], np.tile([0.0, 20.0 / fps], (n - 20, 1)), atol=1e-12)
    np.testing.assert_allclose(raw[0, 3:5], 0.0, atol=1e-12)  # clamped to frame 0
    valid = clip_valid_rows(spec, n, fps)
    assert valid.sum() == n - 20 - 60
    assert not valid[:20].any() and valid[20] and valid[n - 61] and not valid[n - 60:].any()
    db = build_database(spec, [clip])
    assert db.valid.sum() == n - 80 and db.dim == 9


def test_validity_mask_counts_and_margin():
    spec = spec_default()
    v = clip_valid_rows(spec, 300, 60.0)
    assert v.sum() == 240 and v[239] and not v[240]
    assert clip_valid_rows(spec, 300, 30.0).sum() == 270
    spec.end_margin_s = 0.5
    assert clip_valid_rows(spec, 300, 60.0).sum() == 270
    spec.end_margin_s = 0.0
    assert clip_valid_rows(spec, 300, 60.0).all()
    assert not clip_valid_rows(spec_default(), 50, 60.0).any()


# ---------------------------------------------------------------------- normalisation


def two_clips():
    a = straight_walk(n=300, heading_deg=30.0, name="a")
    b = straight_walk(n=240, heading_deg=-70.0, speed=2.0, name="b")
    return a, b


def test_normalisation_groups_share_one_scale_and_mean_is_zero():
    spec = spec_default()
    a, b = two_clips()
    db = build_database(spec, [a, b])
    raw = np.concatenate([clip_features(spec, a), clip_features(spec, b)])
    np.testing.assert_array_equal(db.raw, raw)
    std = raw.std(axis=0)
    for name, sl in group_slices(spec).items():
        scale = db.norm.scale[sl]
        assert np.all(scale == scale[0]), name
        if name == "trajectory_directions":
            assert scale[0] == 1.0  # constant (0, -1): guarded
        else:
            assert scale[0] == pytest.approx(std[sl].mean(), rel=1e-12)
    np.testing.assert_allclose(db.norm.mean, raw.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(db.features.astype(np.float64).mean(axis=0), 0.0, atol=1e-5)
    assert db.features.dtype == np.float32 and db.raw.dtype == np.float64
    # Relative sizes inside a group survive: foot y swings, foot x does not.
    fp = db.features[:, cols(spec, "foot_positions")]
    assert fp[:, 1].std() > 10 * (fp[:, 0].std() + 1e-9)


def test_weights_responsiveness_and_quality_multiply():
    a, b = two_clips()
    base = build_database(spec_default(), [a, b])
    spec = spec_default()
    spec.groups[0].weight = 2.0
    spec.groups[3].weight = 0.5
    spec.responsiveness = 3.0
    spec.quality = 0.25
    db = build_database(spec, [a, b])
    np.testing.assert_array_equal(db.norm.scale, base.norm.scale)
    w = feature_weights(spec)
    expect = np.concatenate([np.full(6, 0.5), np.full(9, 0.25), np.full(6, 1.5), np.full(6, 3.0)])
    np.testing.assert_allclose(w, expect)
    np.testing.assert_allclose(db.features, base.features * expect.astype(np.float32), rtol=1e-6,
                               atol=1e-6)
    again = reweight(base, spec)
    np.testing.assert_array_equal(again.features, db.features)
    other = spec_default()
    other.groups[3].times_s = [0.5, 1.0]
    with pytest.raises(FeatureError, match="rebuild"):
        reweight(base, other)


def test_excluded_rows_do_not_count_and_are_not_offered():
    spec = spec_default()
    a, b = two_clips()
    excl = np.zeros(a.num_frames, dtype=bool)
    excl[:100] = True
    a.excluded = excl
    db = build_database(spec, [a, b])
    raws = [clip_features(spec, a), clip_features(spec, b)]
    norm = compute_normalization(raws, [~excl, None], spec)
    np.testing.assert_allclose(db.norm.mean, norm.mean, atol=1e-12)
    np.testing.assert_allclose(db.norm.scale, norm.scale, atol=1e-12)
    assert not db.valid[:100].any()
    assert db.valid.sum() == (240 - 100) + (240 - 60)
    assert db.excluded.sum() == 100


def test_query_normalisation_matches_rows_and_inverts():
    spec = spec_default()
    spec.groups[1].weight = 0.0
    a, b = two_clips()
    db = build_database(spec, [a, b])
    q = query_features(db, db.raw[123])
    assert q.shape == (27,)
    np.testing.assert_allclose(q, db.features[123], atol=1e-5)
    w = feature_weights(spec)
    back = denormalize(normalize(db.raw[:5], db.norm, w), db.norm, w)
    keep = w > 0
    np.testing.assert_allclose(back[:, keep], db.raw[:5, keep], atol=1e-12)
    np.testing.assert_allclose(back[:, ~keep], np.broadcast_to(db.norm.mean[~keep], (5, 6)))
    with pytest.raises(FeatureError, match="27"):
        query_features(db, np.zeros(26))
    with pytest.raises(FeatureError, match="NaN"):
        query_features(db, np.full(27, np.nan))


def test_rows_index_clips_and_frames():
    a, b = two_clips()
    db = build_database(spec_default(), [a, b])
    assert db.num_rows == 540
    np.testing.assert_array_equal(db.clip_offsets, [0, 300, 540])
    assert db.clip_index[299] == 0 and db.clip_index[300] == 1
    assert db.frame_index[299] == 299 and db.frame_index[300] == 0 and db.frame_index[-1] == 239
    assert db.row(1, 10) == 310 and db.clip_rows(1) == slice(300, 540)
    assert db.clip_names == ["a", "b"]


# --------------------------------------------------------------------------- contacts


def brute_median(mask, radius):
    n = len(mask)
    out = np.empty(n, dtype=bool)
    for i in range(n):
        idx = np.clip(np.arange(i - radius, i + radius + 1), 0, n - 1)
        out[i] = mask[idx].sum() > radius
    return out


def test_majority_filter_matches_a_direct_median():
    rng = np.random.default_rng(3)
    for radius in (0, 1, 2, 6):
        m = rng.random(97) < 0.6
        np.testing.assert_array_equal(majority_filter(m, radius), brute_median(m, radius))
    two = rng.random((50, 2)) < 0.5
    out = majority_filter(two, 3)
    for k in range(2):
        np.testing.assert_array_equal(out[:, k], brute_median(two[:, k], 3))
    edge = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    np.testing.assert_array_equal(majority_filter(edge, 2), edge)  # replicate padding


def test_foot_contacts_stop_move_roll_and_slip():
    fps = 60.0
    n = 300
    x = np.zeros(n)
    x[60:120] = np.arange(60) / fps  # moves at 1 m/s
    x[120:] = x[119]
    x[180:] += 0.006  # a roll of 6 mm: 0.18 m/s on two frames (under twice the contact speed)
    x[240:] += 0.01   # a slip of 1 cm: 0.3 m/s on two frames (not under twice it)
    p = np.stack([x, np.zeros(n), np.full(n, 0.02)], axis=1)
    speed = np.linalg.norm(central_velocity(p, fps), axis=1)
    raw = speed < 0.15
    assert np.flatnonzero(~raw[150:]).tolist() == [29, 30, 89, 90]  # frames 179-180 and 239-240
    c = foot_contacts(p, fps)
    assert c.shape == (n,) and c.dtype == bool
    assert c[:58].all() and not c[62:118].any()
    assert c[122:239].all()                     # the roll is bridged: one stance
    assert not c[239:241].any() and c[241:].all()   # the slip splits it
    both = foot_contacts(np.stack([p, p + 1.0], axis=1), fps)
    assert both.shape == (n, 2)
    np.testing.assert_array_equal(both[:, 0], c)
    np.testing.assert_array_equal(both[:, 1], c)


def test_a_stance_split_by_a_roll_stays_one_stance_at_30_fps():
    # A fast stride's stance at 30 fps: the toe still for three frames, rolling at
    # 0.16-0.24 m/s for three as the heel rises, still again for three, between two
    # swings. A median of radius 3 keeps only the three rolling frames; the stance
    # is the nine.
    speed = np.array([3.3, 2.6, 2.8, 2.8, 1.3, 0.29, 0.04, 0.06, 0.09, 0.16, 0.24, 0.18, 0.08, 0.08, 0.06, 0.22,
                      0.71, 1.5, 2.5, 3.2])
    slow, rolling = speed < 0.15, speed < 0.3
    np.testing.assert_array_equal(np.flatnonzero(majority_filter(slow, 3)), [9, 10, 11])
    np.testing.assert_array_equal(np.flatnonzero(bridge_then_drop(slow, rolling, 3)), np.arange(6, 15))
    # A toe that lifts (faster than twice the contact speed) in the gap: two short
    # contacts, both dropped.
    lifted = rolling.copy()
    lifted[10] = False
    assert not bridge_then_drop(slow, lifted, 3).any()


def test_bridge_then_drop_makes_contacts_only_of_slow_or_rolling_frames():
    rng = np.random.default_rng(5)
    for frames in (0, 1, 3, 6):
        speed = rng.random((400, 2)) * 0.4
        slow, rolling = speed < 0.15, speed < 0.3
        c = bridge_then_drop(slow, rolling, frames)
        assert c.shape == slow.shape
        assert not (c & ~rolling).any()                          # never a lifted toe
        assert not (c & ~slow).any() or frames > 0
        for k in range(2):
            edges = np.flatnonzero(np.diff(c[:, k].astype(np.int8))) + 1
            runs = np.diff(np.concatenate([[0], edges, [len(c)]]))
            inner = runs[1:-1][c[edges[:-1], k]] if len(edges) > 1 else runs[:0]
            assert (inner > frames).all()                        # no short contact left inside the clip
    with pytest.raises(ContactError, match="0 frames or more"):
        bridge_then_drop(np.zeros(5, bool), np.zeros(5, bool), -1)


def _stance_and_swing(fps, seconds=4.0, swing=0.15):
    """A toe that moves at 1 m/s for ``swing`` seconds in every second, at ``fps``."""
    t = np.arange(int(round(seconds * fps))) / fps
    moving = (t % 1.0) >= 1.0 - swing
    x = np.cumsum(np.where(moving, 1.0 / fps, 0.0))
    return np.stack([x, np.zeros_like(x), np.full_like(x, 0.02)], axis=1), t


def test_contact_filter_is_seconds_whatever_the_rate():
    assert [filter_radius(0.1, f) for f in (24.0, 30.0, 59.9988, 60.0, 120.0)] == [2, 3, 6, 6, 12]
    assert filter_radius(0.1, 25.0) == 3            # 2.5 frames: halves up
    # The same motion at 30, 60 and 120 fps: the contacts cover the same share of
    # time, and a swing of 0.15 s survives the default filter at every rate.
    shares = []
    for fps in (30.0, 60.0, 120.0):
        p, t = _stance_and_swing(fps)
        c = foot_contacts(p, fps)
        assert not c[(t % 1.0 > 0.89) & (t % 1.0 < 0.96)].any(), fps      # mid-swing is never contact
        assert c[(t % 1.0 > 0.2) & (t % 1.0 < 0.6)].all(), fps             # mid-stance always is
        shares.append(c.mean())
    assert max(shares) - min(shares) < 0.03
    # A radius of frames (6 at every rate, as before) would have wiped the swing at 30 fps.
    p, t = _stance_and_swing(30.0)
    by_frames = majority_filter(np.linalg.norm(central_velocity(p, 30.0), axis=1) < 0.15, 6)
    assert by_frames[(t % 1.0 > 0.89) & (t % 1.0 < 0.96) & (t < 3.0)].all()


def test_contact_filter_refuses_a_negative_time():
    p, _ = _stance_and_swing(30.0)
    with pytest.raises(ContactError, match="0 seconds or more"):
        foot_contacts(p, 30.0, filter_seconds=-0.1)


def test_database_contacts_per_toe():
    a = straight_walk()
    # Plant the left toe in place for the first 100 frames.
    a.positions[:100, 3] = a.positions[0, 3]
    db = build_database(spec_default(), [a], contact_joints=("LeftToe", "RightToe"))
    assert db.contacts.shape == (300, 2)
    assert db.contacts[:95, 0].all()
    assert not db.contacts[:, 1].any()  # the right toe always moves with the root
    assert db.contact_joints == ("LeftToe", "RightToe")


# ----------------------------------------------------------------------------- errors


def test_feature_error_is_a_motion_matching_error():
    assert issubclass(FeatureError, MotionMatchingError)


@pytest.mark.parametrize("group, words", [
    (FeatureGroup("g", "bone_rotation", bones=["Hips"]), "unknown kind"),
    (FeatureGroup("g", "bone_position", bones=[]), "no bones"),
    (FeatureGroup("g", "trajectory_position", times_s=[]), "no sample times"),
    (FeatureGroup("g", "bone_position", bones=["Hips"], weight=float("nan")), "finite"),
    (FeatureGroup("g", "bone_position", bones=["Hips"], weight=float("inf")), "finite"),
    (FeatureGroup("g", "bone_position", bones=["Hips"], weight=-1.0), "negative weight"),
    (FeatureGroup("g", "trajectory_position", times_s=[float("nan")]), "sample time"),
])
def test_bad_groups_raise(group, words):
    with pytest.raises(FeatureError, match=words):
        FeatureSpec([group]).validate()
    with pytest.raises(FeatureError, match=words):
        build_database(FeatureSpec([group]), [straight_walk()])


def test_spec_level_errors():
    g = FeatureGroup("same", "bone_position", bones=["Hips"])
    with pytest.raises(FeatureError, match='both called "same"'):
        FeatureSpec([g, FeatureGroup("same", "bone_velocity", bones=["Hips"])]).validate()
    with pytest.raises(FeatureError, match="no groups"):
        FeatureSpec([]).validate()
    with pytest.raises(FeatureError, match="responsiveness"):
        FeatureSpec([g], responsiveness=float("nan")).validate()
    with pytest.raises(FeatureError, match="JSON"):
        FeatureSpec.from_json("{not json")
    with pytest.raises(FeatureError, match="kind"):
        FeatureSpec.from_dict({"groups": [{"name": "x"}]})


def test_missing_bone_names_clip_and_bone():
    spec = default_spec("LeftFoot", "RightFoot", "Pelvis")
    with pytest.raises(FeatureError, match='Clip "walk" has no bone "Pelvis"') as e:
        build_database(spec, [straight_walk()])
    assert "hips_velocity" in str(e.value)
    with pytest.raises(FeatureError, match='"Pelvis"'):
        clip_features(spec, straight_walk())
    with pytest.raises(FeatureError, match='no bone "LeftBigToe"'):
        build_database(spec_default(), [straight_walk()], contact_joints=("LeftBigToe", "RightToe"))


def test_clip_errors():
    spec = spec_default()
    with pytest.raises(FeatureError, match="no clips"):
        build_database(spec, [])
    short = straight_walk(n=1, name="tiny")
    with pytest.raises(FeatureError, match='"tiny" has 1 frame'):
        build_database(spec, [short])
    bad = straight_walk(name="nan")
    bad.positions[7, 2, 1] = np.nan
    with pytest.raises(FeatureError, match='"nan" .*"RightFoot" on frame 7'):
        build_database(spec, [bad])
    bad = straight_walk(name="inf")
    bad.root_pos[9, 0] = np.inf
    with pytest.raises(FeatureError, match="root position on frame 9"):
        build_database(spec, [bad])
    bad = straight_walk(name="q")
    bad.root_rot[3] = np.nan
    with pytest.raises(FeatureError, match="root rotation on frame 3"):
        build_database(spec, [bad])
    gone = straight_walk(name="gone")
    gone.excluded = np.ones(gone.num_frames, dtype=bool)
    with pytest.raises(FeatureError, match="Every frame of every clip is excluded"):
        build_database(spec, [gone])
    with pytest.raises(FeatureError, match="No frame can be offered"):
        build_database(spec, [straight_walk(n=40)])
    with pytest.raises(FeatureError, match="exclusion mask"):
        c = straight_walk()
        c.excluded = np.zeros(3, dtype=bool)
        build_database(spec, [c])


# ---------------------------------------------------------------------------- storage


def test_to_arrays_round_trip_through_npz():
    a, b = two_clips()
    b.excluded = np.zeros(b.num_frames, dtype=bool)
    b.excluded[5:9] = True
    spec = spec_default()
    spec.responsiveness = 2.0
    db = build_database(spec, [a, b], contact_joints=("LeftToe", "RightToe"))
    arrays = db.to_arrays()
    assert all(v.dtype != object for v in arrays.values())
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as f:
        again = database_from_arrays(f)
    assert again.spec == db.spec
    assert again.clip_names == db.clip_names and again.contact_joints == db.contact_joints
    for name in ("features", "raw", "clip_index", "frame_index", "valid", "excluded",
                 "contacts", "clip_fps", "clip_offsets"):
        x, y = getattr(db, name), getattr(again, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(again.norm.mean, db.norm.mean)
    np.testing.assert_array_equal(again.norm.scale, db.norm.scale)
    no_contacts = build_database(spec, [a]).to_arrays()
    assert "contacts" not in no_contacts
    assert database_from_arrays(no_contacts).contacts is None
    broken = dict(arrays)
    del broken["raw"]
    with pytest.raises(FeatureError, match="raw"):
        database_from_arrays(broken)
    broken = dict(arrays, valid=arrays["valid"][:-1])
    with pytest.raises(FeatureError, match="inconsistent"):
        database_from_arrays(broken)


# ------------------------------------------------------------------------ performance


def _random_take(frames, joints, fps=60.0):
    rng = np.random.default_rng(0)
    names = [f"J{k}" for k in range(joints)]
    pos = np.cumsum(rng.normal(0, 0.01, size=(frames, joints, 3)), axis=0)
    yaw = np.cumsum(rng.normal(0, 0.01, size=frames))
    root = np.cumsum(rng.normal(0, 0.01, size=(frames, 3)), axis=0)
    root[:, 2] = 0.0
    return Clip("take", fps, names, pos, root, yaw_quats(yaw))


def test_build_database_work_in_python_does_not_grow_with_frames_or_joints():
    """The build is vectorised: a take-sized clip (5562 frames, 23 joints), ten
    times the frames and ten times the joints make the same Python-level calls;
    a loop over frames or joints in Python would add thousands. (Timings:
    bench/bench_database.py.)"""
    spec = default_spec("J3", "J7", "J0")

    def calls(frames, joints):
        clip = _random_take(frames, joints)
        return python_calls(lambda: build_database(spec, [clip], contact_joints=("J4", "J8")))

    base = calls(5562, 23)
    assert calls(55620, 23) <= base + 10
    assert calls(5562, 230) <= base + 10
