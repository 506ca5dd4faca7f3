"""Savitzky-Golay smoothing along the first axis, in numpy.

Each output sample is the value at the window's centre of the least-squares
polynomial (of the given order) through the window's samples. Because that
value is linear in the samples, the interior is one convolution with fixed
weights: the first row of the pseudo-inverse of the window's Vandermonde matrix.
At the ends, where a centred window does not fit, the polynomial fitted to the
first (last) full window is evaluated at the missing positions instead, so the
ends are smoothed without padding the signal with invented samples.
"""

import numpy as np

from ..errors import MotionMatchingError


class SmoothingError(MotionMatchingError):
    """Smoothing settings that cannot work."""


def check_window(window, order):
    if window < 1 or window % 2 == 0:
        raise SmoothingError("The smoothing window must be an odd number of frames (got %d)." % window)
    if order < 0 or order >= window:
        raise SmoothingError(
            "The smoothing order must be at least 0 and below the window (got order %d, window %d)." % (order, window))


def savgol_filter(x, window, order):
    """Smooth ``x`` (F, ...) along axis 0.

    A signal shorter than the window is smoothed with the largest odd window
    that fits (and is above the order); one too short for that is returned
    unchanged.
    """
    check_window(window, order)
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if n < window:
        window = n if n % 2 else n - 1
        if window <= order:
            return x.copy()
    half = window // 2
    t = np.arange(-half, half + 1, dtype=np.float64)
    vander = t[:, None] ** np.arange(order + 1)[None, :]
    pinv = np.linalg.pinv(vander)  # (order+1, window): sample weights for each coefficient
    flat = x.reshape(n, -1)
    out = np.empty_like(flat)
    windows = np.lib.stride_tricks.sliding_window_view(flat, window, axis=0)  # (n-w+1, D, w)
    out[half:n - half] = windows @ pinv[0]
    # Ends: evaluate the polynomial of the first/last full window.
    coef_head = pinv @ flat[:window]
    coef_tail = pinv @ flat[n - window:]
    lead = vander[:half]
    trail = vander[half + 1:]
    out[:half] = lead @ coef_head
    out[n - half:] = trail @ coef_tail
    return out.reshape(x.shape)
