"""Feet planted from the played data: a foot the data calls
in contact holds its place and heading while the root is dragged, on a small
synthetic skeleton; and the report's warnings from core.measure.bake_quality."""

import numpy as np
import pytest

from core.bake import pipeline as bake
from core.measure import bake_quality, path_metrics as pm
from core.maths import transforms as tf
from core.bake.legs.foot_lock import run_foot_lock
from leg_skeleton import leg_skeleton

FPS = 30.0
DT = 1.0 / FPS

_skeleton = leg_skeleton


def _dragged_pose(S, knee=0.8):
    """The whole body dragged 0.5 cm a frame along +X and turned 0.5 degree a
    frame (what the path's pull and clamp do), legs slightly bent."""
    sk = _skeleton()
    J = len(sk.names)
    locs = np.zeros((S, J, 3))
    rots = np.tile(np.array([1.0, 0, 0, 0]), (S, J, 1))
    locs[:, 0, 0] = 0.005 * np.arange(S)
    rots[:, 0] = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.radians(0.5) * np.arange(S))
    bend = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, knee))
    for up, low in ((2, 3), (6, 7)):
        rots[:, up] = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, -knee / 2))
        rots[:, low] = bend
    return sk, locs, rots


def _feet(sk, locs, rots):
    pose = bake.forward_kinematics(sk, locs, rots)
    toes, ankles = bake.leg_points(sk, pose)
    return toes, ankles


def test_contact_lock_holds_a_dragged_planted_foot():
    S = 26
    sk, locs, rots = _dragged_pose(S)
    contacts = np.zeros((S, 2), dtype=bool)
    contacts[2:16, 0] = True            # the data plants the left foot on frames 2-15
    root_quat = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.zeros(S))
    settings = bake.BakeSettings()      # lock on contact by default
    assert settings.foot_lock.lock_on_contact
    out, locked, count, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, settings)
    toes, ankles = _feet(sk, locs, out)
    assert count == 1 and locked[2:16, 0].all() and not locked[:, 1].any()
    # Toe and ankle stay where they were when the data planted the foot (the
    # animation drags them 6.5 cm and turns the foot 6.5 degrees meanwhile).
    assert np.abs(toes[2:16, 0] - toes[2, 0]).max() < 1e-6
    assert np.abs(ankles[2:16, 0] - ankles[2, 0]).max() < 1e-6
    raw_toes, _ = _feet(sk, locs, rots)
    assert np.linalg.norm(raw_toes[15, 0] - raw_toes[2, 0]) > 0.06
    # The free foot is untouched; the released foot blends back toward the animation.
    assert np.abs(toes[:, 1] - raw_toes[:, 1]).max() < 1e-9
    gap = np.linalg.norm(toes[16:, 0] - raw_toes[16:, 0], axis=1)
    assert np.all(np.diff(gap) < 0) and gap[-1] < 0.5 * gap[0]
    # The same with the lock waiting for a still baked toe: the dragged toe never locks.
    old = bake.BakeSettings.of(lock_on_contact=False)
    _, locked_old, count_old, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, old)
    assert count_old == 0


def test_a_toe_that_came_down_locks_before_the_data_says_contact():
    S = 26
    sk, locs, rots = _dragged_pose(S)
    raw_toes, _ = _feet(sk, locs, rots)
    down = float(raw_toes[0, 0, 2])
    locs[:6, 0, 2] += 0.05              # the body 5 cm higher on frames 0-5: the toe comes down on frame 6 ...
    contacts = np.zeros((S, 2), dtype=bool)
    contacts[8:16, 0] = True            # ... and the data plants the left foot on frames 8-15
    root_quat = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.zeros(S))
    # The touchdown rule alone (the stance rule would also hold the toe dragged after the contact).
    settings = bake.BakeSettings.of(toe_floor=down - 0.01, lock_stance=False)
    assert settings.foot_lock.lock_on_touchdown
    out, locked, count, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, settings)
    toes, _ = _feet(sk, locs, out)
    # It locks where the toe came down and holds it there (the animation drags it 1 cm more before frame 8).
    assert count == 1 and locked[6:16, 0].all() and not locked[:6, 0].any()
    assert np.abs(toes[6:16, 0, :2] - toes[6, 0, :2]).max() < 1e-6
    # Without the touchdown (off, or the toe down 2 cm higher than planted) it locks on the data's contact.
    for settings in (bake.BakeSettings.of(toe_floor=down - 0.01, lock_on_touchdown=False, lock_stance=False),
                     bake.BakeSettings.of(toe_floor=down - 0.03, lock_stance=False)):
        _, locked, _, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, settings)
        assert locked[8:16, 0].all() and not locked[:8, 0].any()
    # Down since the first frame (longer than 0.15 s before the contact): a dragging toe, not a landing.
    locs[:6, 0, 2] -= 0.05
    _, locked, _, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT,
                                           bake.BakeSettings.of(toe_floor=down - 0.01, lock_stance=False))
    assert locked[8:16, 0].all() and not locked[:8, 0].any()


