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
                                                played.rate, nxt, played.jumped)
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
    ends = np.append(jumps[1:], len(rows))
    y = halflife_to_damping(halflife)
    # Each jump's offsets carry on from what the last one's fade left: the jumps
    # one after another, only each fade's last value; then every faded step at once.
    norm_src = tf.quat_normalize(pose_rotations[srcs].astype(np.float64))
    conj_dst = tf.quat_conjugate(tf.quat_normalize(pose_rotations[dsts].astype(np.float64)))
    starts = []
    for i, (a, b) in enumerate(zip(jumps, ends)):
        # What was playing would have continued to nxt[rows[a - 1]] at this instant:
        # the new offset is what was shown (with the offset still fading) less the new row.
        src, r = srcs[i], dsts[i]
        shown = tf.quat_mul(tf.quat_from_rotvec(x), norm_src[i])
        x = tf.quat_to_rotvec(tf.quat_mul(shown, conj_dst[i]))
        v = (av_src[i] + v) - av_dst[i]
        px = (pose_locations[src, hips] + px) - pose_locations[r, hips]
        pv = (lin[src] + pv) - lin[r]
        # Each joint's rate: ``y``, or slower for an offset that would turn it too fast.
        yj = fade_rates(x, y, fade_speeds)
        starts.append((x, v, px, pv, yj))
        # The fade's value at its end, b - a steps on (the next jump starts from it).
        t = float(b - a) * dt
        e = same_everywhere.exp_float(-y * t)
        x, v = spring_floats(x, v, 0.0, yj[:, None], _decays(yj, y, t, e)[:, None], t)
        px, pv = spring_floats(px, pv, 0.0, y, e, t)
    if len(jumps):
        # decay_spring of the rotations and of the hips' location: one decay factor for
        # both. The jump's own step shows the whole offset (what was playing, one data
        # step on); the fade starts from there.
        k = np.concatenate([np.arange(0, b - a) for a, b in zip(jumps, ends)])
        piece = np.repeat(np.arange(len(jumps)), ends - jumps)
        steps = np.repeat(jumps, ends - jumps) + k
        t = k * dt
        e = same_everywhere.exp(-y * t)
        x0, v0, p0, pv0, y0 = (np.array(part)[piece] for part in zip(*starts))
        xs, _ = spring_floats(x0, v0, 0.0, y0[:, :, None], _decays(y0, y, t, e)[:, :, None], t[:, None, None])
        ps, _ = spring_floats(p0, pv0, 0.0, y, e[:, None], t[:, None])
        rots[steps] = tf.quat_mul(tf.quat_from_rotvec(xs), rots[steps])
        locs[steps, hips] += ps
    return locs, rots


def _decays(rates, y, t, common):
    """``exp(-rates t)`` for each joint's rate (..., J) at times ``t`` (...):
    ``common`` (``exp(-y t)``, shaped like ``t``) where a joint fades at the
    common rate ``y``, worked out again only where it fades slower."""
    out = np.repeat(np.asarray(common, dtype=np.float64)[..., None], rates.shape[-1], axis=-1)
    slow = rates != y
    out[slow] = same_everywhere.exp(-rates[slow] * np.broadcast_to(np.asarray(t)[..., None], rates.shape)[slow])
    return out


MAX_FADE_STRETCH = 4.0    # a joint's fade lasts at most this many times the inertialization half-life


def fade_rates(x, y, fade_speeds):
    """(J,) each joint's fade rate for offsets ``x`` (J, 3): ``y``, but for the
    joints whose offset would turn faster than ``fade_speeds`` (J,) rad/s (None:
    no limit). Without its velocity, a critically damped offset turns fastest at
    ``t = 1/y``, at ``y |x| / E``; the rate is lowered to ``E fade_speed / |x|``
    (not below ``y / MAX_FADE_STRETCH``)."""
    rates = np.full(len(x), y)
    if fade_speeds is None:
        return rates
    size = tf.row_norm(x)
    slow = np.flatnonzero(y * size > math.e * fade_speeds)
    rates[slow] = np.maximum(math.e * fade_speeds[slow] / size[slow], y / MAX_FADE_STRETCH)
    return rates


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
    (the others are NaN); each computed one is what the whole pose gives, bit for bit.
    Made with the steps last (tf.pose_fk_frames_last)."""
    need = list(range(len(skeleton.parents))) if joints is None else tf.with_ancestors(skeleton.parents, joints)
    locs, rots = np.asarray(locs)[:, need], np.asarray(rots)[:, need]
    # tf.compose(locs, tf.quat_to_matrix(rots)), built with the steps last.
    q = tf.quat_normalize(rots)
    basis = np.zeros((len(need), 4, 4, len(q)))
    for k, e in enumerate(tf.rotation_elements(*(q[:, :, c].T for c in range(4)))):
        basis[:, k // 3, k % 3] = e
    basis[:, :3, 3] = np.moveaxis(locs, 0, -1)
    basis[:, 3, 3] = 1.0
    return tf.pose_fk_frames_last(skeleton.parents, skeleton.offsets, basis, need)


def leg_joints(skeleton):
    """Every joint of the skeleton's legs (hip joint, knee, ankle, toe)."""
    return [j for leg in skeleton.legs for j in leg]
