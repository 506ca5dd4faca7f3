"""Functions whose last bit does not depend on the processor or numpy's version.

numpy computes float64 ``arctan2`` and ``exp`` (and ``log``, ``arccos``, ...) with
vector code chosen at run time: with AVX-512 it uses its own approximations,
without it the C library's, and the two differ in the last bit now and then.
Costs that decide which row the bake plays must not, so they use these: the C
library's functions (Python's ``math``), one value at a time; and sums in a
fixed order (:func:`column_sums`).
"""

import math

import numpy as np


def arctan2(y, x):
    """``np.arctan2(y, x)`` (broadcast, float64) computed by ``math.atan2``."""
    y, x = np.broadcast_arrays(np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.fromiter(map(math.atan2, y.ravel().tolist(), x.ravel().tolist()), dtype=np.float64, count=y.size)
    return out.reshape(y.shape)


def _each(fn, x):
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


def exp_float(v):
    """``np.exp`` of one Python float by ``math.exp`` (overflow gives inf)."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


_exp = exp_float


def exp(x):
    """``np.exp(x)`` (float64) computed by ``math.exp`` (overflow gives inf, as numpy's)."""
    return _each(_exp, x)


def arccos(x):
    """``np.arccos(x)`` (float64, x within [-1, 1]) computed by ``math.acos``."""
    return _each(math.acos, x)


PAIRWISE_BLOCK = 128    # numpy's pairwise summation: eight running sums up to this many values, halves beyond


def column_sums(x):
    """Sums over the first axis of ``x`` (D, N): each column added in the order
    numpy's ``add.reduce`` adds the D values of one contiguous row (its pairwise
    sum, from 0), so ``column_sums(a.T)`` has the bits of ``np.add.reduce(a, axis=1)``
    for an (N, D) float64 ``a`` (tested), in whole-array additions across the N
    columns rather than one short sum per row."""
    return 0.0 + _pairwise(x, 0, len(x))


def _pairwise(x, start, n):
    if n < 8:
        res = np.zeros(x.shape[1:])
        for i in range(start, start + n):
            res += x[i]
        return res
    if n <= PAIRWISE_BLOCK:
        if n - n % 8 > 8:      # the first additions make the eight running sums (no copies first)
            r = [x[start + j] + x[start + 8 + j] for j in range(8)]
            i = 16
        else:
            r = [x[start + j].copy() for j in range(8)]
            i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += x[start + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            res += x[start + k]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(x, start, half) + _pairwise(x, start + half, n - half)
