"""Evaluate Blender F-Curve keyframes in bulk, the way Blender does.

:func:`evaluate_keys` takes the keys of one F-Curve as ``foreach_get`` reads them
(``co``, ``handle_left``, ``handle_right``, ``interpolation``) and returns the
curve's value on many frames at once. It follows Blender's own evaluation step by
step, in Blender's precision: keys, handles and frames are single precision and so
is every sum Blender does in single precision; the cubic is solved in double
precision, as Blender solves it. The result agrees with ``FCurve.evaluate`` to a
few units in the last place of a float32.

What Blender does, and so what is done here:

* A frame at or before the first key, or at or after the last, is extrapolated.
  CONSTANT extrapolation (or a CONSTANT end key) holds the end key's value. LINEAR
  extrapolation continues along the line from the end key to its neighbouring key
  when the end key is LINEAR, and along the end key's outer handle otherwise
  (a single LINEAR key stays constant).
* A frame within 1e-4 of a key takes that key's value.
* Between two keys the interpolation of the earlier key decides: CONSTANT holds it,
  LINEAR draws a line, BEZIER draws the cubic through the earlier key, its right
  handle, the later key's left handle and the later key. The easing modes (SINE,
  QUAD, ... BOUNCE, and BACK given its ``back`` factors) follow Robert Penner's
  equations as Blender writes them.

The Bezier segment is a parametric curve ``(x(t), y(t))``, ``t`` in ``[0, 1]``. To
get ``y`` at a frame, Blender first makes sure that ``x(t)`` never runs backward:
a handle that reaches further in time than the whole segment is shortened,
keeping its direction, until it reaches exactly across the segment (each handle on
its own). With both handles inside the segment's time span, ``x(t)`` is monotonic,
so ``x(t) = frame`` has one root in ``[0, 1]``. That cubic is solved in closed
form (Cardano's formula when it has one real root, the trigonometric form when it
has three, the quadratic or linear formula when the cubic term vanishes), the
first root found in ``[0, 1]`` is taken, and ``y(t)`` is evaluated there. A frame
whose cubic has no root in range evaluates to 0, as in Blender (it does not happen
with keys and handles Blender has sorted).

Not covered (the caller must fall back to ``FCurve.evaluate``): F-Curve
modifiers, ELASTIC interpolation, BACK without its factors, curves on integer,
boolean or enum properties (Blender rounds those), baked sample points.
"""

import numpy as np

from .errors import MotionMatchingError

# Keyframe.interpolation, as foreach_get reads it (checked on Blender 4.2, 4.5, 5.0).
CONSTANT, LINEAR, BEZIER = 0, 1, 2
BACK, BOUNCE, CIRC, CUBIC, ELASTIC, EXPO, QUAD, QUART, QUINT, SINE = range(3, 13)
INTERPOLATION = {
    "CONSTANT": CONSTANT, "LINEAR": LINEAR, "BEZIER": BEZIER, "BACK": BACK, "BOUNCE": BOUNCE,
    "CIRC": CIRC, "CUBIC": CUBIC, "ELASTIC": ELASTIC, "EXPO": EXPO, "QUAD": QUAD,
    "QUART": QUART, "QUINT": QUINT, "SINE": SINE,
}
# Keyframe.easing.
EASE_AUTO, EASE_IN, EASE_OUT, EASE_IN_OUT = 0, 1, 2, 3
EASING = {"AUTO": EASE_AUTO, "EASE_IN": EASE_IN, "EASE_OUT": EASE_OUT, "EASE_IN_OUT": EASE_IN_OUT}
# FCurve.extrapolation.
EXTRAPOLATION = {"CONSTANT": 0, "LINEAR": 1}

_F = np.float32
_KEY_SNAP = _F(1e-4)            # a frame this close to a key takes the key's value
_FLT_EPSILON = _F(np.finfo(np.float32).eps)
_ROOT_LO = _F(-1.0e-10)         # roots accepted in [_ROOT_LO, _ROOT_HI]
_ROOT_HI = _F(1.000001)
_TWO, _THREE = _F(2.0), _F(3.0)


class UnsupportedCurve(MotionMatchingError):
    """The keys use something this module does not evaluate; ask Blender instead."""


