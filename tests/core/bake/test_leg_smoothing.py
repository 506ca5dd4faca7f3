"""Smooth legs around foot locks and stride warping (and
the rotation-change figure): on a small synthetic skeleton, a released foot
does not fold the knee in a few frames, a toe the floor lifts rises gradually,
a stride warp keeps a planted toe planted while the root outruns the data, and
the strafe warp turns the spine no faster than its rate."""

import numpy as np
import pytest

from core.bake import pipeline as bake, playback, strafe
from core.bake.legs import apply as legs_apply, leg_release as lr, solver, stride_warp as sw
from core.measure import path_metrics as pm
from core.maths import transforms as tf
from leg_skeleton import leg_skeleton

FPS = 30.0
DT = 1.0 / FPS
X = np.array([1.0, 0.0, 0.0])
Z = np.array([0.0, 0.0, 1.0])

_skeleton = leg_skeleton


def _pose(S, knee):
    """Channels with the knees bent by ``knee`` (S,) radians (the thigh tilted
    back by half of it, so the foot stays under the hip)."""
    sk = _skeleton()
    locs = np.zeros((S, len(sk.names), 3))
    rots = np.tile(np.array([1.0, 0, 0, 0]), (S, len(sk.names), 1))
    for up, low in ((2, 3), (6, 7)):
        rots[:, up] = tf.quat_from_axis_angle(X, -0.5 * knee)
        rots[:, low] = tf.quat_from_axis_angle(X, knee)
    return sk, locs, rots


def _knee_steps(rots, side=0):
    """Degrees the knee turns per step."""
    return np.degrees(pm.rotation_steps(rots[:, [3 if side == 0 else 7]])[:, 0])


def _dragged_then_lifted(S=50, lift_at=16):
    """The body dragged 2 cm a frame along -Y (ahead of a planted left foot:
    28 cm by the release), then the data lifts the foot and bends the knee for
    the swing (0.1 to 0.9 radians over 20 frames, eased)."""
    t = np.arange(S)
    u = np.clip((t - lift_at) / 20.0, 0.0, 1.0)
    sk, locs, rots = _pose(S, 0.1 + 0.8 * u * u * (3.0 - 2.0 * u))
    locs[:, 0, 1] = -0.02 * t
    contacts = np.zeros((S, 2), dtype=bool)
    contacts[2:lift_at, 0] = True
    root_quat = tf.quat_from_axis_angle(Z, np.zeros(S))
    return sk, locs, rots, contacts, root_quat


def test_a_released_foot_bends_its_knee_with_the_animation():
    sk, locs, rots, contacts, root_quat = _dragged_then_lifted()
    anim_most = _knee_steps(rots).max()
    new = bake.BakeSettings.of(toe_floor=None)
    assert new.foot_lock.release_in_joints
    out, locked, _, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, new)
    assert locked[2:16, 0].all() and not locked[16:, 0].any()
    # The lock held the foot (within 1 cm until the body, 24 cm on, pulls the
    # leg to its least knee bend), and the knee never turns much faster than
    # the animation's own swing.
    toes = bake.leg_points(sk, bake.forward_kinematics(sk, locs, out))[0]
    assert np.abs(toes[2:14, 0, :2] - toes[2, 0, :2]).max() < 0.01
    assert _knee_steps(out).max() < 1.2 * anim_most
    # The released toe returns to the animation.
    anim_toes = bake.leg_points(sk, bake.forward_kinematics(sk, locs, rots))[0]
    gap = np.linalg.norm(toes[:, 0] - anim_toes[:, 0], axis=1)
    assert gap[15] > 0.1 and gap[-1] < 0.01
    # Blending the toe's world offset out instead (the old way) keeps the leg
    # straight while the target is out of reach, then folds it in a few frames.
    old = bake.BakeSettings.of(toe_floor=None, release_in_joints=False, knee_min_bend=0.0)
    out_old, _, _, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, old)
    assert _knee_steps(out_old).max() > 1.5 * anim_most


