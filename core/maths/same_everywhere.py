"""Functions whose last bit does not depend on the processor or numpy's version.

numpy computes float64 ``arctan2`` and ``exp`` (and ``log``, ``arccos``, ...) with
vector code chosen at run time: with AVX-512 it uses its own approximations,
without it the C library's, and the two differ in the last bit now and then.
Costs that decide which row the bake plays must not, so they use these: the C
library's functions (Python's ``math``), one value at a time.
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
