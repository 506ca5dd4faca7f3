"""The floor clearance (core.bake.legs.floor): toe joints under the ground
are lifted by the leg's IK, toe tips under it are bent up about the toe joint,
feet above it are left bit for bit, and the ground is a function of where
each foot stands."""

import numpy as np

from core.bake.legs import floor
from core.bake.pose import forward_kinematics
from core.maths import transforms as tf
from leg_skeleton import leg_skeleton

TIPS = np.array([[0.0, -0.06, 0.0], [0.0, -0.06, 0.0]])   # each toe's tip in its own frame
S = 6


def _pose(hips_z=0.0, foot_pitch=0.0):
    sk = leg_skeleton()
    J = len(sk.names)
    locs = np.zeros((S, J, 3))
    locs[:, sk.hips, 2] = hips_z
    rots = np.zeros((S, J, 4))
    rots[..., 0] = 1.0
    # The left foot turned about X (positive: the toes down, a push-off).
    rots[:, 4] = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, foot_pitch))
    # Bend the knees a little so the IK can lift.
    for up, low in ((2, 3), (6, 7)):
        rots[:, up] = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, -0.2))
        rots[:, low] = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, 0.4))
    root = np.tile([1.0, 0.0, 0.0, 0.0], (S, 1))
    return sk, locs, rots, root


def _points(sk, locs, rots):
    pose = forward_kinematics(sk, locs, rots)
    toes = pose[:, [5, 9]][:, :, :3, 3]
    return toes, floor.toe_tips(sk, pose, TIPS), pose


def test_feet_above_the_floor_are_left_bit_for_bit():
    sk, locs, rots, root = _pose(hips_z=0.05)
    before = rots.copy()
    lifts = floor.clear_floor(sk, locs, rots, root, TIPS)
    assert np.array_equal(rots, before)
    assert not lifts.raised().any()
    assert floor.lift_summary(lifts, np.arange(S)) == (0, 0.0)


def test_a_sunk_foot_is_lifted_onto_the_floor():
    sk, locs, rots, root = _pose(hips_z=-0.03)
    toes, tips, _ = _points(sk, locs, rots)
    assert toes[..., 2].min() < -0.005                  # both toe joints under the floor at first
    lifts = floor.clear_floor(sk, locs, rots, root, TIPS)
    toes2, tips2, _ = _points(sk, locs, rots)
    assert toes2[..., 2].min() > -1e-4 and tips2[..., 2].min() > -1e-4
    assert np.allclose(lifts.joint, np.maximum(-toes[..., 2], 0.0))
    assert np.allclose(toes2[..., :2], toes[..., :2], atol=1e-4)      # raised, not moved along the floor
    frames, most = floor.lift_summary(lifts, np.arange(S))
    assert frames == S and abs(most - lifts.raised().max()) < 1e-12 and most > 0.005


def test_a_push_off_bends_the_toe_instead_of_going_through():
    sk, locs, rots, root = _pose(hips_z=0.05, foot_pitch=0.4)
    toes, tips, pose = _points(sk, locs, rots)
    assert tips[:, 0, 2].min() < -0.01 and toes[:, 0, 2].min() > 0.0    # the toe joint above, its tip under
    ankle = pose[:, 4, :3, 3].copy()
    lifts = floor.clear_floor(sk, locs, rots, root, TIPS)
    toes2, tips2, pose2 = _points(sk, locs, rots)
    assert tips2[:, 0, 2].min() > -1e-6 and abs(tips2[:, 0, 2]).max() < 1e-6      # the tip rests on the floor
    assert np.allclose(pose2[:, 4, :3, 3], ankle) and np.allclose(toes2, toes)    # ankle and ball stay
    assert not lifts.joint.any() and (lifts.tip[:, 0] > 0.01).all() and not lifts.tip[:, 1].any()


def test_the_ground_is_a_height_field_under_each_foot():
    sk, locs, rots, root = _pose(hips_z=0.01)

    def ground(xy):          # a step 4 cm high under the left foot (x > 0) only
        return np.where(xy[..., 0] > 0.0, 0.04, 0.0)

    toes, _tips, _ = _points(sk, locs, rots)
    floor.clear_floor(sk, locs, rots, root, TIPS, ground=ground)
    toes2, tips2, _ = _points(sk, locs, rots)
    assert toes2[:, 0, 2].min() > 0.04 - 1e-4 and tips2[:, 0, 2].min() > 0.04 - 1e-4
    assert np.allclose(toes2[:, 1], toes[:, 1])          # the right foot's ground is lower: left as it was


def test_tip_offsets_prefer_a_toe_end_bone():
    parents = np.array([-1, 0, 1])
    offsets = np.tile(np.eye(4), (3, 1, 1))
    offsets[2, :3, 3] = (0.0, 0.05, 0.01)
    legs = [(0, 0, 0, 1), (0, 0, 0, 2)]
    tips = floor.tip_offsets(parents, offsets, np.array([1.0, 0.2, 0.07]), legs)
    assert np.allclose(tips, [[0.0, 0.05, 0.01], [0.0, 0.07, 0.0]])
    assert np.allclose(floor.tip_offsets(parents, offsets, None, legs)[1], 0.0)


def test_the_envelope_never_falls_below_and_eases_a_one_step_dip():
    x = np.zeros(21)
    x[10] = 1.0
    x[13] = 0.4
    e = floor.envelope(x, 3)
    assert np.all(e >= x - 1e-12)
    assert np.abs(np.diff(e)).max() < 0.5            # a one-step spike of 1 rises over several steps
    assert e[0] == 0.0 and e[-1] == 0.0               # twice the half-window from the dips nothing changes
    assert np.array_equal(floor.envelope(x, 0), x)
    assert floor.floor_ease_steps(1 / 60) == 6 and floor.floor_ease_steps(1 / 24) == 2


def test_a_one_step_dip_bends_the_toe_gradually_with_easing():
    """A toe tip under the floor on one step only: without easing the toe turns
    on that step alone; eased, the turn spreads over the steps around it."""
    sk, locs, rots, root = _pose(hips_z=0.0, foot_pitch=0.25)
    rots_flat = rots.copy()
    rots_flat[:, 4] = tf.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.full(S, -0.3))
    rots_flat[3, 4] = rots[3, 4]                      # the push-off only on step 3
    steps = {}
    for half in (0, 2):
        r = rots_flat.copy()
        floor.clear_floor(sk, locs, r, root, TIPS, half=half)
        _toes, tips, _ = _points(sk, locs, r)
        assert tips[..., 2].min() > -1e-4
        d = tf.quat_mul(tf.quat_conjugate(rots_flat[:, 5]), r[:, 5])
        turn = 2.0 * np.arccos(np.clip(np.abs(d[:, 0]), 0.0, 1.0))
        steps[half] = turn
    assert np.count_nonzero(steps[0] > 1e-9) == 1
    assert np.count_nonzero(steps[2] > 1e-9) > 1
    assert np.abs(np.diff(steps[2])).max() < np.abs(np.diff(steps[0])).max()
