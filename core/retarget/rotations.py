"""Unit-quaternion pieces of the retarget: the shortest arc between two
directions, the slerp Blender blends constraints with, rotating vectors and
inverting rotations."""

import numpy as np

from ..maths import transforms as tf


def shortest_arc(a, b):
    """Unit quaternions (..., 4) of the smallest rotations taking directions
    ``a`` onto ``b`` (..., 3); opposite directions turn half a turn about an
    axis perpendicular to ``a``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    a, b = np.broadcast_arrays(a, b)
    q = np.concatenate([1.0 + np.sum(a * b, axis=-1, keepdims=True), np.cross(a, b)], axis=-1)
    opposite = q[..., 0] < 1e-9
    if np.any(opposite):
        ax = a[opposite]
        # Any axis perpendicular to a: cross with the coordinate axis a is least along.
        helper = np.eye(3)[np.argmin(np.abs(ax), axis=-1)]
        perp = np.cross(ax, helper)
        q[opposite] = np.concatenate([np.zeros((len(ax), 1)), perp], axis=-1)
    return tf.quat_normalize(q)


def rotate(q, v):
    """Vectors ``v`` (..., 3) turned by unit quaternions ``q`` (..., 4)."""
    return tf.quat_rotate(q, v)


def inverse(q):
    """The inverse of unit quaternions (their conjugate)."""
    return tf.quat_conjugate(q)


def slerp(a, b, t):
    """Shortest-path spherical interpolation of unit quaternions, as Blender
    blends a constraint's rotation by its influence."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-9
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, sin))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, sin))
    return tf.quat_normalize(wa * a + wb * b)
