"""Stage 3 of the bake: the pose channels of the played rows, blended between
rows under the time warp, with inertialization hiding each jump, and the
character frame put on the root bone."""

import math
from dataclasses import replace

import numpy as np

from ..maths import transforms as tf
from ..maths import same_everywhere
from ..maths.springs import halflife_to_damping, spring_floats
from ..skeleton import virtual_root as vr
from . import time_warp as twp
from .rows import angular_velocities_of, next_rows


def warped_pose(db, pose_locations, pose_rotations, played, row_steps, hips, fps, halflife, fade_speeds=None):
    """Stage 3 under the time warp: poses blended at each step's playback
    position, inertialized at jumps (``fade_speeds``: see :func:`inertialize`).
    Returns (played with the nearest rows, the data's own ground travel of each
    step into the next (S, 3), locations, rotations)."""
    nxt = next_rows(db)
    vlocs, vrots, vrows, vnxt = twp.warped_rows(pose_locations, pose_rotations, played.rows, played.phase,
                                                played.rate, nxt)
    locs, rots = inertialize(vlocs, vrots, vrows, played.jumped, hips, vnxt, fps, halflife, fade_speeds)
    ahead = np.append(played.rate[1:], played.rate[-1:])           # the rate of the step into the next
    steps = row_steps[played.rows] * ahead[:, None]
    return replace(played, rows=twp.nearest_rows(played.rows, played.phase, nxt)), steps, locs, rots


def inertialize(pose_locations, pose_rotations, rows, jumped, hips, nxt, fps, halflife, fade_speeds=None):
    """Stage 3: the played rows' pose channels, float64 (S, J, 3) and (S, J, 4),
    with each jump's pose difference (every joint's rotation and the hips'
    location) fading over ``halflife`` (core.maths.inertialization's offsets; between
    two jumps the fade has a closed form, so the steps of each piece are done
    at once). ``fade_speeds`` (J,) rad/s, optional: a joint's offset fades no
    faster than this (its half-life lengthened, at most :data:`MAX_FADE_STRETCH`
    times), so a large offset does not turn the joint faster than the data does."""
    dt = 1.0 / fps
    lin = (pose_locations[nxt, hips] - pose_locations[:, hips]) * fps
    locs = pose_locations[rows].astype(np.float64)
    rots = tf.quat_normalize(pose_rotations[rows].astype(np.float64))
    J = rots.shape[1]
    x, v, px, pv = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros(3), np.zeros(3)
    jumps = np.flatnonzero(jumped[1:]) + 1
    # Only the rows jumped from and to need their joints' angular velocities.
    srcs, dsts = nxt[rows[jumps - 1]], rows[jumps]
    av_src, av_dst = angular_velocities_of(pose_rotations, nxt, fps, srcs), \
        angular_velocities_of(pose_rotations, nxt, fps, dsts)
    for i, (a, b) in enumerate(zip(jumps, np.append(jumps[1:], len(rows)))):
        # What was playing would have continued to nxt[rows[a - 1]] at this instant:
        # the new offset is what was shown (with the offset still fading) less the new row.
        src, r = srcs[i], dsts[i]
        shown = tf.quat_mul(tf.quat_from_rotvec(x), tf.quat_normalize(pose_rotations[src].astype(np.float64)))
        x = tf.quat_to_rotvec(tf.quat_mul(shown, tf.quat_conjugate(tf.quat_normalize(
            pose_rotations[r].astype(np.float64)))))
        v = (av_src[i] + v) - av_dst[i]
        px = (pose_locations[src, hips] + px) - pose_locations[r, hips]
        pv = (lin[src] + pv) - lin[r]
        # The jump's own step shows the whole offset (what was playing, one data
        # step on); the fade starts from there (the last value carries on).
        t = np.arange(0, b - a + 1) * dt
        # decay_spring of the rotations and of the hips' location: one decay factor for both,
        # but for the joints whose offset would fade faster than ``fade_speeds`` allow.
        y = halflife_to_damping(halflife)
        e = same_everywhere.exp(-y * t)
        xs, vs = spring_floats(x[None], v[None], 0.0, y, e[:, None, None], t[:, None, None])
        if fade_speeds is not None:
            _fade_slower(xs, vs, x, v, y, t, fade_speeds)
        ps, pvs = spring_floats(px[None], pv[None], 0.0, y, e[:, None], t[:, None])
        rots[a:b] = tf.quat_mul(tf.quat_from_rotvec(xs[:-1]), rots[a:b])
        locs[a:b, hips] += ps[:-1]
        x, v, px, pv = xs[-1], vs[-1], ps[-1], pvs[-1]
    return locs, rots


MAX_FADE_STRETCH = 4.0    # a joint's fade lasts at most this many times the inertialization half-life


def _fade_slower(xs, vs, x, v, y, t, fade_speeds):
    """In place: the fades ``xs``, ``vs`` (T, J, 3) of the joints whose offset ``x``
    (J, 3) would turn faster than ``fade_speeds`` (J,) redone with a slower rate.
    Without its velocity, a critically damped offset turns fastest at ``t = 1/y``,
    at ``y |x| / E``; the rate is lowered to ``E fade_speed / |x|`` (not below
    ``y / MAX_FADE_STRETCH``)."""
    size = tf.row_norm(x)
    slow = np.flatnonzero(y * size > math.e * fade_speeds)
    if not len(slow):
        return
    ys = np.maximum(math.e * fade_speeds[slow] / size[slow], y / MAX_FADE_STRETCH)
    e = same_everywhere.exp(-ys[None, :] * t[:, None])
    xs[:, slow], vs[:, slow] = spring_floats(x[None, slow], v[None, slow], 0.0, ys[None, :, None], e[:, :, None],
                                             t[:, None, None])


def pose_root_bone(skeleton, locs, rots, root_pos, root_yaw):
    """Put the character frame on the root bone's channels (in bone axes), in
    place; returns the frame's yaw quaternions (S, 4)."""
    root_quat = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), root_yaw)
    root_bone = vr.root_bone_matrices(root_pos, root_quat)
    basis = np.linalg.inv(skeleton.offsets[skeleton.root]) @ root_bone
    locs[:, skeleton.root] = basis[:, :3, 3]
    rots[:, skeleton.root] = tf.matrix_to_quat(basis[:, :3, :3])
    return root_quat


def forward_kinematics(skeleton, locs, rots, joints=None):
    """Armature-space bone matrices (S, J, 4, 4) of pose channels (S, J, 3) and (S, J, 4).
    ``joints`` (default all): only these bones and their ancestors are computed
    (the others are NaN); each computed one is what the whole pose gives, bit for bit."""
    if joints is None:
        return tf.pose_fk(skeleton.parents, None, tf.compose(locs, tf.quat_to_matrix(rots)), skeleton.offsets)
    need = tf.with_ancestors(skeleton.parents, joints)
    basis = np.empty(np.shape(locs)[:2] + (4, 4))      # the joints not computed are never read
    basis[:, need] = tf.compose(np.asarray(locs)[:, need], tf.quat_to_matrix(np.asarray(rots)[:, need]))
    return tf.pose_fk(skeleton.parents, None, basis, skeleton.offsets, joints=need)


def leg_joints(skeleton):
    """Every joint of the skeleton's legs (hip joint, knee, ankle, toe)."""
    return [j for leg in skeleton.legs for j in leg]
