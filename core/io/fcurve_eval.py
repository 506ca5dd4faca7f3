"""Evaluate Blender F-Curve keyframes in bulk, the way Blender does.

:func:`evaluate_keys` takes the keys of one F-Curve as ``foreach_get`` reads them
(``co``, ``handle_left``, ``handle_right``, ``interpolation``) and returns the
curve's value on many frames at once; :func:`evaluate_curves` does the same for
many curves in one vectorised pass (much faster than a loop over curves). Both
follow Blender's own evaluation step by step and in Blender's precision: keys,
handles and frames are float32, every sum Blender does in float32 is done in
float32 here and in the same order, and the cubic is solved in float64 with the
same closed form Blender uses. CONSTANT, LINEAR and BEZIER segments and both
extrapolations come out bit for bit as ``FCurve.evaluate`` gives them; the easing
modes within a unit in the last place. (Exact float64 maths would differ from
Blender by up to ~1e-4 on values of a few units, where a segment is steep.)

What Blender does, and so what is done here:

* A frame at or before the first key, or at or after the last, is extrapolated.
  CONSTANT extrapolation (or a CONSTANT end key) holds the end key's value. LINEAR
  extrapolation continues along the line from the end key to its neighbouring key
  when the end key is LINEAR, and along the end key's outer handle otherwise (so a
  single BEZIER key with sloped handles is not constant; a single LINEAR key is).
* A frame within 1e-4 of a key takes that key's value.
* Between two keys the interpolation of the earlier key decides: CONSTANT holds it,
  LINEAR draws a line, BEZIER draws the cubic through the earlier key, its right
  handle, the later key's left handle and the later key. The easing modes (SINE,
  QUAD, CUBIC, QUART, QUINT, EXPO, CIRC, BOUNCE, and BACK given the keys' ``back``)
  follow Robert Penner's equations as Blender writes them.

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

Not covered (the caller must fall back to ``FCurve.evaluate``): F-Curve
modifiers, ELASTIC interpolation, BACK without the keys' ``back``, curves on
integer, boolean or enum properties (Blender rounds or holds those), baked sample
points (``FCurve.sampled_points``). Only the curve is evaluated: NLA strips,
action influence and the like are the caller's business.
"""

import numpy as np

from ..errors import MotionMatchingError

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

_CHUNK = 1 << 16                # values computed per pass (see evaluate_curves)

# What a frame between two keys does (see _interpolate).
_PREV, _NEXT, _LINE, _CURVE, _EASE = 0, 1, 2, 3, 4


class UnsupportedCurve(MotionMatchingError):
    """The keys use something this module does not evaluate; ask Blender instead.

    ``curve_index`` is the position of the offending curve in the batch."""

    def __init__(self, message, curve_index=0):
        super().__init__(message)
        self.curve_index = curve_index


def evaluate_keys(co, handle_left, handle_right, interpolation, frames,
                  extrapolation="CONSTANT", easing=None, back=None):
    """Values of one F-Curve on ``frames``, as Blender evaluates it.

    ``co``, ``handle_left``, ``handle_right``: (n, 2) key and handle positions
    (frame, value) in time order (flat foreach_get buffers are accepted too);
    ``interpolation``: (n,) Keyframe.interpolation codes (:data:`INTERPOLATION`);
    ``frames``: any shape; ``extrapolation``: "CONSTANT" or "LINEAR" (or 0 / 1);
    ``easing``: (n,) Keyframe.easing codes, AUTO when None (read by easing modes
    only); ``back``: (n,) Keyframe.back, needed only for BACK interpolation.

    Returns float64 values shaped like ``frames`` (a curve without keys is 0).
    Raises :class:`UnsupportedCurve` for ELASTIC interpolation, BACK without
    ``back``, unknown codes, or keys out of time order.
    """
    curve = {"co": co, "handle_left": handle_left, "handle_right": handle_right,
             "interpolation": interpolation, "easing": easing, "back": back}
    return evaluate_curves([curve], frames, extrapolation)[0]


