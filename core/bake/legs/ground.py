"""The bake on uneven ground (core.bake.ground.GroundGrid), after the legs' stages
on the flat floor: the root follows the ground's height under it, the hips drop
for the lower foot, each foot is raised onto the surface beneath it (its points
keeping the clearance they had over the flat floor) and tilted along it, by
two-joint IK on hip-knee-ankle. A swinging foot is raised ahead of a step (the
highest ground its points reach over a short window), so no toe cuts an edge."""

import numpy as np

from ...maths import ik
from ...maths import transforms as tf
from ..pose import forward_kinematics, leg_joints
from .solver import IK_POLE_BLEND, soft_reach

ROOT_SMOOTH = 0.15      # s: the root's height follows the ground under it, smoothed over this (Gaussian sigma)
HIPS_WINDOW = 0.3       # s: the hips stay under the lowest reach of either leg over this window, smoothed
SWING_WINDOW = 0.1      # s: a foot is raised to the highest ground its points meet this far before and after
MAX_TILT = np.radians(25.0)   # a foot tilts along the surface by at most this
FOOT_SHARES = (0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 1.4)   # points from ankle (0) to toe (1) and the toe's tip
MIN_CLEARANCE = -0.01   # m: no foot point goes lower than this over the ground (the flat bake's toe tips dip under 0)
REACH_SHARE = 0.97      # the hips may rise until a leg reaches this share of its length (or its own reach)


def _window(x, half):
    """(S + 2 half, ...) ``x`` padded with its end values, for sliding windows of 2 half + 1."""
    return np.concatenate([np.repeat(x[:1], half, axis=0), x, np.repeat(x[-1:], half, axis=0)])


def sliding(x, half, how):
    """``how`` (np.max, np.min) of ``x`` (S, ...) over each step's window of +-``half`` steps."""
    if half <= 0:
        return x.copy()
    w = np.lib.stride_tricks.sliding_window_view(_window(x, half), 2 * half + 1, axis=0)
    return how(w, axis=-1)


def smoothed(x, half):
    """``x`` (S, ...) smoothed by a Gaussian of sigma half/3 cut at +-``half`` steps."""
    if half <= 0:
        return x.copy()
    k = np.exp(-0.5 * (np.arange(-half, half + 1) / (half / 3.0)) ** 2)
    w = np.lib.stride_tricks.sliding_window_view(_window(x, half), 2 * half + 1, axis=0)
    return w @ (k / k.sum())


def lower_envelope(x, half):
    """A smooth curve never above ``x``: the minimum over +-half steps, smoothed within them."""
    return smoothed(sliding(x, half, np.min), half)


def upper_envelope(x, half):
    """A smooth curve never under ``x``."""
    return smoothed(sliding(x, half, np.max), half)


def tilts(normals):
    """Quaternions (..., 4) turning +z onto ``normals`` (..., 3), by at most :data:`MAX_TILT`."""
    axis = np.cross(np.array([0.0, 0.0, 1.0]), normals)
    s = np.linalg.norm(axis, axis=-1)
    angle = np.minimum(np.arctan2(s, normals[..., 2]), MAX_TILT)
    axis = np.where(s[..., None] > 1e-9, axis / np.maximum(s, 1e-12)[..., None], np.array([1.0, 0.0, 0.0]))
    return tf.quat_from_axis_angle(axis, angle)


def foot_lifts(ground, ankles, toes, dt):
    """(lifts (S, 2), tilts (S, 2, 4), tilted ankles (S, 2, 3)): each foot turns
    along the surface about its toe (which the foot lock holds, so it does not
    slide) and rises so that every foot point keeps its flat-floor clearance over
    the ground (at least :data:`MIN_CLEARANCE`)."""
    q = tilts(ground.normal_at(0.5 * (ankles + toes)[..., :2]))
    need = np.full(ankles.shape[:2], -np.inf)
    for share in FOOT_SHARES:
        p = ankles + share * (toes - ankles)
        turned = toes + tf.quat_rotate(q, p - toes)
        clearance = np.maximum(p[..., 2], MIN_CLEARANCE)
        need = np.maximum(need, ground.height_at(turned[..., :2]) + clearance - turned[..., 2])
    return upper_envelope(need, int(round(SWING_WINDOW / dt))), q, toes + tf.quat_rotate(q, ankles - toes)