def evaluate_keys(co, handle_left, handle_right, interpolation, frames,
                  extrapolation="CONSTANT", easing=None, back=None):
    """Values of one F-Curve on ``frames``, as Blender evaluates it.

    ``co``, ``handle_left``, ``handle_right``: (n, 2) key and handle positions
    (frame, value), keys in time order; ``interpolation``: (n,) integer codes of
    Keyframe.interpolation (see :data:`INTERPOLATION`); ``frames``: any shape;
    ``extrapolation``: "CONSTANT" or "LINEAR" (or 0 / 1); ``easing``: (n,)
    Keyframe.easing codes, AUTO when None (only the easing modes read it);
    ``back``: (n,) Keyframe.back, needed only for BACK interpolation.

    Returns float64 values shaped like ``frames`` (a curve without keys is 0).
    Raises :class:`UnsupportedCurve` for ELASTIC interpolation, BACK without
    ``back``, unknown codes, or keys out of time order.
    """
    co = _as_points(co, "co")
    n = len(co)
    hl = _as_points(handle_left, "handle_left", n)
    hr = _as_points(handle_right, "handle_right", n)
    ipo = np.asarray(interpolation).astype(np.int64).reshape(-1)
    if len(ipo) != n:
        raise ValueError("interpolation has %d codes for %d keys" % (len(ipo), n))
    frames = np.asarray(frames, dtype=np.float64)
    shape = frames.shape
    t = frames.astype(np.float32).reshape(-1)
    if n == 0:
        return np.zeros(shape)
    ext = _extrapolation_code(extrapolation)
    x, y = co[:, 0], co[:, 1]
    if n > 1 and np.any(x[1:] < x[:-1]):
        raise UnsupportedCurve("The F-Curve's keys are not in time order.")

    # Only the keys that start a segment interpolate; the last key's mode matters
    # only for extrapolation, where every code is understood.
    seg_ipo = ipo[:-1]
    known = (seg_ipo >= CONSTANT) & (seg_ipo <= SINE)
    if not np.all(known):
        raise UnsupportedCurve("Unknown keyframe interpolation code %d." % seg_ipo[~known][0])
    if np.any(seg_ipo == ELASTIC):
        raise UnsupportedCurve("ELASTIC interpolation is not evaluated here.")
    if back is None and np.any(seg_ipo == BACK):
        raise UnsupportedCurve("BACK interpolation needs the keys' back factors.")

    out = np.empty(t.shape, dtype=np.float32)
    before = t <= x[0]
    after = (t >= x[-1]) & ~before
    if before.any():
        out[before] = _extrapolate(co, hl, ipo, t[before], ext, 0, 1)
    if after.any():
        out[after] = _extrapolate(co, hr, ipo, t[after], ext, n - 1, -1)
    inside = np.flatnonzero(~(before | after))
    if len(inside):
        out[inside] = _interpolate(co, hl, hr, ipo, t[inside], easing, back)
    return out.astype(np.float64).reshape(shape)


def _as_points(a, name, n=None):
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 1 and a.size % 2 == 0:
        a = a.reshape(-1, 2)        # accept the flat foreach_get buffer too
    if a.ndim != 2 or a.shape[1] != 2 or (n is not None and len(a) != n):
        raise ValueError("%s must be (n, 2) points%s" % (name, "" if n is None else ", n = %d" % n))
    return a


def _extrapolation_code(extrapolation):
    if isinstance(extrapolation, str):
        if extrapolation not in EXTRAPOLATION:
            raise UnsupportedCurve("Unknown F-Curve extrapolation %r." % extrapolation)
        return EXTRAPOLATION[extrapolation]
    if int(extrapolation) not in (0, 1):
        raise UnsupportedCurve("Unknown F-Curve extrapolation %r." % extrapolation)
    return int(extrapolation)


def _extrapolate(co, handle, ipo, t, ext, k, toward):
    """Frames beyond end key ``k``; ``toward`` (+1 / -1) points at its neighbour,
    ``handle`` holds the end key's outer handle (left for the first key)."""
    xk, yk = co[k, 0], co[k, 1]
    if ext == EXTRAPOLATION["CONSTANT"] or ipo[k] == CONSTANT:
        return np.full(t.shape, yk, dtype=np.float32)
    if ipo[k] == LINEAR:
        if len(co) == 1:
            return np.full(t.shape, yk, dtype=np.float32)
        run = co[k + toward, 0] - xk
        rise = co[k + toward, 1] - yk
    else:
        # Blender measures the slope from the handle to the key.
        run = xk - handle[k, 0]
        rise = yk - handle[k, 1]
    if run == 0:
        return np.full(t.shape, yk, dtype=np.float32)
    slope = np.float32(rise / run)
    return yk - slope * (xk - t)


