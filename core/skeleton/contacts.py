"""Finite-difference velocities and foot contacts, vectorised over frames.

A foot is taken to be planted while its toe moves slower than a threshold. The raw
yes/no signal flickers where the speed hovers around the threshold, so it is cleaned
with a majority (median) filter over a window of ``2 * radius + 1`` frames.
"""

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "ContactError",
    "central_velocity",
    "majority_filter",
    "foot_contacts",
]


class ContactError(MotionMatchingError):
    """Contacts could not be computed from the given positions."""


def central_velocity(x, fps):
    """Velocity of ``x`` (F, ...) along the frame axis, in units per second.

    Central differences ``(x[i+1] - x[i-1]) / 2`` inside the clip; one-sided
    differences on the first and last frame, so no sample outside the clip is
    invented. A central difference of a single noisy frame is half as large as a
    forward difference and sits on the frame itself rather than half a frame away.
    A clip of one frame has zero velocity.
    """
    x = np.asarray(x, dtype=np.float64)
    v = np.zeros_like(x)
    n = x.shape[0] if x.ndim else 0
    if n < 2:
        return v
    v[1:-1] = (x[2:] - x[:-2]) * 0.5
    v[0] = x[1] - x[0]
    v[-1] = x[-1] - x[-2]
    return v * float(fps)


def majority_filter(mask, radius):
    """Median filter of a boolean signal (F, ...) along axis 0.

    Each output frame is True when more than half of the ``2 * radius + 1`` frames
    centred on it are True. Beyond the ends the first and last values are repeated
    (replicate padding), so a clip that starts planted stays planted. Runs shorter
    than ``radius + 1`` frames are removed; the window being odd, there are no ties.
    """
    mask = np.asarray(mask, dtype=bool)
    radius = int(radius)
    if radius < 0:
        raise ContactError(f"The median filter radius must be 0 or more frames, not {radius}.")
    if radius == 0 or mask.shape[0] == 0:
        return mask.copy()
    pad = [(radius, radius)] + [(0, 0)] * (mask.ndim - 1)
    padded = np.pad(mask.astype(np.int32), pad, mode="edge")
    # Sliding-window count: difference of a cumulative sum taken window frames apart.
    csum = np.concatenate([np.zeros((1,) + mask.shape[1:], np.int32),
                           np.cumsum(padded, axis=0, dtype=np.int32)])
    window = 2 * radius + 1
    counts = csum[window:] - csum[:-window]
    return counts > radius


CONTACT_FILTER_S = 0.1   # s: the majority filter's radius (6 frames at 60 fps, 3 at 30, 12 at 120)


def filter_radius(seconds, fps):
    """The majority filter's radius in frames for ``seconds`` at ``fps``, halves
    rounded up: the same stretch of time whatever the take's rate."""
    seconds, fps = float(seconds), float(fps)
    if not (np.isfinite(seconds) and seconds >= 0.0):
        raise ContactError(f"The contact filter must be 0 seconds or more, not {seconds}.")
    return int(np.floor(seconds * fps + 0.5))


def foot_contacts(positions, fps, speed_threshold=0.15, filter_seconds=CONTACT_FILTER_S):
    """Contact flags of one or more toe joints.

    ``positions`` (F, 3) or (F, K, 3) world positions in metres; returns (F,) or
    (F, K) booleans: True where the joint's speed (central differences) is below
    ``speed_threshold`` m/s, after a majority filter whose radius is
    ``filter_seconds`` (in frames at ``fps``: a stance or a swing is judged by
    its duration, not by its number of frames).
    """
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim < 2 or p.shape[-1] != 3:
        raise ContactError(
            f"Contact positions must have shape (frames, 3) or (frames, joints, 3), not {p.shape}.")
    fps = float(fps)
    if not np.isfinite(fps) or fps <= 0.0:
        raise ContactError(f"The frame rate must be a positive number, not {fps}.")
    if not np.isfinite(p).all():
        raise ContactError("The contact joint positions contain NaN or infinite values.")
    speed = np.linalg.norm(central_velocity(p, fps), axis=-1)
    return majority_filter(speed < float(speed_threshold), filter_radius(filter_seconds, fps))
