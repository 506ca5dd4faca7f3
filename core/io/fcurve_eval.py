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

The Bezier solve is in :mod:`.fcurve_bezier`, the easing modes in :mod:`.fcurve_easing`.

Not covered (the caller must fall back to ``FCurve.evaluate``): F-Curve
modifiers, ELASTIC interpolation, BACK without the keys' ``back``, curves on
integer, boolean or enum properties (Blender rounds or holds those), baked sample
points (``FCurve.sampled_points``). Only the curve is evaluated: NLA strips,
action influence and the like are the caller's business.
"""

import numpy as np

from .fcurve_bezier import bezier
from .fcurve_easing import ease
from .fcurve_keys import (BACK, BEZIER, CONSTANT, ELASTIC, EXTRAPOLATION, LINEAR, SINE, F32 as _F, UnsupportedCurve,
                          subset)

# What a frame between two keys does (see _interpolate).
_PREV, _NEXT, _LINE, _CURVE, _EASE = 0, 1, 2, 3, 4
_KEY_SNAP = _F(1e-4)            # a frame this close to a key takes the key's value
_CHUNK = 1 << 16                # values computed per pass (see evaluate_curves)


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
        idx = subset(inside.reshape(-1))
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
            out[sel] = bezier(x, y, hl, hr, p, since[sel])
        else:
            out[sel] = ease(mode[p], easing[p], back[p], since[sel], y[p],
                             y[p + 1] - y[p], span[p])
    return out
