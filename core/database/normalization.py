"""Normalisation of feature columns: a mean per column and one scale per group.

Search compares rows column by column, so every column is brought to comparable
units (minus its mean, divided by its group's spread) and then weighted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .feature_spec import FeatureError, group_slices

__all__ = ["MIN_GROUP_SCALE", "Normalization", "compute_normalization", "normalize", "denormalize"]

# A group whose mean standard deviation is below this is treated as constant
# (metres, metres per second, or unit-vector components): its scale becomes 1.0.
MIN_GROUP_SCALE = 1e-6


@dataclass
class Normalization:
    """Per-column mean and scale; the scale is the same number across a group."""

    mean: np.ndarray
    scale: np.ndarray


def compute_normalization(raws, masks, spec):
    """Mean and per-group scale over the rows where ``masks`` is True.

    ``raws`` is a list of (F_k, D) arrays (or one (N, D) array) and ``masks`` a
    matching list of (F_k,) booleans, or None for all rows. Each group's scale is
    the mean of its columns' standard deviations (population, ddof 0), so the
    columns keep their relative sizes (a walk's forward spread stays larger than its
    sideways one). A group that does not vary (scale below ``MIN_GROUP_SCALE``) gets
    scale 1.0 instead of a division by zero; its columns then only lose their mean.
    """
    if isinstance(raws, np.ndarray):
        raws = [raws]
        masks = None if masks is None else [masks]
    if masks is None:
        masks = [None] * len(raws)
    if len(raws) == 0 or len(masks) != len(raws):
        raise FeatureError("The normalisation needs one mask per clip and at least one clip.")
    parts = []
    for r, m in zip(raws, masks):
        r = np.asarray(r, dtype=np.float64)
        if r.ndim != 2 or r.shape[1] != spec.dim:
            raise FeatureError(
                f"A feature table has shape {r.shape}; the feature set has {spec.dim} columns.")
        parts.append(r if m is None else r[np.asarray(m, dtype=bool)])
    x = np.concatenate(parts, axis=0)
    if x.shape[0] == 0:
        raise FeatureError("No frame is left to normalise the features with: every frame is excluded.")
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    scale = np.empty(spec.dim)
    for sl in group_slices(spec).values():
        s = float(std[sl].mean())
        scale[sl] = s if s >= MIN_GROUP_SCALE else 1.0
    return Normalization(mean=mean, scale=scale)


def normalize(raw, norm, weights):
    """``(raw - mean) / scale * weights`` column by column; raw (..., D), float64."""
    raw = np.asarray(raw, dtype=np.float64)
    return (raw - norm.mean) / norm.scale * weights


def denormalize(z, norm, weights):
    """Inverse of :func:`normalize`. Columns of weight 0 carry no information; they
    come back as the mean."""
    z = np.asarray(z, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    safe = np.where(w > 0, w, 1.0)
    return np.where(w > 0, z / safe * norm.scale + norm.mean, norm.mean)
