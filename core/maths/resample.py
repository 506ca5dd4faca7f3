"""Resampling: values given on evenly spaced samples, read at fractional sample
positions by blending the two neighbouring samples.

Locations and other vectors blend linearly; unit quaternions blend linearly
after turning the second one to the same hemisphere as the first, and are then
normalised (close to a slerp for the small angles between neighbouring samples,
and what the bake keys).
"""

import numpy as np

from .transforms import quat_normalize


def sample_positions(times, dt, count):
    """Fractional sample index (T,) of each time in seconds from the first
    sample, for ``count`` samples ``dt`` seconds apart (clamped to the samples)."""
    return np.clip(np.asarray(times, dtype=np.float64) / dt, 0.0, count - 1)


def resample(values, x, rotations=False):
    """``values`` (S, ...) read at fractional sample indices ``x`` (T,): (T, ...).
    ``rotations``: the last axis holds quaternions (w, x, y, z), blended along
    the shorter arc and normalised."""
    values = np.asarray(values)
    x = np.asarray(x, dtype=np.float64)
    i0 = np.floor(x).astype(np.int64)
    i1 = np.minimum(i0 + 1, len(values) - 1)
    a = (x - i0).reshape(x.shape + (1,) * (values.ndim - 1))
    v0, v1 = values[i0], values[i1]
    if rotations:
        v1 = np.where(np.sum(v0 * v1, axis=-1, keepdims=True) < 0, -v1, v1)
        return quat_normalize(v0 * (1 - a) + v1 * a)
    return v0 * (1 - a) + v1 * a
