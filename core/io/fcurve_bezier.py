"""The Bezier segment of an F-Curve, solved as Blender solves it.

The Bezier segment is a parametric curve ``(x(u), y(u))``, ``u`` in ``[0, 1]``. To
get ``y`` at a frame, Blender first makes sure ``x(u)`` never runs backward: a
handle that reaches further in time than the whole segment is shortened toward its
key, keeping its direction, until it spans the segment exactly (each handle on its
own). With both handles inside the segment's time span ``x(u)`` is monotonic, so
``x(u) = frame`` has one root in ``[0, 1]``. That cubic is solved in closed form
(Cardano's formula when it has one real root, the trigonometric form when it has
three, the quadratic or linear formula when the cubic term vanishes), the first
root found in ``[0, 1]`` (with a little slack) is taken, and ``y(u)`` is evaluated
there. A frame whose cubic has no root in range evaluates to 0, as in Blender (it
does not happen with keys Blender has sorted).
"""

import numpy as np

from .fcurve_keys import F32 as _F, subset

_FLT_EPSILON = _F(np.finfo(np.float32).eps)
_ROOT_LO = _F(-1.0e-10)         # roots accepted in [_ROOT_LO, _ROOT_HI]
_ROOT_HI = _F(1.000001)
_TWO, _THREE = _F(2.0), _F(3.0)


class _Segments:
    """Per segment (keys i -> i + 1): the Bezier after Blender's handle correction,
    as power-basis coefficients of x(u) and y(u), and the parts of the closed-form
    solve of x(u) = frame that do not depend on the frame."""

    def __init__(self, x, y, hl, hr):
        keys = np.column_stack([x, y])
        p0, p3 = keys[:-1], keys[1:]
        p1, p2 = hr[:-1].copy(), hl[1:].copy()
        # A segment whose four values agree to within float epsilon is flat.
        self.flat = ((np.abs(p0[:, 1] - p3[:, 1]) < _FLT_EPSILON)
                     & (np.abs(p1[:, 1] - p2[:, 1]) < _FLT_EPSILON)
                     & (np.abs(p2[:, 1] - p3[:, 1]) < _FLT_EPSILON))
        # Handle correction: a handle longer in time than the segment would let
        # x(u) turn back (two values on one frame). It is scaled toward its key
        # until its time length equals the segment's, direction kept.
        d1, d2 = p0 - p1, p3 - p2
        span = p3[:, 0] - p0[:, 0]
        len1, len2 = np.abs(d1[:, 0]), np.abs(d2[:, 0])
        some = (len1 + len2) != 0
        for p, ref, d, ln in ((p1, p0, d1, len1), (p2, p3, d2, len2)):
            long = np.flatnonzero(some & (ln > span))
            p[long] = ref[long] - (span[long] / ln[long])[:, None] * d[long]
        self.x0, self.y0 = p0[:, 0], p0[:, 1]
        cx1, cx2, cx3 = _power_coefficients(p0[:, 0], p1[:, 0], p2[:, 0], p3[:, 0])
        self.cy1, self.cy2, self.cy3 = _power_coefficients(p0[:, 1], p1[:, 1], p2[:, 1], p3[:, 1])
        c1, c2, c3 = (c.astype(np.float64) for c in (cx1, cx2, cx3))
        self.c1, self.c2, self.c3 = c1, c2, c3
        # The cubic c0 + c1 u + c2 u^2 + c3 u^3 (c0 = x0 - frame) over c3, shifted by
        # u = v - a, is v^3 + 3 p v + 2 q = 0 with q = (k + c0 / c3) / 2; a, p, k
        # and the square roots of -p and -p^3 (trigonometric form) depend on the
        # segment only. Garbage where c3 == 0; those segments take another way.
        a = c2 / c3 / 3.0
        b = c1 / c3
        p = b / 3.0 - a * a
        self.a = a
        self.k = 2.0 * a * a * a - a * b
        self.p3 = p * p * p
        self.sqrt_neg_p = np.sqrt(-p)
        self.sqrt_neg_p3 = np.sqrt(-self.p3)


def _power_coefficients(q0, q1, q2, q3):
    """Bezier control values -> c1, c2, c3 of q0 + c1 u + c2 u^2 + c3 u^3 (float32,
    summed in Blender's order)."""
    c1 = _THREE * (q1 - q0)
    c2 = _THREE * (q0 - _TWO * q1 + q2)
    c3 = q3 - q0 + _THREE * (q1 - q2)
    return c1, c2, c3