def _interpolate(co, hl, hr, ipo, t, easing, back):
    """Frames strictly between the first and the last key."""
    x, y = co[:, 0], co[:, 1]
    nxt = np.searchsorted(x, t, side="left")      # x[nxt - 1] < t <= x[nxt]
    nxt = np.clip(nxt, 1, len(x) - 1)
    prv = nxt - 1
    out = np.empty(t.shape, dtype=np.float32)

    # Snap to a key within 1e-4 frame (Blender's key search does this).
    near_next = np.abs(x[nxt] - t) <= _KEY_SNAP
    near_prev = (np.abs(t - x[prv]) <= _KEY_SNAP) & ~near_next
    out[near_next] = y[nxt[near_next]]
    out[near_prev] = y[prv[near_prev]]
    todo = ~(near_next | near_prev)

    duration = x[nxt] - x[prv]
    mode = ipo[prv]
    hold = todo & ((mode == CONSTANT) | (duration == 0))
    out[hold] = y[prv[hold]]
    todo &= ~hold

    lin = todo & (mode == LINEAR)
    if lin.any():
        p = prv[lin]
        change = y[p + 1] - y[p]
        out[lin] = change * (t[lin] - x[p]) / duration[lin] + y[p]
    bez = todo & (mode == BEZIER)
    if bez.any():
        out[bez] = _bezier(co, hl, hr, prv[bez], t[bez])
    ease = todo & (mode > BEZIER)
    if ease.any():
        p = prv[ease]
        modes = np.zeros(len(x), np.int64) if easing is None else np.asarray(easing).astype(np.int64)
        backs = None if back is None else np.asarray(back, dtype=np.float32).reshape(-1)
        out[ease] = _ease(mode[ease], modes[p], None if backs is None else backs[p],
                          t[ease] - x[p], y[p], y[p + 1] - y[p], duration[ease])
    return out


def _segments(co, hl, hr):
    """Per segment: the four control points after Blender's handle correction,
    and whether the segment is flat (all four values equal to within float eps)."""
    p0, p1, p2, p3 = co[:-1], hr[:-1].copy(), hl[1:].copy(), co[1:]
    flat = ((np.abs(p0[:, 1] - p3[:, 1]) < _FLT_EPSILON)
            & (np.abs(p1[:, 1] - p2[:, 1]) < _FLT_EPSILON)
            & (np.abs(p2[:, 1] - p3[:, 1]) < _FLT_EPSILON))
    # Handle correction: a handle longer in time than the segment would let x(t)
    # turn back, giving two values on one frame. Such a handle is scaled toward
    # its key until its time length equals the segment's (direction kept).
    d1 = p0 - p1
    d2 = p3 - p2
    span = p3[:, 0] - p0[:, 0]
    len1 = np.abs(d1[:, 0])
    len2 = np.abs(d2[:, 0])
    some = (len1 + len2) != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        long1 = some & (len1 > span)
        if long1.any():
            fac = (span[long1] / len1[long1])[:, None]
            p1[long1] = p0[long1] - fac * d1[long1]
        long2 = some & (len2 > span)
        if long2.any():
            fac = (span[long2] / len2[long2])[:, None]
            p2[long2] = p3[long2] - fac * d2[long2]
    return p0, p1, p2, p3, flat


def _power_coefficients(q0, q1, q2, q3):
    """Bezier control values -> c1, c2, c3 of c0 + c1 t + c2 t^2 + c3 t^3 (float32,
    summed in Blender's order; c0 is q0)."""
    c1 = _THREE * (q1 - q0)
    c2 = _THREE * (q0 - _TWO * q1 + q2)
    c3 = q3 - q0 + _THREE * (q1 - q2)
    return c1, c2, c3


