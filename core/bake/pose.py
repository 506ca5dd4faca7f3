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
    locs = pose_locations[rows].astype(np.float64, copy=False)   # rows' own copies (float64 already: kept)
    rots = tf.quat_normalize(pose_rotations[rows])
    jumps = np.flatnonzero(jumped[1:]) + 1
    if not len(jumps):
        return locs, rots
    srcs, dsts = nxt[rows[jumps - 1]], rows[jumps]
    lengths = np.append(jumps[1:], len(rows)) - jumps
    y = halflife_to_damping(halflife)
    x0, v0, y0 = _rotation_offsets(pose_rotations, nxt, fps, srcs, dsts, lengths, y, fade_speeds)
    p0, pv0 = _hip_offsets(pose_locations, hips, nxt, fps, srcs, dsts, lengths, y)
    # decay_spring of the rotations and of the hips' location: one decay factor for
    # both. The jump's own step shows the whole offset (what was playing, one data
    # step on); the fade starts from there. The pieces run on to the last step.
    piece = np.repeat(np.arange(len(jumps)), lengths)
    k = np.arange(jumps[0], len(rows)) - np.repeat(jumps, lengths)
    t = k * dt
    e = same_everywhere.exp(-y * t)
    xs = _faded(x0[piece], v0[piece], y0[piece][:, :, None], _decays(y0[piece], y, t, e)[:, :, None],
                t[:, None, None])
    ps = _faded(p0[piece], pv0[piece], y, e[:, None], t[:, None])
    rots[jumps[0]:] = tf.quat_mul(tf.quat_from_rotvec(xs), rots[jumps[0]:])
    locs[jumps[0]:, hips] += ps
    return locs, rots


def _faded(x, v, y, e, t):
    """The offset of :func:`core.maths.springs.spring_floats` (goal 0), its velocity
    left out: ``e (j0 + j1 t) + 0`` with ``j0 = x - 0``, ``j1 = v + j0 y``, the same
    operations (a sum's two terms swapped: the same bits), into ``x`` and one scratch array."""
    j0 = np.subtract(x, 0.0, out=x)
    out = np.multiply(j0, y, out=np.empty(np.broadcast_shapes(x.shape, np.shape(y))))
    np.add(v, out, out=out)
    np.multiply(out, t, out=out)
    np.add(j0, out, out=out)
    np.multiply(out, e, out=out)
    return np.add(out, 0.0, out=out)


def _rotation_offsets(pose_rotations, nxt, fps, srcs, dsts, lengths, y, fade_speeds):
    """Each jump's joints' rotation offsets (n, J, 3), their velocities (n, J, 3) and
    fade rates (n, J) as the jump starts: from the row played before it (``srcs``,
    one data step on) to the one after (``dsts``), with what the last jump's fade
    left ``lengths`` steps on. One jump after another, only each fade's last value."""
    dt = 1.0 / fps
    # Only the rows jumped from and to need their joints' angular velocities.
    av_src, av_dst = angular_velocities_of(pose_rotations, nxt, fps, srcs), \
        angular_velocities_of(pose_rotations, nxt, fps, dsts)
    norm_src = tf.quat_normalize(pose_rotations[srcs].astype(np.float64))
    conj_dst = tf.quat_conjugate(tf.quat_normalize(pose_rotations[dsts].astype(np.float64)))
    J = pose_rotations.shape[1]
    xs, vs, ys = np.empty((len(srcs), J, 3)), np.empty((len(srcs), J, 3)), np.empty((len(srcs), J))
    x, v = np.zeros((J, 3)), np.zeros((J, 3))
    # The second factors of every Hamilton product, each term's signed component (quat_mul_terms).
    src_terms, dst_terms = quat_mul_terms(norm_src), quat_mul_terms(conj_dst)
    for i, n in enumerate(lengths.tolist()):
        # The new offset is what was shown (with the offset still fading) less the new row.
        shown = quat_mul_by(tf.quat_from_rotvec(x), src_terms[i])
        x = tf.quat_to_rotvec(quat_mul_by(shown, dst_terms[i]))
        v = (av_src[i] + v) - av_dst[i]
        # Each joint's rate: ``y``, or slower for an offset that would turn it too fast.
        yj = fade_rates(x, y, fade_speeds)
        xs[i], vs[i], ys[i] = x, v, yj
        # The fade's value at its end, n steps on (the next jump starts from it).
        t = float(n) * dt
        e = same_everywhere.exp_float(-y * t)
        decays = np.full(len(yj), e)
        slow = yj != y
        if slow.any():      # _decays of one time
            decays[slow] = same_everywhere.exp(-yj[slow] * t)
        x, v = spring_floats(x, v, 0.0, yj[:, None], decays[:, None], t)
    return xs, vs, ys


