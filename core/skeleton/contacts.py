"""Finite-difference velocities and foot contacts, vectorised over frames.

A foot is taken to be planted while its toe moves slower than a threshold. The raw
yes/no signal flickers where the speed hovers around the threshold, so it is cleaned
(:func:`bridge_then_drop`): a short gap between two contacts where the toe only
rolls (under twice the threshold) is bridged, then contacts that are still short
are dropped; both lengths are the Contact Filter's time.
"""

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "ContactError",
    "central_velocity",
    "majority_filter",
    "bridge_then_drop",
    "foot_contacts",
    "contact_height",
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


CONTACT_FILTER_S = 0.1   # s: the longest gap bridged and contact dropped (6 frames at 60 fps, 3 at 30, 12 at 120)
ROLLING = 2.0            # a toe under this many times the contact speed rolls on the ground, it has not lifted


def _runs(column):
    """(starts, ends, values) of the runs of equal values in a 1-D boolean array."""
    edges = np.flatnonzero(column[1:] != column[:-1]) + 1
    starts = np.concatenate([[0], edges])
    return starts, np.concatenate([edges, [len(column)]]), column[starts]


def _inner_short_runs(column, value, frames):
    """(starts, ends) of the runs of ``value`` at most ``frames`` long that touch
    neither end of the clip (the clip may start or end inside the others)."""
    starts, ends, values = _runs(column)
    short = (values == value) & (ends - starts <= frames) & (starts > 0) & (ends < len(column))
    return starts[short], ends[short]


def _spans(n, starts, ends):
    """(n,) booleans, True on the frames of the spans [start, end)."""
    marks = np.zeros(n + 1, dtype=np.int64)
    np.add.at(marks, starts, 1)
    np.add.at(marks, ends, -1)
    return np.cumsum(marks[:-1]) > 0


def bridge_then_drop(slow, rolling, frames):
    """Clean a contact signal (F, ...) along axis 0.

    ``slow`` the raw contacts (the toe under the contact speed), ``rolling``
    (same shape) where the toe moves little enough to still be on the ground.
    First a gap of at most ``frames`` frames between two contacts is bridged
    when the toe rolls through all of it (a ball of the foot moving as the heel
    rises, inside one stance); then a contact still at most ``frames`` long is
    dropped (a toe passing slowly in a swing). Runs touching the clip's first or
    last frame are kept. Unlike a median filter, a stance split by a short roll
    into two short halves stays one stance at any frame rate, and no frame
    becomes a contact unless its toe is slow, or rolls between two contacts.
    """
    slow = np.array(slow, dtype=bool)
    rolling = np.broadcast_to(np.asarray(rolling, dtype=bool), slow.shape)
    frames = int(frames)
    if frames < 0:
        raise ContactError(f"The contact filter must be 0 frames or more, not {frames}.")
    n = slow.shape[0]
    if frames == 0 or n < 3:
        return slow
    columns = slow.reshape(n, -1)
    rolls = rolling.reshape(n, -1)
    for k in range(columns.shape[1]):
        column = columns[:, k].copy()
        starts, ends = _inner_short_runs(column, False, frames)
        lifted = np.concatenate([[0], np.cumsum(~rolls[:, k])])        # frames whose toe does not roll, so far
        rolled = lifted[ends] == lifted[starts]
        column |= _spans(n, starts[rolled], ends[rolled])
        starts, ends = _inner_short_runs(column, True, frames)
        column &= ~_spans(n, starts, ends)
        columns[:, k] = column
    return columns.reshape(slow.shape)


def filter_radius(seconds, fps):
    """The contact filter's length in frames for ``seconds`` at ``fps``, halves
    rounded up: the same stretch of time whatever the take's rate."""
    seconds, fps = float(seconds), float(fps)
    if not (np.isfinite(seconds) and seconds >= 0.0):
        raise ContactError(f"The contact filter must be 0 seconds or more, not {seconds}.")
    return int(np.floor(seconds * fps + 0.5))


def foot_contacts(positions, fps, speed_threshold=0.15, filter_seconds=CONTACT_FILTER_S):
    """Contact flags of one or more toe joints.

    ``positions`` (F, 3) or (F, K, 3) world positions in metres; returns (F,) or
    (F, K) booleans: True where the joint's speed (central differences) is below
    ``speed_threshold`` m/s, cleaned by :func:`bridge_then_drop`: gaps where the
    toe rolls under twice that speed and contacts, each up to ``filter_seconds``
    (in frames at ``fps``: a stance or a swing is judged by its duration, not by
    its number of frames).
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
    threshold = float(speed_threshold)
    return bridge_then_drop(speed < threshold, speed < ROLLING * threshold, filter_radius(filter_seconds, fps))


def contact_height(heights, contacts):
    """The median of ``heights`` over the samples flagged in ``contacts`` (the
    same shape; all samples when none is)."""
    h = np.ravel(np.asarray(heights, dtype=np.float64))
    c = np.ravel(np.asarray(contacts, dtype=bool))
    return float(np.median(h[c])) if c.any() else float(np.median(h))