def _bezier(co, hl, hr, seg, t):
    """Bezier segments ``seg`` (index of their first key) at frames ``t``."""
    p0, p1, p2, p3, flat = _segments(co, hl, hr)
    out = np.empty(t.shape, dtype=np.float32)
    is_flat = flat[seg]
    out[is_flat] = p0[seg[is_flat], 1]
    curved = ~is_flat
    if not curved.any():
        return out
    seg, t = seg[curved], t[curved]
    cx1, cx2, cx3 = _power_coefficients(p0[:, 0], p1[:, 0], p2[:, 0], p3[:, 0])
    cx0 = p0[seg, 0] - t                     # x(t) - frame, its constant term
    u, found = _first_root(cx0.astype(np.float64), cx1[seg].astype(np.float64),
                           cx2[seg].astype(np.float64), cx3[seg].astype(np.float64))
    cy1, cy2, cy3 = _power_coefficients(p0[:, 1], p1[:, 1], p2[:, 1], p3[:, 1])
    uu = u * u
    val = p0[seg, 1] + u * cy1[seg] + uu * cy2[seg] + uu * u * cy3[seg]
    out[curved] = np.where(found, val, _F(0.0))
    return out


def _first_root(c0, c1, c2, c3):
    """First root in [0, 1] (with Blender's slack) of c0 + c1 u + c2 u^2 + c3 u^3,
    in double precision, rounded to float32; ``found`` False where none is.

    Roots are produced in the order Blender produces them, so where the cubic has
    several in range the same one is chosen.
    """
    m = len(c0)
    roots = np.full((m, 3), np.nan)
    cubic = c3 != 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if cubic.any():
            roots[cubic] = _cubic_roots(c0[cubic], c1[cubic], c2[cubic], c3[cubic])
        quad = ~cubic & (c2 != 0.0)
        if quad.any():
            roots[quad, :2] = _quadratic_roots(c0[quad], c1[quad], c2[quad])
        line = ~cubic & ~quad & (c1 != 0.0)
        roots[line, 0] = -c0[line] / c1[line]
        const = ~cubic & ~quad & ~line & (c0 == 0.0)
        roots[const, 0] = 0.0               # x(t) == frame everywhere: take t = 0
    roots = roots.astype(np.float32)
    ok = (roots >= _ROOT_LO) & (roots <= _ROOT_HI)
    first = np.argmax(ok, axis=1)
    found = ok[np.arange(m), first]
    return np.where(found, roots[np.arange(m), first], _F(0.0)), found


def _cubic_roots(c0, c1, c2, c3):
    """Real roots of the cubic, as (m, 3) with NaN for missing ones.

    Divide by c3 and shift u = v - a to the depressed cubic v^3 + 3 p v + 2 q = 0.
    Its discriminant d = q^2 + p^3 tells one real root (d > 0: Cardano, sum of two
    cube roots), a repeated root (d = 0), or three real roots (d < 0: v = 2 sqrt(-p)
    cos((phi + 2 k pi) / 3) with cos(phi) = -q / sqrt(-p^3)).
    """
    a = c2 / c3 / 3.0
    b = c1 / c3
    c = c0 / c3
    p = b / 3.0 - a * a
    q = (2.0 * a * a * a - a * b + c) / 2.0
    d = q * q + p * p * p
    out = np.full((len(c0), 3), np.nan)

    one = d > 0.0
    if one.any():
        s = np.sqrt(d[one])
        qo = q[one]
        out[one, 0] = np.cbrt(-qo + s) + np.cbrt(-qo - s) - a[one]
    double = d == 0.0
    if double.any():
        r = np.cbrt(-q[double])
        out[double, 0] = 2.0 * r - a[double]
        out[double, 1] = -r - a[double]
    three = d < 0.0
    if three.any():
        pt, qt, at = p[three], q[three], a[three]
        # No clipping: where rounding pushes the cosine past 1, Blender gets NaN
        # (no root, value 0) and so does this.
        phi = np.arccos(-qt / np.sqrt(-(pt * pt * pt)))
        r = np.sqrt(-pt)
        cs = np.cos(phi / 3.0)
        sn = np.sqrt(3.0 - 3.0 * cs * cs)     # sqrt(3) sin(phi / 3)
        out[three, 0] = 2.0 * r * cs - at
        out[three, 1] = -r * (cs + sn) - at
        out[three, 2] = -r * (cs - sn) - at
    return out