def test_contact_lock_waits_for_the_data_to_lift_after_a_far_drift():
    n = 30
    toes = np.column_stack([0.05 * np.arange(n), np.zeros(n), np.zeros(n), np.zeros(n)])
    contacts = np.ones(n, dtype=bool)
    contacts[20:] = False
    contacts[25:] = True
    wanted, locked, count = run_foot_lock(contacts, toes, None, DT, on_contact=True, unlock_distance=0.2)
    # Locks at once, releases when the animation is over 20 cm away (frame 5), does
    # not lock again until the data has lifted the foot, then locks on the next contact.
    assert locked[0] and locked[4] and not locked[5:25].any() and locked[25]
    assert count == 2
    assert np.allclose(wanted[:5, :3], 0.0)


def _joints(T, fps=FPS):
    t = np.arange(T) / fps
    hips = np.column_stack([1.2 * t, np.zeros(T), np.full(T, 0.95)])
    side = np.array([0.1, -0.1])
    ankles = np.zeros((T, 2, 3))
    ankles[..., 0] = 0.3
    ankles[..., 1] = side
    ankles[..., 2] = 0.08
    hip_joints = np.stack([hips + [0, 0.1, 0], hips + [0, -0.1, 0]], axis=1)   # faces +X: travel
    toes = ankles + [0.1, 0, -0.05]
    return bake_quality.Joints(fps=fps, hips=hips, hip_joints=hip_joints, ankles=ankles, toes=toes,
                               contacts=np.ones((T, 2), dtype=bool))


def test_figures_are_path_metrics():
    j = _joints(60)
    j.ankles[::2, 0, 0] += 0.01                    # a jittering planted left ankle
    raw = _joints(90)
    raw.ankles[::3, 1, 0] += 0.004
    f = bake_quality.figures(j, [raw], 0.08, path=j.hips + [0, 0.05, 0])
    mine = pm.ankle_sliding(j.ankles, j.hips, FPS, 0.08, contacts=j.contacts)["cm_per_foot_per_moving_s"]
    theirs = pm.ankle_sliding(raw.ankles, raw.hips, FPS, 0.08, contacts=raw.contacts)["cm_per_foot_per_moving_s"]
    assert f["contact_sliding_cm_per_foot_per_moving_s"] == pytest.approx(mine)
    assert f["contact_sliding_ratio"] == pytest.approx(mine / theirs)
    assert f["hips_tracking_max_m"] == pytest.approx(0.05)
    assert f["facing_error_travel_mean_deg"] == pytest.approx(0.0, abs=1e-6)


def test_warnings_name_a_frozen_pose_a_slide_and_a_turned_body():
    T = 60
    j = _joints(T)
    frames = np.arange(1, T + 1)
    searched = np.zeros(T, dtype=bool)
    searched[::5] = True
    jumped = searched.copy()
    # The right ankle slides 12 cm while the data holds it planted; the body faces 90 degrees off.
    j.ankles[:, 1, 0] = 0.5 + np.linspace(0.0, 0.12, T)
    j.hip_joints[:] = np.stack([j.hips + [0.1, 0, 0], j.hips - [0.1, 0, 0]], axis=1)
    w = bake_quality.warnings(j, frames, 0.08, searched, jumped)
    text = " ".join(w)
    assert "Most searches jump (12 of 12)" in text and "frames 1-56" in text
    assert "slides more than 5 cm" in text and "right foot" in text
    assert "faces more than 20 degrees off the direction of travel" in text
    # With the rows played known, a frozen pose is one whose searches jump back to
    # about the pose playing before; jumps that move on through the take are not.
    frozen_rows = np.full(T, 4000)
    assert "Most searches jump" in " ".join(bake_quality.warnings(j, frames, 0.08, searched, jumped, rows=frozen_rows))
    moving_on = 4000 + 37 * np.arange(T)
    assert "Most searches jump" not in " ".join(bake_quality.warnings(j, frames, 0.08, searched, jumped,
                                                                      rows=moving_on))
    # A fine bake: searches play on, feet hold, the body faces its travel: no warning.
    ok = _joints(T)
    assert bake_quality.warnings(ok, frames, 0.08, searched, np.zeros(T, dtype=bool)) == [
        "The feet do not step while the body travels at frames 1-60."]


def test_coverage_warning_names_the_fast_frames():
    T = 90
    path = np.zeros((T, 3))
    path[:, 0] = np.concatenate([np.linspace(0, 1, 45), 1 + 4.0 * np.arange(1, 46) / FPS])
    w = bake_quality._coverage_warnings(path, FPS, np.arange(1, T + 1), (2.0, 10.0))
    assert len(w) == 1 and "a speed up to 4.0 m/s, more than the database's 2.0 m/s" in w[0]