def test_the_floor_lift_is_the_least_curve_over_the_need_within_the_rate():
    need = np.array([0.0, 0.0, 0.0, 0.0, 0.05, 0.02, 0.0, -0.01, 0.0, 0.0, 0.0])
    lift = lr.floor_lift(need, 0.01)
    assert np.all(lift >= np.maximum(need, 0.0) - 1e-12)
    assert np.abs(np.diff(lift)).max() <= 0.01 + 1e-12
    assert np.isclose(lift[4], 0.05) and np.isclose(lift[0], 0.01) and lift[-1] == 0.0
    assert lr.floor_lift(np.zeros(5), 0.01).max() == 0.0


def test_a_toe_under_the_floor_is_lifted_gradually():
    # A free toe dips 5 cm under the floor for three frames (a blend after a jump).
    S = 30
    sk, locs, rots = _pose(S, np.full(S, 0.4))
    locs[:, 1, 2] = -0.05 * ((np.arange(S) >= 12) & (np.arange(S) < 15))
    contacts = np.zeros((S, 2), dtype=bool)
    root_quat = tf.quat_from_axis_angle(Z, np.zeros(S))
    toes = bake.leg_points(sk, bake.forward_kinematics(sk, locs, rots))[0]
    floor = float(toes[0, 0, 2]) - 0.01
    settings = bake.BakeSettings.of(toe_floor=floor, use_foot_lock=False)
    out, _, _, lifted = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, settings)
    got = bake.leg_points(sk, bake.forward_kinematics(sk, locs, out))[0]
    assert got[..., 2].min() >= floor - 1e-4
    assert np.abs(got - lifted).max() < 1e-4
    rate = settings.legs.toe_floor_rate * DT
    assert np.abs(np.diff(got[:, 0, 2] - toes[:, 0, 2])).max() <= rate + 1e-4
    # Lifted by exactly the depth (no rate) the toe jumps 4 cm in a frame.
    hard = bake.BakeSettings.of(toe_floor=floor, use_foot_lock=False, toe_floor_rate=0.0)
    out_hard, _, _, _ = bake.apply_foot_lock(sk, locs, rots.copy(), contacts, root_quat, DT, hard)
    hard_toes = bake.leg_points(sk, bake.forward_kinematics(sk, locs, out_hard))[0]
    assert np.abs(np.diff(hard_toes[:, 0, 2] - toes[:, 0, 2])).max() > 0.03


def _stance(S, v_data, v_root):
    """The data walks along -Y at ``v_data`` with the left toe planted (in the
    data's own frame it stays put, so relative to the root it moves back);
    the bake's root travels at ``v_root``."""
    sk, locs, rots = _pose(S, np.full(S, 0.6))
    t = np.arange(S) * DT
    locs[:, 0, 1] = -v_root * t                    # the bake's root
    locs[:, 1, 1] = -0.15 + v_data * t             # the data's stance: the body passes over the foot
    played = playback.Played(rows=np.zeros(S, dtype=np.int64), searched=np.zeros(S, dtype=bool),
                          jumped=np.zeros(S, dtype=bool), cost=np.zeros(S),
                          root_pos=np.column_stack([np.zeros(S), -v_root * t, np.zeros(S)]), root_yaw=np.zeros(S))
    row_steps = np.array([[0.0, -v_data * DT, 0.0]])
    return sk, locs, rots, played, row_steps


def test_stride_warp_keeps_a_planted_toe_in_place_while_the_root_outruns_the_data():
    S = 12
    sk, locs, rots, played, row_steps = _stance(S, v_data=1.0, v_root=1.3)
    root_quat = tf.quat_from_axis_angle(Z, np.zeros(S))
    before = bake.leg_points(sk, bake.forward_kinematics(sk, locs, rots))[0]
    # Unwarped, the planted toe slides with the root's extra 0.3 m/s (3.3 cm over the stance).
    assert np.ptp(before[:, 0, 1]) > 0.03
    k, _ = sw.stride_scale(played.root_pos, sw.data_travel(played.root_pos, played.root_yaw, row_steps,
                                                           played.rows), DT)
    assert np.allclose(k, 1.3)
    legs_apply.warp_strides(sk, locs, rots, root_quat, played, row_steps, DT)
    after = bake.leg_points(sk, bake.forward_kinematics(sk, locs, rots))[0]
    assert np.abs(after[:, 0, :2] - after[0, 0, :2]).max() < 0.01
    assert np.abs(after[..., 2] - before[..., 2]).max() < 1e-6      # heights are left alone
    # Where root and data agree, nothing moves.
    sk, locs, rots, played, row_steps = _stance(S, v_data=1.0, v_root=1.0)
    same = rots.copy()
    legs_apply.warp_strides(sk, locs, same, root_quat, played, row_steps, DT)
    assert np.abs(same - rots).max() < 1e-12