def _quadratic_roots(c0, c1, c2):
    """Roots of c0 + c1 u + c2 u^2 (c2 != 0), smaller-sign one first; (m, 2)."""
    disc = c1 * c1 - 4.0 * c2 * c0
    out = np.full((len(c0), 2), np.nan)
    two = disc > 0.0
    s = np.sqrt(np.where(two, disc, 0.0))
    out[two, 0] = (-c1[two] - s[two]) / (2.0 * c2[two])
    out[two, 1] = (-c1[two] + s[two]) / (2.0 * c2[two])
    rep = disc == 0.0
    out[rep, 0] = -c1[rep] / (2.0 * c2[rep])
    return out


# -- easing modes ------------------------------------------------------------------
# Robert Penner's easing equations in Blender's form: ``time`` since the earlier key,
# ``begin`` its value, ``change`` the rise to the later key, over ``duration``.
# Everything in float32, operations in the order Blender does them.

_HALF_PI = _F(np.pi / 2)
_PI = _F(np.pi)
_ONE = _F(1.0)
_POW_MIN = _F(2.0 ** -10)
_POW_SCALE = _F(1.0) / (_F(1.0) - _POW_MIN)
# Modes whose AUTO easing means ease out (all others ease in).
_AUTO_OUT = (BACK, BOUNCE, ELASTIC)


def _ease(kind, easing, back, time, begin, change, duration):
    out = np.empty(time.shape, dtype=np.float32)
    direction = easing.copy()
    auto = ~np.isin(direction, (EASE_IN, EASE_OUT, EASE_IN_OUT))   # AUTO, or unknown
    direction[auto] = np.where(np.isin(kind[auto], _AUTO_OUT), EASE_OUT, EASE_IN)
    for k in np.unique(kind):
        for e in (EASE_IN, EASE_OUT, EASE_IN_OUT):
            sel = (kind == k) & (direction == e)
            if sel.any():
                args = (time[sel], begin[sel], change[sel], duration[sel])
                if k == BACK:
                    args += (back[sel],)
                out[sel] = _EASINGS[k](e, *args)
    return out


def _in_out(e, time, begin, change, duration, ease_in, ease_out):
    """Ease in over the first half and out over the second, from per-half
    functions of the normalised time s in [0, 2)."""
    s = time / (duration / _TWO)
    half = change / _TWO
    first = s < _ONE
    out = np.empty(time.shape, dtype=np.float32)
    out[first] = ease_in(s[first], half[first]) + begin[first]
    out[~first] = ease_out(s[~first], half[~first]) + begin[~first]
    return out


def _power_ease(power):
    def f(e, time, begin, change, duration):
        if e == EASE_IN:
            s = time / duration
            return _mul_pow(change, s, power) + begin
        if e == EASE_OUT:
            if power == 2:
                s = time / duration
                return -change * s * (s - _TWO) + begin
            s = time / duration - _ONE
            if power % 2:
                return change * (_pow(s, power) + _ONE) + begin
            return -change * (_pow(s, power) - _ONE) + begin
        if power == 2:   # Blender writes the second half of QUAD differently
            return _in_out(e, time, begin, change, duration,
                           lambda s, h: _mul_pow(h, s, 2),
                           lambda s, h: -h * ((s - _ONE) * ((s - _ONE) - _TWO) - _ONE))
        if power % 2:
            return _in_out(e, time, begin, change, duration,
                           lambda s, h: _mul_pow(h, s, power),
                           lambda s, h: h * (_pow(s - _TWO, power) + _TWO))
        return _in_out(e, time, begin, change, duration,
                       lambda s, h: _mul_pow(h, s, power),
                       lambda s, h: -h * (_pow(s - _TWO, power) - _TWO))
    return f


def _pow(s, power):
    """s * s * ... (power factors), multiplied left to right like Blender."""
    r = s
    for _ in range(power - 1):
        r = r * s
    return r


def _mul_pow(c, s, power):
    """c * s * s ... multiplied left to right like Blender."""
    r = c
    for _ in range(power):
        r = r * s
    return r


def _sine(e, time, begin, change, duration):
    if e == EASE_IN:
        return -change * np.cos(time / duration * _HALF_PI) + change + begin
    if e == EASE_OUT:
        return change * np.sin(time / duration * _HALF_PI) + begin
    return -change / _TWO * (np.cos(_PI * time / duration) - _ONE) + begin


