"""The two-bone IK of :mod:`core.maths.ik` and the quaternion maths around it
for a few legs at once, on Python floats: each row's operations in numpy's
order (a row's sum of three or four products left to right, as numpy's
``add.reduce`` over the last axis adds them; + - * / and sqrt are IEEE both
ways), so the same bits without numpy's cost per call, which on arrays of a
few rows is most of the IK's time (the foot lock's releases solve two steps
of each leg at a time). cos and sin stay numpy's (its vector code may round
otherwise than the C library) and so do the frames' 3x3 products (``@``
hands them to BLAS); atan2 is ``math.atan2``, as same_everywhere.arctan2."""

import math

import numpy as np

_TINY = 1e-12


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def norm(v):
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def unit(v, fallback):
    """ik._unit of one row: ``fallback`` (a list, or a function making it) where ``v`` is too short."""
    n = norm(v)
    if n > _TINY:
        return [v[0] / n, v[1] / n, v[2] / n]
    return fallback() if callable(fallback) else fallback


def _any_perpendicular(u):
    c = cross(u, [1.0, 0.0, 0.0] if abs(u[0]) < 0.9 else [0.0, 1.0, 0.0])
    n = norm(c)
    return [c[0] / n, c[1] / n, c[2] / n]


def perp_unit(v, u):
    d = dot(v, u)
    return unit([v[0] - d * u[0], v[1] - d * u[1], v[2] - d * u[2]], lambda: _any_perpendicular(u))


def quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return [aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw]


def quat_conjugate(q):
    return [q[0], -q[1], -q[2], -q[3]]      # numpy's q * (1, -1, -1, -1): the same bits


def matrix_to_quat(m):
    """transforms.matrix_to_quat of one 3x3 matrix (nested lists)."""
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m
    cand = [1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22]
    pick = 0
    for k in (1, 2, 3):             # np.argmax: the first largest
        if cand[k] > cand[pick]:
            pick = k
    s = math.sqrt(max(cand[pick], 1e-300))
    t = 2.0 * s
    a, b, c = m21 - m12, m02 - m20, m10 - m01
    d, e, f = m01 + m10, m02 + m20, m12 + m21
    q = [(s / 2, a / t, b / t, c / t), (a / t, s / 2, d / t, e / t), (b / t, d / t, s / 2, f / t),
         (c / t, e / t, f / t, s / 2)][pick]
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q = [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
    return [-x for x in q] if q[0] < 0 else q


def two_bone_ik(hip, knee, ankle, target, pole, max_extension=0.9999, straight_tolerance=1e-3,
                pole_blend=0.0):
    """ik.two_bone_ik of rows (lists of [x, y, z]): ``(hip deltas, knee deltas)``, lists of [w, x, y, z]."""
    legs = [_bend_plane(*row, straight_tolerance, pole_blend) for row in zip(hip, knee, ankle, target, pole)]
    if not legs:     # no rows: the products below would not keep the matrices' shape
        return [], []
    angles = np.array([leg[-1] for leg in legs])
    cos, sin = np.cos(angles).tolist(), np.sin(angles).tolist()
    frames = [_frames(leg, c, s, max_extension) for leg, c, s in zip(legs, cos, sin)]
    new = np.array([[f[0] for f in frames], [f[1] for f in frames]])
    old = np.array([[f[2] for f in frames], [f[3] for f in frames]])
    hip_d, knee_d = (new @ np.swapaxes(old, -1, -2)).tolist()
    return [matrix_to_quat(m) for m in hip_d], [matrix_to_quat(m) for m in knee_d]


def _bend_plane(hip, knee, ankle, target, pole, straight_tolerance, pole_blend):
    """The first part of one row's IK, to the swing's angle (its cos and sin come from numpy)."""
    thigh, shin = sub(knee, hip), sub(ankle, knee)
    a, b = norm(thigh), norm(shin)
    u0 = unit(sub(ankle, hip), lambda: unit(thigh, [0.0, 0.0, -1.0]))
    d = dot(thigh, u0)
    knee_side = [thigh[0] - d * u0[0], thigh[1] - d * u0[1], thigh[2] - d * u0[2]]
    side_p = perp_unit(pole, u0)
    w0 = unit(knee_side, u0) if norm(knee_side) > straight_tolerance * max(a, _TINY) else side_p
    if pole_blend > 0:
        back = min(dot(knee_side, side_p), 0.0)
        knee_side = [knee_side[i] - back * side_p[i] for i in range(3)]
        scale = pole_blend * max(a, _TINY)
        own = [x / scale for x in knee_side]
        length = max(norm(own), 1.0)
        own = [x / length for x in own]
        rest = 1.0 - norm(own)
        w0 = unit([own[i] + rest * side_p[i] for i in range(3)], side_p)
    w0 = perp_unit(w0, u0)
    n0 = cross(u0, w0)
    to_target = sub(target, hip)
    u = unit(to_target, u0)
    axis = cross(u0, u)
    angle = math.atan2(norm(axis), dot(u0, u))
    return thigh, shin, a, b, u0, w0, n0, to_target, u, unit(axis, n0), angle


def _frames(leg, c, s, max_extension):
    """One row's new and old (direction, hinge) frames of thigh and shin, given
    the cos ``c`` and sin ``s`` of its swing."""
    thigh, shin, a, b, u0, w0, n0, to_target, u, axis, _ = leg
    cr, d, oc = cross(axis, w0), dot(axis, w0), 1.0 - c
    turned = [w0[i] * c + cr[i] * s + axis[i] * d * oc for i in range(3)]       # ik._rotate
    w = perp_unit(turned, u)
    n = cross(u, w)
    reach = max_extension * (a + b)
    t = min(max(norm(to_target), min(abs(a - b), reach)), reach)
    cos_h = min(max((a * a + t * t - b * b) / max(2.0 * a * t, _TINY), -1.0), 1.0)
    sin_h = math.sqrt(max(1.0 - cos_h * cos_h, 0.0))
    new_thigh = [cos_h * u[i] + sin_h * w[i] for i in range(3)]
    new_shin = unit([t * u[i] - a * new_thigh[i] for i in range(3)], u)
    return (_frame(new_thigh, n), _frame(new_shin, n), _frame(unit(thigh, u0), n0),
            _frame(unit(shin, u0), n0))


def _frame(e, n):
    """ik._frame of one row: the matrix (rows of lists) whose columns are ``e``, ``n``
    made perpendicular to it, and their cross product."""
    p = perp_unit(n, e)
    x = cross(e, p)
    return [[e[0], p[0], x[0]], [e[1], p[1], x[1]], [e[2], p[2], x[2]]]
