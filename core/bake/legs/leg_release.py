"""Smooth legs around foot locks: a released foot blends back to the
animation in the leg's joint rotations, and the toe floor lifts a toe gradually.

Why: a lock holds the foot while the body walks on, so when the data lifts the
foot its toe may be 20-40 cm from the animated toe. Blending that offset out in
world space (core.bake.legs.foot_lock) leaves the IK target out of the leg's reach while
the animation already bends the knee for the swing: the leg stays straight,
then folds in two or three frames once the target comes within reach (knee and
hip steps of 15-30 degrees a frame, twice the take's own). Here the IK's
correction of each leg bone on the last locked frame (a rotation relative to the
animation, with its angular velocity) decays as a critically damped spring, so
the knee bends with the animation from the first free frame.

The toe floor: a blend after a jump can swing a free toe through the ground for
a few frames; lifting it by exactly the depth snaps the knee. The lift is
instead the smallest curve over the needed depth whose change per second is at
most ``rate`` (the bake knows the whole take, so the lift starts before the toe
dips).
"""

import math

import numpy as np

from ...maths import ik_floats as fk
from ...maths import transforms as tf
from ...maths.springs import decay_spring
from ...maths import same_everywhere


def floor_lift(need, rate):
    """The least (S,) curve >= ``need`` (S,) (metres a toe must rise, 0 where it
    need not) that changes by at most ``rate`` per sample: max over k of
    need[k] - rate * |t - k|, by two running maxima."""
    need = np.maximum(np.asarray(need, dtype=np.float64), 0.0)
    if not need.any():
        return need
    t = np.arange(len(need)) * float(rate)
    after = np.maximum.accumulate(need + t) - t                  # ramps down after each need
    before = np.maximum.accumulate((need - t)[::-1])[::-1] + t   # ramps up before it
    return np.maximum(after, before)


def slew_limited(x, step):
    """``x`` (S,) with its change per sample limited to ``step``: the mean of a
    forward and a backward rate-limited pass (each lags one way, the mean does
    not; a mean of two curves within the limit is within it)."""
    x = np.asarray(x, dtype=np.float64)
    step = float(step)

    def one_way(v):
        out = v.tolist()        # on Python floats, each step's value kept in a list
        y = out[0] if out else 0.0
        for i, t in enumerate(out):
            y += min(max(t - y, -step), step)
            out[i] = y
        return np.array(out, dtype=np.float64)

    return 0.5 * (one_way(x) + one_way(x[::-1])[::-1])


def lock_runs(locked):
    """(start, end) of each run of True in ``locked`` (S,), end exclusive."""
    edges = np.diff(np.concatenate([[0], np.asarray(locked, dtype=np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def corrections(out_rots, anim_rots):
    """Rotation vectors (..., 3) c with out = exp(c) * anim (the parent's axes).
    Made on Python floats (core.maths.ik_floats; the same bits as
    transforms' quat_mul and quat_to_rotvec, whose atan2 is math's): the
    foot lock asks for two steps of three bones at a time."""
    out, anim = np.asarray(out_rots, dtype=np.float64), np.asarray(anim_rots, dtype=np.float64)
    rows = [_rotvec(fk.quat_mul(a, fk.quat_conjugate(b))) for a, b in zip(out.reshape(-1, 4).tolist(),
                                                                          anim.reshape(-1, 4).tolist())]
    return np.array(rows, dtype=np.float64).reshape(out.shape[:-1] + (3,))


def _rotvec(q):
    """transforms.quat_to_rotvec of one quaternion (a list)."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    w, x, y, z = q[0] / n, q[1] / n, q[2] / n, q[3] / n
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    scale = 2.0 * math.atan2(s, w) / max(s, 1e-300) if s > 1e-12 else 2.0
    return [x * scale, y * scale, z * scale]


def released(anim_rots, c0, v0, count, dt, halflife):
    """Leg rotations (count, B, 4) on the ``count`` frames after a release: the
    animation's ``anim_rots`` (count, B, 4) with the correction ``c0`` (B, 3),
    moving at ``v0`` (B, 3) per second, decaying over ``halflife``."""
    t = (np.arange(1, count + 1) * dt)[:, None, None]
    c, _ = decay_spring(c0[None], v0[None], halflife, t)
    return tf.quat_mul(tf.quat_from_rotvec(c), anim_rots)


def chain_points(parent_world, offsets, locs, rots):
    """Heads (n, k, 3) and world rotation matrices (n, k, 3, 3) of a chain of k
    bones, each the child of the one before: ``parent_world`` (n, 4, 4) the
    first bone's parent's pose, ``offsets`` (k, 4, 4), channels (n, k, 3/4)."""
    m = parent_world
    heads, mats = [], []
    if len(rots) <= FEW_ROWS:       # transforms' compose and quat_to_matrix on Python floats: the same bits
        basis = np.array([[_basis(l, q) for l, q in zip(ls, qs)] for ls, qs in zip(np.asarray(locs).tolist(),
                                                                                    np.asarray(rots).tolist())])
    else:
        basis = tf.compose(locs, tf.quat_to_matrix(rots))      # every bone's at once (each matrix its own maths)
    for b in range(offsets.shape[0]):
        m = m @ offsets[b] @ basis[:, b]
        heads.append(m[:, :3, 3])
        mats.append(m[:, :3, :3])
    return np.stack(heads, axis=1), np.stack(mats, axis=1)


FEW_ROWS = 4     # chain_points makes the bones' matrices on Python floats up to this many rows


def _basis(loc, q):
    """The 4x4 matrix (nested lists) of location ``loc`` and quaternion ``q``
    (normalised first), as transforms.compose(loc, quat_to_matrix(q))."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    w, x, y, z = q[0] / n, q[1] / n, q[2] / n, q[3] / n
    r = tf.rotation_elements(w, x, y, z)
    return [[r[0], r[1], r[2], loc[0]], [r[3], r[4], r[5], loc[1]], [r[6], r[7], r[8], loc[2]], [0.0, 0.0, 0.0, 1.0]]


def first_derivative(c, dt):
    """Per-second change of the last of the corrections ``c`` (n, B, 3) (zero for one)."""
    return (c[-1] - c[-2]) / dt if len(c) > 1 else np.zeros_like(c[-1])


def toe_heading(toe, foot):
    """Heading (radians) of the foot on the ground: the ankle-to-toe direction."""
    heel = toe - foot
    return same_everywhere.arctan2(heel[..., 1], heel[..., 0])
