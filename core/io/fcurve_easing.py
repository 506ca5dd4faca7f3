"""The easing modes of F-Curve keys: Robert Penner's easing equations in
Blender's form (``time`` since the earlier key, ``begin`` its value, ``change``
the rise to the later key, over ``duration``), everything in float32 with the
operations in the order Blender does them."""

import numpy as np

from .fcurve_keys import (BACK, BOUNCE, CIRC, CUBIC, EASE_IN, EASE_IN_OUT, EASE_OUT, ELASTIC, EXPO, QUAD, QUART,
                          QUINT, SINE, F32 as _F)

_TWO = _F(2.0)
_HALF_PI = _F(np.pi / 2)
_PI = _F(np.pi)
_ONE = _F(1.0)
_POW_MIN = _F(2.0 ** -10)
_POW_SCALE = _F(1.0) / (_F(1.0) - _POW_MIN)
# Modes whose AUTO easing means ease out (all others ease in).
_AUTO_OUT = (BACK, BOUNCE, ELASTIC)


def ease(kind, easing, back, time, begin, change, duration):
    """Values of segments with easing ``kind`` (interpolation codes) at ``time`` after their first key."""
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
