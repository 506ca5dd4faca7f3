"""The facing convention: yaw 0 faces -Y (Blender's front, where a character
looks) and positive yaw turns counter-clockwise seen from above (a right-handed
turn about +Z), so the facing of yaw ``a`` is ``(sin a, -cos a)`` on the ground."""

import numpy as np

from . import same_everywhere


def yaw_to_facing(yaw):
    """Yaw angles (...) to unit ground-plane facings (..., 2); yaw 0 faces -Y."""
    yaw = np.asarray(yaw, dtype=np.float64)
    return np.stack([np.sin(yaw), -np.cos(yaw)], axis=-1)


def facing_to_yaw(facing):
    """Ground-plane facings (..., 2) (any length > 0) to yaw angles in ``(-pi, pi]``."""
    f = np.asarray(facing, dtype=np.float64)
    return same_everywhere.arctan2(f[..., 0], -f[..., 1])