def _circ(e, time, begin, change, duration):
    if e == EASE_IN:
        s = time / duration
        return -change * (np.sqrt(_ONE - s * s) - _ONE) + begin
    if e == EASE_OUT:
        s = time / duration - _ONE
        return change * np.sqrt(_ONE - s * s) + begin
    return _in_out(e, time, begin, change, duration,
                   lambda s, h: -h * (np.sqrt(_ONE - s * s) - _ONE),
                   lambda s, h: h * (np.sqrt(_ONE - (s - _TWO) * (s - _TWO)) + _ONE))


def _expo_in(time, begin, change, duration):
    v = change * (np.power(_TWO, _F(10.0) * (time / duration - _ONE)) - _POW_MIN) * _POW_SCALE + begin
    return np.where(time == 0, begin, v)


def _expo_out(time, begin, change, duration):
    v = change * (_ONE - (np.power(_TWO, _F(-10.0) * time / duration) - _POW_MIN) * _POW_SCALE) + begin
    return np.where(time == 0, begin, v)


def _expo(e, time, begin, change, duration):
    if e == EASE_IN:
        return _expo_in(time, begin, change, duration)
    if e == EASE_OUT:
        return _expo_out(time, begin, change, duration)
    dh = duration / _TWO
    ch = change / _TWO
    first = time <= dh
    out = np.empty(time.shape, dtype=np.float32)
    out[first] = _expo_in(time[first], begin[first], ch[first], dh[first])
    out[~first] = _expo_out(time[~first] - dh[~first], begin[~first] + ch[~first], ch[~first],
                            dh[~first])
    return out


def _bounce_out(time, begin, change, duration):
    s = time / duration
    # Four parabolic arcs, each ending at the target (Penner's constants).
    k = _F(7.5625)
    out = np.empty(s.shape, dtype=np.float32)
    bounds = (_ONE / _F(2.75), _TWO / _F(2.75), _F(2.5) / _F(2.75))
    arcs = ((None, None), (_F(1.5) / _F(2.75), _F(0.75)),
            (_F(2.25) / _F(2.75), _F(0.9375)), (_F(2.625) / _F(2.75), _F(0.984375)))
    which = np.searchsorted(np.array(bounds, dtype=np.float32), s, side="right")
    for i, (shift, lift) in enumerate(arcs):
        sel = which == i
        if not sel.any():
            continue
        si = s[sel]
        if shift is None:
            out[sel] = change[sel] * (k * si * si) + begin[sel]
        else:
            si = si - shift
            out[sel] = change[sel] * ((k * si) * si + lift) + begin[sel]
    return out


def _bounce(e, time, begin, change, duration):
    zero = np.zeros_like(begin)
    if e == EASE_OUT:
        return _bounce_out(time, begin, change, duration)
    if e == EASE_IN:
        return change - _bounce_out(duration - time, zero, change, duration) + begin
    first = time < duration / _TWO
    out = np.empty(time.shape, dtype=np.float32)
    tf, cf, df = time[first], change[first], duration[first]
    out[first] = ((cf - _bounce_out(df - tf * _TWO, zero[first], cf, df)) * _F(0.5)
                  + begin[first])
    tl, cl, dl = time[~first], change[~first], duration[~first]
    out[~first] = (_bounce_out(tl * _TWO - dl, zero[~first], cl, dl) * _F(0.5)
                   + cl * _F(0.5) + begin[~first])
    return out


def _back(e, time, begin, change, duration, overshoot):
    if e == EASE_IN:
        s = time / duration
        return change * s * s * ((overshoot + _ONE) * s - overshoot) + begin
    if e == EASE_OUT:
        s = time / duration - _ONE
        return change * (s * s * ((overshoot + _ONE) * s + overshoot) + _ONE) + begin
    o = overshoot * _F(1.525)
    s = time / (duration / _TWO)
    first = s < _ONE
    out = np.empty(time.shape, dtype=np.float32)
    sf, of = s[first], o[first]
    out[first] = change[first] / _TWO * (sf * sf * ((of + _ONE) * sf - of)) + begin[first]
    sl, ol = s[~first] - _TWO, o[~first]
    out[~first] = (change[~first] / _TWO * (sl * sl * ((ol + _ONE) * sl + ol) + _TWO)
                   + begin[~first])
    return out


_EASINGS = {
    QUAD: _power_ease(2), CUBIC: _power_ease(3), QUART: _power_ease(4), QUINT: _power_ease(5),
    SINE: _sine, CIRC: _circ, EXPO: _expo, BOUNCE: _bounce, BACK: _back,
}