def bezier(x, y, hl, hr, seg, since):
    """Bezier segments ``seg`` (table index of their first key) at ``since`` frames
    after their first key."""
    s = _Segments(x, y, hl, hr)
    out = np.empty(since.shape, dtype=np.float32)
    flat = s.flat[seg]
    if flat.any():
        out[flat] = s.y0[seg[flat]]
        keep = np.flatnonzero(~flat)
        seg, since = seg[keep], since[keep]
    else:
        keep = slice(None)
    # x(0) - frame, exactly the float32 difference Blender forms.
    c0 = (-since).astype(np.float64)
    u, found = _first_root(s, seg, c0)
    uu = u * u
    val = s.y0[seg] + u * s.cy1[seg] + uu * s.cy2[seg] + uu * u * s.cy3[seg]
    if not found.all():
        val[~found] = 0.0
    out[keep] = val
    return out


def _first_root(s, seg, c0):
    """First root in [0, 1] (with Blender's slack) of x(u) - frame, solved in
    float64 and rounded to float32, taking the roots in the order Blender does so
    that the same one wins where several are in range. ``found`` False where none
    is (Blender then returns 0)."""
    m = len(c0)
    u = np.zeros(m, dtype=np.float32)
    found = np.zeros(m, dtype=bool)
    c3 = s.c3[seg]
    cubic = subset(c3 != 0.0)
    sc = seg[cubic]
    q = (s.k[sc] + c0[cubic] / c3[cubic]) / 2.0
    d = q * q + s.p3[sc]
    a = s.a[sc]
    # One real root (Cardano): sum of two real cube roots. (Blender takes cube
    # roots as exp(log(x) / 3); np.cbrt gives the same float32 root.)
    j = subset(d > 0.0)
    rt = np.sqrt(d[j])
    qj = q[j]
    _store(u, found, _compose(cubic, j), np.cbrt(-qj + rt) + np.cbrt(-qj - rt) - a[j])
    # Three real roots: v = 2 sqrt(-p) cos(phi / 3 + 2 pi k / 3), cos(phi) = -q / sqrt(-p^3).
    j = np.flatnonzero(d < 0.0)
    if len(j):
        cs = np.cos(np.arccos(-q[j] / s.sqrt_neg_p3[sc[j]]) / 3.0)
        sn = np.sqrt(3.0 - 3.0 * cs * cs)            # sqrt(3) sin(phi / 3)
        r, aj = s.sqrt_neg_p[sc[j]], a[j]
        _store(u, found, _compose(cubic, j),
               2.0 * r * cs - aj, -r * (cs + sn) - aj, -r * (cs - sn) - aj)
    # A repeated root.
    j = np.flatnonzero(d == 0.0)
    if len(j):
        r = np.cbrt(-q[j])
        _store(u, found, _compose(cubic, j), 2.0 * r - a[j], -r - a[j])
    if not isinstance(cubic, slice):
        _lower_degree(s, seg, c0, u, found)
    return u, found


def _lower_degree(s, seg, c0, u, found):
    """Segments whose cubic term vanishes (x(u) quadratic or linear in u)."""
    c3, c2, c1 = s.c3[seg], s.c2[seg], s.c1[seg]
    j = np.flatnonzero((c3 == 0.0) & (c2 != 0.0))
    if len(j):
        a, b, c = c2[j], c1[j], c0[j]
        disc = b * b - 4.0 * a * c
        two = np.flatnonzero(disc > 0.0)
        root = np.sqrt(disc[two])
        _store(u, found, j[two], (-b[two] - root) / (2.0 * a[two]),
               (-b[two] + root) / (2.0 * a[two]))
        one = np.flatnonzero(disc == 0.0)
        _store(u, found, j[one], -b[one] / (2.0 * a[one]))
    j = np.flatnonzero((c3 == 0.0) & (c2 == 0.0) & (c1 != 0.0))
    _store(u, found, j, -c0[j] / c1[j])
    j = np.flatnonzero((c3 == 0.0) & (c2 == 0.0) & (c1 == 0.0) & (c0 == 0.0))
    _store(u, found, j, np.zeros(len(j)))          # x(u) == frame for every u: take 0


def _compose(outer, inner):
    """Index ``inner`` of the subset ``outer`` as an index of the whole."""
    if isinstance(outer, slice):
        return inner
    return outer[inner]


def _store(u, found, where, *roots):
    """Write the first root (in the order given) that lies in Blender's range."""
    best = roots[0].astype(np.float32)
    ok = (best >= _ROOT_LO) & (best <= _ROOT_HI)
    for r in roots[1:]:
        if ok.all():
            break
        r = r.astype(np.float32)
        take = ~ok & (r >= _ROOT_LO) & (r <= _ROOT_HI)
        best[take] = r[take]
        ok |= take
    u[where] = best
    found[where] = ok


# -- easing modes ------------------------------------------------------------------
# Robert Penner's easing equations in Blender's form: ``time`` since the earlier key,
# ``begin`` its value, ``change`` the rise to the later key, over ``duration``.