def hips_rise(hips, ankles, lifts, hips_ground, length, dt):
    """(S,) how far the hips rise: no higher than either leg can reach its raised
    ankle, nor than the ground under them; a smooth lower envelope."""
    d = ankles - hips[:, None]
    flat2 = np.sum(d[..., :2] ** 2, axis=-1)
    reach = np.maximum(np.linalg.norm(d, axis=-1), REACH_SHARE * length)
    most = lifts + d[..., 2] + np.sqrt(np.maximum(reach ** 2 - flat2, 0.0))
    return lower_envelope(np.minimum(most.min(axis=1), hips_ground), int(round(HIPS_WINDOW / dt)))


def _shift(skeleton, pose, locs, joint, rise):
    """Raise ``joint`` by ``rise`` (S,) metres in armature space through its location channel (in place)."""
    parent = skeleton.parents[joint]
    frame = skeleton.offsets[joint][None] if parent < 0 else pose[:, parent] @ skeleton.offsets[joint]
    up = np.zeros((len(rise), 3))
    up[:, 2] = rise
    locs[:, joint] += np.einsum("sji,sj->si", np.broadcast_to(frame[..., :3, :3], (len(rise), 3, 3)), up)


def follow_ground(skeleton, locs, rots, root_quat, ground, dt, min_bend=0.0):
    """Put the flat bake's pose (``locs``, ``rots``, in place) on ``ground``.
    Returns (the root's rise (S,), the toes (S, 2, 3))."""
    pose = forward_kinematics(skeleton, locs, rots)
    root, hips = skeleton.root, skeleton.hips
    S = len(locs)
    rise = smoothed(ground.height_at(pose[:, root, :2, 3]), int(round(ROOT_SMOOTH / dt)))
    legs = skeleton.legs
    ankles = pose[:, [leg[2] for leg in legs]][:, :, :3, 3]
    toes = pose[:, [leg[3] for leg in legs]][:, :, :3, 3]
    lifts, q_tilt, tilted = foot_lifts(ground, ankles, toes, dt)
    length = np.stack([np.linalg.norm(pose[:, leg[1], :3, 3] - pose[:, leg[0], :3, 3], axis=-1)
                       + np.linalg.norm(pose[:, leg[2], :3, 3] - pose[:, leg[1], :3, 3], axis=-1)
                       for leg in legs], axis=1)
    hips_at = pose[:, hips, :3, 3]
    hips_ground = smoothed(ground.height_at(hips_at[:, :2]), int(round(ROOT_SMOOTH / dt)))
    hips_up = hips_rise(hips_at, tilted, lifts, hips_ground, length, dt)
    ancestors = _ancestors(skeleton.parents, hips)
    if root != hips and root in ancestors:
        _shift(skeleton, pose, locs, root, rise)
        pose = forward_kinematics(skeleton, locs, rots, [hips])
        _shift(skeleton, pose, locs, hips, hips_up - rise)
    else:
        _shift(skeleton, pose, locs, hips, hips_up)
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    forward = tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0]))
    offset_q = tf.matrix_to_quat(skeleton.offsets[:, :3, :3])
    for side, (up, low, foot, toe) in enumerate(legs):
        hip_p, knee_p, ankle_p = (pose[:, b, :3, 3] for b in (up, low, foot))
        wanted = tilted[:, side] + np.column_stack([np.zeros((S, 2)), lifts[:, side]])
        target = soft_reach(hip_p, knee_p, ankle_p, wanted, min_bend=min_bend)
        d_hip, d_knee = ik.two_bone_ik(hip_p, knee_p, ankle_p, target, forward, pole_blend=IK_POLE_BLEND)
        q = [tf.matrix_to_quat(pose[:, b, :3, :3]) for b in (up, low, foot, skeleton.parents[up])]
        world = [tf.quat_mul(d_hip, q[0]), tf.quat_mul(d_knee, q[1]), tf.quat_mul(q_tilt[:, side], q[2])]
        for bone, parent, w in zip((up, low, foot), (q[3], world[0], world[1]), world):
            rots[:, bone] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent, offset_q[bone])), w)
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    return rise, pose[:, [leg[3] for leg in legs]][:, :, :3, 3]


def _ancestors(parents, joint):
    out = []
    while parents[joint] >= 0:
        joint = parents[joint]
        out.append(joint)
    return out