# quat_mul(a, b)'s component k is the sum, in this order, of a's component m times
# _SIGN[m, k] b[_PICK[m, k]] (aw bw - ax bx - ay by - az bz, ...); x - p is x + (-p), bit for bit.
_PICK = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_SIGN = np.array([[1.0, 1.0, 1.0, 1.0], [-1.0, 1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0]])


def quat_mul_terms(b):
    """(..., 4, 4) the signed components of quaternions ``b`` (..., 4) that
    :func:`quat_mul_by` multiplies the first factor's components by."""
    return b[..., _PICK] * _SIGN


def quat_mul_by(a, terms):
    """``tf.quat_mul(a, b)`` of float64 ``a`` (..., 4), ``terms`` = quat_mul_terms(b):
    the same products added in the same order (the same bits), in fewer operations."""
    p = a[..., :, None] * terms
    return ((p[..., 0, :] + p[..., 1, :]) + p[..., 2, :]) + p[..., 3, :]


def _hip_offsets(pose_locations, hips, nxt, fps, srcs, dsts, lengths, y):
    """The hips' location offsets (n, 3) and their velocities (n, 3) as each jump
    starts, as :func:`_rotation_offsets` (float by float: the same sums)."""
    dt = 1.0 / fps
    hip = pose_locations[:, hips]
    at_src, at_dst = hip[srcs].astype(np.float64).tolist(), hip[dsts].astype(np.float64).tolist()
    lin_src = ((hip[nxt[srcs]] - hip[srcs]) * fps).astype(np.float64).tolist()
    lin_dst = ((hip[nxt[dsts]] - hip[dsts]) * fps).astype(np.float64).tolist()
    px, pv, ps, pvs = [0.0] * 3, [0.0] * 3, [], []
    for i, n in enumerate(lengths.tolist()):
        px = [(a + p) - b for a, p, b in zip(at_src[i], px, at_dst[i])]
        pv = [(a + p) - b for a, p, b in zip(lin_src[i], pv, lin_dst[i])]
        ps.append(px)
        pvs.append(pv)
        t = float(n) * dt
        e = same_everywhere.exp_float(-y * t)
        faded = [spring_floats(p, q, 0.0, y, e, t) for p, q in zip(px, pv)]
        px, pv = [f[0] for f in faded], [f[1] for f in faded]
    return np.array(ps), np.array(pvs)


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
    need, out = _fk_steps_last(skeleton, locs, rots, joints)
    return tf.frames_first(out, need, len(skeleton.parents))


def joint_heads(skeleton, locs, rots, joints=None):
    """The bones' armature-space heads (S, J, 3): ``forward_kinematics(...)[:, :, :3, 3]``
    (the same bits), without copying out the whole matrices."""
    need, out = _fk_steps_last(skeleton, locs, rots, joints)
    heads = np.full((out.shape[-1], len(skeleton.parents), 3), np.nan)
    heads[:, need] = np.moveaxis(out[:, :3, 3], -1, 0)
    return heads


def _fk_steps_last(skeleton, locs, rots, joints):
    """(the joints computed, their matrices (n, 4, 4, S)) for :func:`forward_kinematics`."""
    need = list(range(len(skeleton.parents))) if joints is None else tf.with_ancestors(skeleton.parents, joints)
    locs, rots = np.asarray(locs)[:, need], np.asarray(rots)[:, need]
    # tf.compose(locs, tf.quat_to_matrix(rots)), built with the steps last.
    q = tf.quat_normalize(rots)
    basis = np.empty((len(need), 4, 4, len(q)))
    # The quaternions' components each one contiguous run (need, S): the same products, faster.
    for k, e in enumerate(tf.rotation_elements(*np.ascontiguousarray(q.transpose(2, 1, 0)))):
        basis[:, k // 3, k % 3] = e
    basis[:, :3, 3] = np.moveaxis(locs, 0, -1)
    basis[:, 3, :3] = 0.0
    basis[:, 3, 3] = 1.0
    return need, tf.pose_fk_chain(skeleton.parents, skeleton.offsets, basis, need)


def leg_joints(skeleton):
    """Every joint of the skeleton's legs (hip joint, knee, ankle, toe)."""
    return [j for leg in skeleton.legs for j in leg]