def evaluate_curves(curves, frames, extrapolation="CONSTANT"):
    """Values of many F-Curves on the same ``frames``: (len(curves),) + frames.shape.

    ``curves``: mappings with "co", "handle_left", "handle_right", "interpolation"
    and optionally "easing" and "back", as for :func:`evaluate_keys` (the dicts of
    the add-on's ``compat.read_curve`` fit). ``extrapolation``: one for all curves
    or one per curve. Raises :class:`UnsupportedCurve` (with ``curve_index``) if
    any curve is unsupported; :func:`check_curve` tells beforehand.
    """
    frames = np.asarray(frames, dtype=np.float64)
    t = frames.astype(np.float32).reshape(-1)
    ncurves = len(curves)
    if isinstance(extrapolation, (str, int, np.integer)):
        extrapolation = [extrapolation] * ncurves
    if len(extrapolation) != ncurves:
        raise ValueError("%d extrapolations for %d curves" % (len(extrapolation), ncurves))
    keys = [_checked(c, ext, i) for i, (c, ext) in enumerate(zip(curves, extrapolation))]
    out = np.zeros((ncurves, t.size), dtype=np.float32)
    live = [i for i, k in enumerate(keys) if len(k[0])]
    if t.size:
        # Curves go through in groups of about _CHUNK values: arrays that stay in
        # the cache are much faster than one pass over everything.
        step = max(1, _CHUNK // t.size)
        # Divisions by zero and NaN only arise in branches whose results are unused.
        with np.errstate(all="ignore"):
            for g in range(0, len(live), step):
                ids = live[g:g + step]
                out[ids] = _evaluate([keys[i] for i in ids], t)
    return out.astype(np.float64).reshape((ncurves,) + frames.shape)


def check_curve(co, interpolation, extrapolation="CONSTANT", back=None):
    """Raise :class:`UnsupportedCurve` unless these keys can be evaluated here."""
    n = len(np.asarray(co).reshape(-1, 2))
    _checked({"co": co, "handle_left": np.zeros((n, 2)), "handle_right": np.zeros((n, 2)),
              "interpolation": interpolation, "back": back}, extrapolation, 0)


def _checked(curve, extrapolation, index):
    """One curve's keys as float32 / int arrays, or UnsupportedCurve."""
    co = _as_points(curve["co"], "co")
    n = len(co)
    hl = _as_points(curve["handle_left"], "handle_left", n)
    hr = _as_points(curve["handle_right"], "handle_right", n)
    ipo = np.asarray(curve["interpolation"]).astype(np.int64).reshape(-1)
    if len(ipo) != n:
        raise ValueError("interpolation has %d codes for %d keys" % (len(ipo), n))
    easing = curve.get("easing")
    easing = np.zeros(n, np.int64) if easing is None else np.asarray(easing).astype(np.int64)
    back = curve.get("back")
    back = None if back is None else np.asarray(back, dtype=np.float32).reshape(-1)
    if isinstance(extrapolation, str):
        ext = EXTRAPOLATION.get(extrapolation, -1)
    else:
        ext = int(extrapolation)
    if ext not in (0, 1):
        raise UnsupportedCurve("Unknown F-Curve extrapolation %r." % (extrapolation,), index)
    if n > 1 and np.any(co[1:, 0] < co[:-1, 0]):
        raise UnsupportedCurve("The F-Curve's keys are not in time order.", index)
    # Only keys that start a segment interpolate; the last key's mode matters only
    # to extrapolation, which understands every code.
    seg = ipo[:-1]
    known = (seg >= CONSTANT) & (seg <= SINE)
    if not np.all(known):
        raise UnsupportedCurve("Unknown keyframe interpolation code %d." % seg[~known][0], index)
    if np.any(seg == ELASTIC):
        raise UnsupportedCurve("ELASTIC interpolation is not evaluated here.", index)
    if np.any(seg == BACK) and (back is None or len(back) != n):
        raise UnsupportedCurve("BACK interpolation needs the keys' back factors.", index)
    if back is None:
        back = np.zeros(n, np.float32)
    return co, hl, hr, ipo, easing, back, ext


def _as_points(a, name, n=None):
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 1 and a.size % 2 == 0:
        a = a.reshape(-1, 2)        # a flat foreach_get buffer
    if a.ndim != 2 or a.shape[1] != 2 or (n is not None and len(a) != n):
        raise ValueError("%s must be (n, 2) points%s" % (name, "" if n is None else ", n = %d" % n))
    return a


def _subset(mask):
    """Indices where ``mask`` holds; a plain slice when it holds everywhere."""
    return slice(None) if mask.all() else np.flatnonzero(mask)


def _evaluate(keys, t):
    """float32 (len(keys), len(t)) for curves with at least one key each.

    All curves' keys go in one table; a curve's segments are the pairs of its
    consecutive keys in that table (pairs across two curves are never used)."""
    counts = np.array([len(k[0]) for k in keys])
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    last = first + counts - 1
    co, hl, hr, ipo, easing, back = (np.concatenate([k[j] for k in keys]) for j in range(6))
    ext = np.array([k[6] for k in keys])
    x, y = co[:, 0], co[:, 1]
    ncurves, nframes = len(keys), len(t)

    # Index of the first key at or after each frame, per curve.
    nxt = np.empty((ncurves, nframes), dtype=np.int64)
    for c in range(ncurves):
        nxt[c] = np.searchsorted(x[first[c]:last[c] + 1], t, side="left")
    before = nxt == 0                                   # t <= first key
    after = (t >= x[last][:, None]) & ~before           # t >= last key
    nxt += first[:, None]
    out = np.empty((ncurves, nframes), dtype=np.float32)
    flat = out.reshape(-1)

    for mask, end, handle, toward in ((before, first, hl, 1), (after, last, hr, -1)):
        if mask.any():
            idx = np.flatnonzero(mask)
            c = idx // nframes
            slope = _end_slopes(x, y, handle, ipo, ext, counts, end, toward)[c]
            held = y[end][c]
            # A held value is just the key's (also for infinite frames).
            flat[idx] = np.where(slope == 0, held,
                                 held - slope * (x[end][c] - t[idx - c * nframes]))

    inside = ~(before | after)
    nan = np.isnan(t)
    if nan.any():
        # Blender's key search finds nothing for NaN and holds the first key.
        inside &= ~nan
        out[:, nan] = y[first][:, None]
    if inside.any():
        idx = _subset(inside.reshape(-1))
        # Here x[first] < t < x[last], so the next key is within the curve.
        tt = t if ncurves == 1 else np.tile(t, ncurves)
        flat[idx] = _interpolate(x, y, hl, hr, ipo, easing, back, nxt.reshape(-1)[idx], tt[idx])
    return out


def _end_slopes(x, y, handle, ipo, ext, counts, end, toward):
    """Per curve, the slope Blender extrapolates with beyond key ``end`` (0 where it
    holds the key's value); ``handle`` is the key's outer handle."""
    slope = np.zeros(len(end), dtype=np.float32)
    linear = (ext == EXTRAPOLATION["LINEAR"]) & (ipo[end] != CONSTANT)
    along_keys = linear & (ipo[end] == LINEAR) & (counts > 1)
    along_handle = linear & (ipo[end] != LINEAR)
    nb = np.clip(end + toward, 0, len(x) - 1)
    run = np.where(along_keys, x[nb] - x[end], x[end] - handle[end, 0])
    rise = np.where(along_keys, y[nb] - y[end], y[end] - handle[end, 1])
    use = (along_keys | along_handle) & (run != 0)
    slope[use] = rise[use] / run[use]
    return slope


def _interpolate(x, y, hl, hr, ipo, easing, back, nxt, t):
    """Frames strictly between a curve's first and last key; ``nxt`` is the table
    index of the first key after each frame."""
    prv = nxt - 1
    span = x[1:] - x[:-1]
    mode = ipo[:-1]
    seg_kind = np.full(len(span), _EASE, dtype=np.int8)
    seg_kind[mode == LINEAR] = _LINE
    seg_kind[mode == BEZIER] = _CURVE
    seg_kind[(mode == CONSTANT) | (span == 0)] = _PREV
    kind = seg_kind[prv]
    since = t - x[prv]          # > 0 here, as x[prv] < t <= x[nxt]
    # Blender's key search snaps a frame within 1e-4 of a key onto it.
    snap = since <= _KEY_SNAP
    if snap.any():
        kind[snap] = _PREV
    snap = (x[nxt] - t) <= _KEY_SNAP
    if snap.any():
        kind[snap] = _NEXT

    out = np.empty(t.shape, dtype=np.float32)
    counts = np.bincount(kind, minlength=_EASE + 1)
    for k in np.flatnonzero(counts):
        sel = slice(None) if counts[k] == len(t) else np.flatnonzero(kind == k)
        p = prv[sel]
        if k == _PREV:
            out[sel] = y[p]
        elif k == _NEXT:
            out[sel] = y[p + 1]
        elif k == _LINE:
            out[sel] = (y[p + 1] - y[p]) * since[sel] / span[p] + y[p]
        elif k == _CURVE:
            out[sel] = _bezier(x, y, hl, hr, p, since[sel])
        else:
            out[sel] = _ease(mode[p], easing[p], back[p], since[sel], y[p],
                             y[p + 1] - y[p], span[p])
    return out


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


def _bezier(x, y, hl, hr, seg, since):
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
    cubic = _subset(c3 != 0.0)
    sc = seg[cubic]
    q = (s.k[sc] + c0[cubic] / c3[cubic]) / 2.0
    d = q * q + s.p3[sc]
    a = s.a[sc]
    # One real root (Cardano): sum of two real cube roots. (Blender takes cube
    # roots as exp(log(x) / 3); np.cbrt gives the same float32 root.)
    j = _subset(d > 0.0)
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


# C's float functions (cosf, sinf, powf) are correctly rounded in practice; numpy's
# float32 ones are not always. Computing in float64 and rounding matches C.
def _cosf(v):
    return np.cos(v.astype(np.float64)).astype(np.float32)


def _sinf(v):
    return np.sin(v.astype(np.float64)).astype(np.float32)


def _exp2f(v):
    return np.exp2(v.astype(np.float64)).astype(np.float32)


def _sine(e, time, begin, change, duration):
    if e == EASE_IN:
        return -change * _cosf(time / duration * _HALF_PI) + change + begin
    if e == EASE_OUT:
        return change * _sinf(time / duration * _HALF_PI) + begin
    return -change / _TWO * (_cosf(_PI * time / duration) - _ONE) + begin


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
    v = change * (_exp2f(_F(10.0) * (time / duration - _ONE)) - _POW_MIN) * _POW_SCALE + begin
    return np.where(time == 0, begin, v)


def _expo_out(time, begin, change, duration):
    v = change * (_ONE - (_exp2f(_F(-10.0) * time / duration) - _POW_MIN) * _POW_SCALE) + begin
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