def test_stride_scale_is_limited_and_fades_out_where_the_data_stands():
    S = 40
    root = np.column_stack([np.zeros(S), -3.0 * DT * np.arange(S), np.zeros(S)])
    steps = np.tile([0.0, -1.0 * DT], (S, 1))
    k, u = sw.stride_scale(root, steps, DT)
    assert np.allclose(k, sw.STRIDE_RANGE[1]) and np.allclose(u, [0.0, -1.0])
    k, _ = sw.stride_scale(root, np.zeros((S, 2)), DT)      # the data stands still
    assert np.allclose(k, 1.0)
    # Every step jumps (a frozen pose): the data plays no steps of its own to scale.
    k, _ = sw.stride_scale(root, steps, DT, jumped=np.ones(S, dtype=bool))
    assert np.allclose(k, 1.0)
    k, _ = sw.stride_scale(root, steps, DT, jumped=np.arange(S) % 20 == 10)   # a jump now and then
    assert np.allclose(k, sw.STRIDE_RANGE[1])


def test_least_knee_bend_keeps_an_overreached_knee_bent():
    hip = np.array([[0.0, 0.0, 1.0]])
    knee = np.array([[0.0, -0.05, 0.58]])          # the animation's knee bent a little
    ankle = np.array([[0.0, 0.0, 0.16]])
    far = np.array([[0.0, 0.5, 0.1]])              # out of reach
    bend = np.radians(15.0)
    target = solver.soft_reach(hip, knee, ankle, far, min_bend=bend)
    thigh, shin = np.linalg.norm(knee - hip), np.linalg.norm(ankle - knee)
    d = np.linalg.norm(target - hip)
    got = np.pi - np.arccos((thigh ** 2 + shin ** 2 - d ** 2) / (2 * thigh * shin))
    own = np.pi - np.arccos((thigh ** 2 + shin ** 2 - np.linalg.norm(ankle - hip) ** 2) / (2 * thigh * shin))
    assert got >= min(bend, own) - 1e-6
    straight = solver.soft_reach(hip, knee, ankle, far)
    assert np.linalg.norm(straight - hip) > d


def test_strafe_warp_rate_limits_the_spine_turn():
    S = 60
    yaw = np.zeros(S)
    vel = np.zeros((S, 3))
    vel[:, 0] = np.where(np.arange(S) < 30, 1.0, 0.0)   # sideways, then a sudden stop
    free = strafe.strafe_warp(yaw, vel, bake.BakeSettings.of(strafe_warp_rate=0.0), DT)
    limited = strafe.strafe_warp(yaw, vel, bake.BakeSettings.of(strafe_warp_rate=2.0), DT)
    assert np.abs(np.diff(free)).max() > np.radians(50)
    assert np.abs(np.diff(limited)).max() <= 2.0 * DT + 1e-9
    assert np.isclose(limited[10], free[10]) and np.isclose(limited[-1], 0.0)
    step = lr.slew_limited(np.repeat([0.0, 1.0], 6), 0.25)
    assert np.abs(np.diff(step)).max() <= 0.25 + 1e-12 and step[0] == 0.0 and step[-1] == 1.0


@pytest.mark.parametrize("name", ["toe_floor_rate", "strafe_warp_rate", "knee_min_bend"])
@pytest.mark.parametrize("value", [-0.1, float("nan")])
def test_negative_or_missing_rates_are_refused(name, value):
    with pytest.raises(bake.BakeError, match=name.replace("_", " ")):
        bake.BakeSettings.of(**{name: value}).check()
    bake.BakeSettings.of(**{name: 0.0}).check()
