"""A bone above the hips: does it carry the trajectory, stay still, or neither?"""

import numpy as np
import pytest

from core.maths import transforms as tf
from core.skeleton import virtual_root as vr


def _walk(frames=300, height=0.95):
    """Hips walking a quarter circle of radius 3 m, facing along it, swaying."""
    t = np.linspace(0.0, np.pi / 2, frames)
    pos = np.stack([3 * np.cos(t), 3 * np.sin(t), height + 0.02 * np.sin(20 * t)], axis=1)
    facing = np.stack([-np.sin(t), np.cos(t), np.zeros_like(t)], axis=1)
    yaw = np.arctan2(facing[:, 0], -facing[:, 1])
    rot = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw))
    return tf.compose(pos, rot), facing


def _bone(pos, rot):
    return tf.compose(pos, np.broadcast_to(rot, pos.shape[:1] + (3, 3)))


def test_a_bone_on_the_ground_under_the_hips_turning_with_them_carries_the_trajectory():
    hips, facing = _walk()
    # Its own axes turned a quarter about Z from the hips': its forward is its +X, say.
    turn = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2))
    ground = hips[:, :3, 3] * [1, 1, 0]
    top = _bone(ground, hips[:, :3, :3] @ turn)
    role, local = vr.top_bone_role(top, facing, hips)
    assert role == "trajectory"
    pos, quat = vr.trajectory_of_bone(top, local)
    assert np.abs(pos - ground).max() < 1e-12
    assert np.abs(tf.quat_rotate(quat, np.array([0.0, -1.0, 0.0])) - facing).max() < 1e-9


@pytest.mark.parametrize("what, role", [("still", "static"), ("behind", "other"), ("not_turning", "other"),
                                        ("in_the_air", "off_ground")])
def test_bones_that_do_not_carry_it(what, role):
    hips, facing = _walk()
    ground = hips[:, :3, 3] * [1, 1, 0]
    if what == "still":
        top = _bone(np.zeros_like(ground), np.eye(3))
    elif what == "behind":
        top = _bone(ground - 0.5 * facing, hips[:, :3, :3])       # half a metre behind: more than 30% of 0.95 m
    elif what == "not_turning":
        top = _bone(ground, np.eye(3))
    else:
        top = hips
    assert vr.top_bone_role(top, facing, hips)[0] == role


def test_forward_from_pose_when_the_rest_has_no_legs_down():
    # Hips at the origin, two legs going down at x = +-0.1, toes forward (-Y);
    # the hips turned by a yaw on each frame.
    parents = [-1, 0, 1, 0, 3]
    heads = np.array([[0, 0, 1.0], [0.1, 0, 0.9], [0.1, 0, 0.1], [-0.1, 0, 0.9], [-0.1, 0, 0.1]])
    tails = heads + np.array([[0, 0, 0.1], [0, 0, -0.8], [0, -0.15, -0.1], [0, 0, -0.8], [0, -0.15, -0.1]])
    yaw = np.linspace(0, 2.0, 20)
    rot = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw))
    posed_h = np.einsum("fij,kj->fki", rot, heads)
    posed_t = np.einsum("fij,kj->fki", rot, tails)
    local = vr.forward_from_pose(posed_h, posed_t, parents, 0, rot)
    assert np.allclose(local, [0, -1, 0], atol=1e-12)
    flat = np.zeros_like(posed_h)
    assert vr.forward_from_pose(flat, flat, parents, 0, rot) is None
