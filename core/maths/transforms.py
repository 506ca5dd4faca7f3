"""Rotations and rigid transforms, vectorised over any leading axes.

Quaternions are ``(w, x, y, z)``; matrices act on column vectors. Every function
accepts arrays with arbitrary leading dimensions (frames, joints, ...).

long file: forward kinematics (its chain of 4x4 products, made with the frames
last, and the copy back) stays beside the products whose term order it keeps.
"""

import numpy as np

from . import same_everywhere

# ----------------------------------------------------------------------------
# Vectors: numpy's own results without its per-call overhead (small arrays, many calls)


def cross3(a, b):
    """``np.cross`` of float64 vectors (..., 3): the same products and differences
    (``a1 b2 - a2 b1``, ...), so the same bits."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def row_norm(v, keepdims=False):
    """``np.linalg.norm(v, axis=-1)`` of float64 ``v``: the same sum of squares
    (``add.reduce`` over the last axis), so the same bits."""
    return np.sqrt(np.add.reduce(v * v, axis=-1, keepdims=keepdims))


# ----------------------------------------------------------------------------
# Quaternions


def quat_normalize(q):
    q = np.asarray(q, dtype=np.float64)
    return q / row_norm(q, keepdims=True)


def quat_conjugate(q):
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_mul(a, b):
    """Hamilton product ``a * b`` (apply b first, then a)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def quat_rotate(q, v):
    """Rotate vectors ``v`` (..., 3) by unit quaternions ``q`` (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = q[..., :1]
    u = q[..., 1:]
    # v' = v + 2w (u x v) + 2 u x (u x v), the expanded sandwich product.
    t = 2.0 * cross3(u, v)
    return v + w * t + cross3(u, t)


def quat_unroll(q, axis=0):
    """Flip signs along ``axis`` so that neighbouring quaternions have a
    non-negative dot product (q and -q are the same rotation; keys that jump
    between them interpolate the long way round)."""
    q = np.array(q, dtype=np.float64, copy=True)
    q = np.moveaxis(q, axis, 0)
    if len(q) > 1:
        dots = np.sum(q[1:] * q[:-1], axis=-1)
        # Each negative dot flips every later sample: the cumulative parity.
        flips = np.cumsum(dots < 0.0, axis=0) % 2 == 1
        q[1:][flips] *= -1.0
    return np.moveaxis(q, 0, axis)


def quat_to_matrix(q):
    """Unit quaternions (..., 4) to rotation matrices (..., 3, 3)."""
    q = quat_normalize(q)
    m = np.stack(rotation_elements(*np.moveaxis(q, -1, 0)), axis=-1)
    return m.reshape(q.shape[:-1] + (3, 3))


def rotation_elements(w, x, y, z):
    """The nine elements (row by row) of the rotation matrix of the unit quaternion
    with components ``w, x, y, z`` (arrays of any one shape)."""
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return [1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)]


def matrix_to_quat(m):
    """Rotation matrices (..., 3, 3) to unit quaternions (..., 4), w >= 0.

    Picks, per matrix, the largest of 4w^2, 4x^2, 4y^2, 4z^2 (read off the
    trace and the diagonal) as the pivot, which keeps the division stable.
    """
    m = np.asarray(m, dtype=np.float64)[..., :3, :3]
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    m00, m11, m22 = m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]
    cand = np.stack([
        1 + m00 + m11 + m22,
        1 + m00 - m11 - m22,
        1 - m00 + m11 - m22,
        1 - m00 - m11 + m22,
    ], axis=-1)
    pick = np.argmax(cand, axis=-1)
    s = np.sqrt(np.maximum(cand[np.arange(len(m)), pick], 1e-300))  # = 2|component|
    a = m[:, 2, 1] - m[:, 1, 2]
    b = m[:, 0, 2] - m[:, 2, 0]
    c = m[:, 1, 0] - m[:, 0, 1]
    d = m[:, 0, 1] + m[:, 1, 0]
    e = m[:, 0, 2] + m[:, 2, 0]
    f = m[:, 1, 2] + m[:, 2, 1]
    # s = 2 |pivot|; the pivot is s/2 and each other component is an
    # off-diagonal sum or difference divided by 4 * pivot = 2 s.
    parts = (s, 2.0 * s, a, b, c, d, e, f)
    if len(m) and pick.min() == pick.max():     # one pivot for all (small turns: w), made alone
        q = np.stack(_pivot_components(pick[0], *parts), axis=-1)
    else:
        q = np.empty((len(m), 4))
        for k in range(4):
            sel = np.flatnonzero(pick == k)
            if len(sel):        # the same divisions, of the matrices that pick this pivot only
                q[sel] = np.stack(_pivot_components(k, *(v[sel] for v in parts)), axis=-1)
    q = quat_normalize(q)
    q[q[:, 0] < 0] *= -1.0
    return q.reshape(shape + (4,))


def _pivot_components(k, s, t, a, b, c, d, e, f):
    """(w, x, y, z) of :func:`matrix_to_quat` for pivot ``k`` (0: w ... 3: z),
    ``s`` twice the pivot, ``t = 2 s``, ``a``-``f`` the off-diagonal sums and differences."""
    if k == 0:
        return s / 2, a / t, b / t, c / t
    if k == 1:
        return a / t, s / 2, d / t, e / t
    if k == 2:
        return b / t, d / t, s / 2, f / t
    return c / t, e / t, f / t, s / 2


def quat_from_axis_angle(axis, angle):
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def quat_to_rotvec(q):
    """Unit quaternions to rotation vectors (axis * angle), shortest arc."""
    q = quat_normalize(q)
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = row_norm(v, keepdims=True)
    angle = 2.0 * same_everywhere.arctan2(s, q[..., :1])
    # angle / s tends to 2 as s -> 0 (sin(a/2) ~ a/2).
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)
    return v * scale


def quat_from_rotvec(r):
    r = np.asarray(r, dtype=np.float64)
    angle = row_norm(r, keepdims=True)
    half = 0.5 * angle
    # sin(a/2)/a tends to 1/2 as a -> 0.
    k = np.where(angle > 1e-12, np.sin(half) / np.maximum(angle, 1e-300), 0.5)
    return np.concatenate([np.cos(half), r * k], axis=-1)


# ----------------------------------------------------------------------------
# Euler angles as BVH writes them

_AXES = {"X": 0, "Y": 1, "Z": 2}


def axis_rotation_matrices(axis, angles):
    """Rotation matrices (..., 3, 3) about one principal axis by ``angles``
    (radians, right-handed)."""
    angles = np.asarray(angles, dtype=np.float64)
    c, s = np.cos(angles), np.sin(angles)
    o, z = np.ones_like(angles), np.zeros_like(angles)
    i = _AXES[axis]
    if i == 0:
        rows = [o, z, z, z, c, -s, z, s, c]
    elif i == 1:
        rows = [c, z, s, z, o, z, -s, z, c]
    else:
        rows = [c, -s, z, s, c, z, z, z, o]
    return np.stack(rows, axis=-1).reshape(angles.shape + (3, 3))


def euler_to_matrix(angles, order):
    """Compose per-axis rotations in the order the channels are listed.

    ``order`` such as ``"ZXY"`` means R = Rz @ Rx @ Ry: the last listed axis is
    applied to the vector first, as BVH files mean it. ``angles`` (..., 3) holds
    the angles in that same listed order, in radians.
    """
    angles = np.asarray(angles, dtype=np.float64)
    m = axis_rotation_matrices(order[0], angles[..., 0])
    for k in range(1, len(order)):
        m = m @ axis_rotation_matrices(order[k], angles[..., k])
    return m


def euler_to_quat(angles, order):
    """Quaternion form of :func:`euler_to_matrix` (same listing convention)."""
    angles = np.asarray(angles, dtype=np.float64)
    q = None
    for k, axis in enumerate(order):
        half = 0.5 * angles[..., k]
        qa = np.zeros(half.shape + (4,))
        qa[..., 0] = np.cos(half)
        qa[..., 1 + _AXES[axis]] = np.sin(half)
        q = qa if q is None else quat_mul(q, qa)
    return q


# ----------------------------------------------------------------------------
# 4x4 rigid transforms


def compose(loc=None, rot=None, shape=None):
    """4x4 matrices from translations (..., 3) and rotations (..., 3, 3)."""
    if shape is None:
        src = loc if loc is not None else rot[..., 0]
        shape = np.shape(src)[:-1]
    m = np.zeros(tuple(shape) + (4, 4))
    m[..., 3, 3] = 1.0
    m[..., :3, :3] = np.eye(3) if rot is None else rot
    if loc is not None:
        m[..., :3, 3] = loc
    return m


def rigid_inverse(m):
    """Inverse of 4x4 matrices whose 3x3 part is a rotation."""
    m = np.asarray(m, dtype=np.float64)
    r_t = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros_like(m)
    out[..., :3, :3] = r_t
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", r_t, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def axis_conversion_matrix(from_forward="Y", from_up="Z", to_forward="Y", to_up="Z"):
    """Proper rotation (3x3) taking the source's forward and up axes to the
    target's, as Blender's axis_conversion does. Axes are names like ``'-Z'``."""

    def vec(name):
        v = np.zeros(3)
        v[_AXES[name[-1]]] = -1.0 if name.startswith("-") else 1.0
        return v

    f, u = vec(from_forward), vec(from_up)
    tf, tu = vec(to_forward), vec(to_up)
    if abs(np.dot(f, u)) > 0.5 or abs(np.dot(tf, tu)) > 0.5:
        from ..errors import MotionMatchingError

        raise MotionMatchingError(
            "The forward and up axes must be different axes (got forward %s, up %s)."
            % (from_forward, from_up))
    src = np.stack([f, u, np.cross(f, u)], axis=1)
    dst = np.stack([tf, tu, np.cross(tf, tu)], axis=1)
    return dst @ src.T


# ----------------------------------------------------------------------------
# Forward kinematics of an armature


def with_ancestors(parents, joints):
    """``joints`` and every ancestor of theirs, sorted (parents come first)."""
    need = set()
    for j in joints:
        j = int(j)
        while j >= 0 and j not in need:
            need.add(j)
            j = int(parents[j])
    return sorted(need)


def pose_fk(parents, rest, basis, offsets=None, joints=None):
    """Armature-space pose matrices of every bone on every frame.

    ``parents`` (J,) parent index or -1, parents before children;
    ``rest`` (J, 4, 4) each bone's rest matrix in armature space (Bone.matrix_local);
    ``basis`` (F, J, 4, 4) each pose bone's local transform (location, rotation).
    Blender's rule: pose = parent_pose @ offset @ basis, the offset being the
    bone's rest relative to its parent. Blender builds that offset from the
    bone's own roll matrix and head rather than from parent_rest^-1 @ rest;
    the two agree exactly in theory but not in float32 for bones that point
    almost straight along the axis the roll is measured from, so pass
    ``offsets`` (J, 4, 4) read from Blender (see armature_data.rest_offsets)
    to reproduce its poses to the last digits. ``joints`` (default all): only
    these bones and their ancestors are computed, the others are NaN.
    """
    parents = np.asarray(parents)
    if offsets is None:
        offsets = rest_offsets_from_matrices(parents, rest)
    order = list(range(len(parents))) if joints is None else with_ancestors(parents, joints)
    basis = np.asarray(basis, dtype=np.float64)
    out = np.empty(basis.shape[:1] + (len(parents), 4, 4))
    # The frames last: (n, 4, 4, F), each element of a joint's matrices one run of frames;
    # in blocks of frames, so that the copies in that layout stay small beside the pose.
    for f0 in range(0, len(basis), FK_BLOCK):
        block = np.moveaxis(basis[f0:f0 + FK_BLOCK], 0, -1)[order]
        out[f0:f0 + FK_BLOCK] = pose_fk_frames_last(parents, offsets, block, order)
    return out


FK_BLOCK = 1024     # frames per block of pose_fk


def pose_fk_frames_last(parents, offsets, basis_t, order):
    """:func:`pose_fk` of the joints ``order`` (with their ancestors, parents
    first), their basis matrices ``basis_t`` (len(order), 4, 4, F) holding the
    frames last. Returns (F, J, 4, 4) (the joints not in ``order`` NaN). The
    products are :func:`mm4`'s, term for term in the same order, so the bits are
    the same; they are made with the frames last (each operation runs along the
    frames rather than along four elements) and copied back once, so callers get
    the layout they always had (a sum over an axis, or ``@``, may round
    differently on another layout)."""
    order = list(order)
    return frames_first(pose_fk_chain(parents, offsets, basis_t, order), order, len(parents))


def pose_fk_chain(parents, offsets, basis_t, order):
    """The matrices of :func:`pose_fk_frames_last` as they are made: (len(order),
    4, 4, F), one per joint of ``order``, the frames last. When every matrix is
    finite with the last row exactly (+0, +0, +0, 1), that row of each product is
    too (0 x finite sums to a zero, and the last term, 1 x +0, makes it +0): it is
    set, not computed (the other rows never read it)."""
    offsets = np.asarray(offsets, dtype=np.float64)
    order = list(order)
    slot = {j: i for i, j in enumerate(order)}
    out = np.empty((len(order), 4, 4, basis_t.shape[-1]))
    rows = 3 if _rigid_rows(offsets[order]) and _rigid_rows(basis_t) else 4
    step, term = np.empty(out.shape[1:]), np.empty(out.shape[1:])
    for i, (b, j) in enumerate(zip(basis_t, order)):
        p = parents[j]
        if p < 0:
            _mm4_last(offsets[j][:, :, None], b, out[i], term, rows)
        else:
            _mm4_last(out[slot[p]], offsets[j][:, :, None], step, term, rows)
            _mm4_last(step, b, out[i], term, rows)
    if rows == 3:
        out[:, 3] = np.array([0.0, 0.0, 0.0, 1.0])[:, None]
    return out


def _rigid_rows(m):
    """Matrices ``m`` (n, 4, 4, ...) all finite, each last row exactly (+0, +0, +0, 1)."""
    last = m[:, 3]
    return bool(np.isfinite(m).all() and (last[:, :3] == 0.0).all() and not np.signbit(last[:, :3]).any()
                and (last[:, 3] == 1.0).all())


def frames_first(out, order, count):
    """(F, count, 4, 4) of the joints ``order``'s matrices ``out`` (len(order), 4, 4, F),
    the other joints NaN; copied joint by joint (each a transposed block of 16 rows)."""
    F = out.shape[-1]
    res = np.empty((F, count, 4, 4))
    for j in sorted(set(range(count)) - set(order)):
        res[:, j] = np.nan
    for i, j in enumerate(order):
        np.copyto(res[:, j].reshape(F, 16).T, out[i].reshape(16, F))
    return res


def _mm4_last(a, b, out, term, rows=4):
    """:func:`mm4` of matrices (4, 4, ...) with the matrix axes first, into
    ``out``; ``term`` (the shape of ``out``) is scratch. ``rows``: only the first
    this many rows of the product are made (the others left as they are)."""
    a, out, term = a[:rows], out[:rows], term[:rows]
    np.multiply(a[:, 0, None], b[None, 0], out=out)
    for k in (1, 2, 3):
        np.multiply(a[:, k, None], b[None, k], out=term)
        np.add(out, term, out=out)


def mm4(a, b):
    """4x4 matrix products (broadcast over leading axes) written out term by term.
    ``@`` hands them to BLAS, whose kernels round differently on other processors
    (with or without fused multiply-adds), and forward kinematics decides the keys."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a[..., :, 0:1] * b[..., 0:1, :] + a[..., :, 1:2] * b[..., 1:2, :]
            + a[..., :, 2:3] * b[..., 2:3, :] + a[..., :, 3:4] * b[..., 3:4, :])


def rest_offsets_from_matrices(parents, rest):
    """Each bone's rest relative to its parent (its own rest for a root)."""
    rest = np.asarray(rest, dtype=np.float64)
    rest_inv = rigid_inverse(rest)
    return np.array([rest[j] if p < 0 else mm4(rest_inv[p], rest[j]) for j, p in enumerate(parents)])


def pose_local_from_world(parents, rest, pose, offsets=None):
    """Inverse of :func:`pose_fk`: the basis (local) matrices that give ``pose``."""
    parents = np.asarray(parents)
    pose = np.asarray(pose, dtype=np.float64)
    if offsets is None:
        offsets = rest_offsets_from_matrices(parents, rest)
    offsets_inv = np.linalg.inv(offsets)
    out = np.empty_like(pose)
    for j, p in enumerate(parents):
        if p < 0:
            out[:, j] = offsets_inv[j] @ pose[:, j]
        else:
            out[:, j] = offsets_inv[j] @ rigid_inverse(pose[:, p]) @ pose[:, j]
    return out
