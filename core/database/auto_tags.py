"""Suggested tags for one take, read from its root motion.

:func:`suggest_tags` proposes a dance-card tagging (idle, walk, run, start, stop,
turn_left, turn_right) so a take gets usable tags without the user marking every
range by hand; :func:`tags_summary` totals seconds per tag name.

How the ranges are found
------------------------
Pace. The root's ground speed (central differences, as
:func:`core.database.coverage.root_speed_and_turn`) is smoothed with a centred moving average
of about ``smooth_speed_s`` seconds, then each frame is classed idle, walk, run or
nothing. A class is entered when the speed is inside its band (idle under
``idle_max_speed``, walk from ``walk_min_speed`` up to but excluding
``walk_max_speed``, run from ``run_min_speed``) and kept until the speed leaves
the band widened by ``speed_hysteresis`` on each side, so a speed hovering at a
boundary does not chop a range into pieces. Stretches shorter than
``min_idle_s`` / ``min_walk_s`` / ``min_run_s`` are dropped.

Starts and stops. Where an idle range is followed (with no other pace range in
between) by a walk or run range, ``start`` runs from the last idle frame to the
first walk/run frame, widened by ``transition_margin_s`` on each side; ``stop`` is
the same from a walk/run range to the idle range after it. Walk to run changes
are not tagged.

Turns. The facing angle (``atan2(y, x)``, unwrapped) is differentiated with
central differences and smoothed over about ``smooth_turn_s`` seconds. A turn to
the left is counter-clockwise seen from above (+Z), a rising angle: a character
facing -Y has its right hand on -X (right = forward x up), so turning from -Y
toward +X is a left turn. ``turn_left`` / ``turn_right`` mark rates beyond
``turn_rate_deg_s`` held at least ``min_turn_s``, with ``turn_hysteresis_deg_s``
of hysteresis.

Output
------
Tags of one name never overlap (overlapping or touching ranges are merged), every
range lies in the take, and the list is sorted by first frame. ``names`` maps each
kind to the tag name to write (for a dance card's own names); a kind mapped to
None is not produced.
"""

from __future__ import annotations

import math

import numpy as np

from .coverage import root_speed_and_turn
from .tags import Tag, TagError, check_tag_name, range_mask, validate_tags

__all__ = [
    "AutoTagError",
    "AUTO_TAG_KINDS",
    "DEFAULT_THRESHOLDS",
    "suggest_tags",
    "tags_summary",
]

#: The kinds of move :func:`suggest_tags` recognises, also the default tag names.
AUTO_TAG_KINDS = ("idle", "walk", "run", "start", "stop", "turn_left", "turn_right")

#: Default thresholds of :func:`suggest_tags` (speeds in m/s, rates in deg/s,
#: durations in seconds).
DEFAULT_THRESHOLDS = {
    "idle_max_speed": 0.2,        # idle: smoothed speed below this
    "walk_min_speed": 0.5,        # walk: from this ...
    "walk_max_speed": 1.7,        # ... up to (excluding) this
    "run_min_speed": 2.0,         # run: from this up
    "speed_hysteresis": 0.1,      # a pace is left only this far outside its band
    "min_idle_s": 0.5,            # shortest idle range kept
    "min_walk_s": 0.5,            # shortest walk range kept
    "min_run_s": 0.5,             # shortest run range kept
    "smooth_speed_s": 0.2,        # width of the moving average on the speed
    "transition_margin_s": 0.25,  # starts and stops reach this far past each end
    "turn_rate_deg_s": 45.0,      # a turn: smoothed turning rate beyond this
    "turn_hysteresis_deg_s": 10.0,  # a turn ends only this far below the rate
    "min_turn_s": 0.3,            # shortest turn range kept
    "smooth_turn_s": 0.2,         # width of the moving average on the turning rate
}

_IDLE, _WALK, _RUN = 1, 2, 3
_PACE_KINDS = {_IDLE: "idle", _WALK: "walk", _RUN: "run"}


class AutoTagError(TagError):
    """The root motion or the options given to :func:`suggest_tags` cannot be used."""


# --------------------------------------------------------------------------- checks


def _check_thresholds(thresholds):
    unknown = sorted(set(thresholds) - set(DEFAULT_THRESHOLDS))
    if unknown:
        raise AutoTagError(f"Unknown threshold {', '.join(map(repr, unknown))}; the "
                           f"thresholds are: {', '.join(DEFAULT_THRESHOLDS)}.")
    th = dict(DEFAULT_THRESHOLDS)
    for key, value in thresholds.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                             np.floating)) \
                or not math.isfinite(value) or value < 0:
            raise AutoTagError(f"Threshold '{key}' is {value!r}; it must be a number, 0 "
                               "or more.")
        th[key] = float(value)
    if not (th["idle_max_speed"] <= th["walk_min_speed"] < th["walk_max_speed"]
            <= th["run_min_speed"]):
        raise AutoTagError(
            "The speed thresholds must rise: idle_max_speed <= walk_min_speed < "
            f"walk_max_speed <= run_min_speed (got {th['idle_max_speed']:g}, "
            f"{th['walk_min_speed']:g}, {th['walk_max_speed']:g}, "
            f"{th['run_min_speed']:g}).")
    if th["turn_rate_deg_s"] <= 0 or th["turn_hysteresis_deg_s"] >= th["turn_rate_deg_s"]:
        raise AutoTagError("turn_rate_deg_s must be above 0 and above "
                           "turn_hysteresis_deg_s.")
    return th


def _check_names(names):
    out = {k: k for k in AUTO_TAG_KINDS}
    if names is None:
        return out
    if not hasattr(names, "items"):
        raise AutoTagError("names must map kinds of move to tag names, e.g. "
                           "{'walk': 'Gehen', 'turn_left': None}.")
    for kind, name in names.items():
        if kind not in out:
            raise AutoTagError(f"names has the key {kind!r}, which is not a kind of move; "
                               f"the kinds are: {', '.join(AUTO_TAG_KINDS)}.")
        if name is not None:
            try:
                check_tag_name(name)
            except TagError as exc:
                raise AutoTagError(f"The name given for '{kind}': {exc}") from None
        out[kind] = name
    return out


def _check_motion(root_pos, facing, fps):
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(fps) or fps <= 0:
        raise AutoTagError(f"The frame rate is {fps!r}; it must be a positive number.")
    pos = np.asarray(root_pos, dtype=np.float64)
    fac = np.asarray(facing, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] not in (2, 3):
        raise AutoTagError(f"The root positions have shape {pos.shape}; expected (F, 3).")
    n = pos.shape[0]
    if fac.ndim != 2 or fac.shape[0] != n or fac.shape[1] not in (2, 3):
        raise AutoTagError(f"The root facings have shape {fac.shape}; expected ({n}, 2), "
                           "one per root position.")
    if not (np.isfinite(pos).all() and np.isfinite(fac).all()):
        raise AutoTagError("The root positions or facings contain NaN or infinite values.")
    if n and (np.hypot(fac[:, 0], fac[:, 1]) < 1e-9).any():
        raise AutoTagError("Some root facing has no horizontal direction; the facing must "
                           "be a direction on the ground.")
    return pos, fac[:, :2], float(fps)


# ------------------------------------------------------------------------- helpers


def _moving_average(x, width_s, fps):
    """Centred moving average over an odd number of frames about ``width_s`` wide;
    near the ends the window shrinks to the frames that exist."""
    half = int(round(width_s * fps / 2.0))
    n = x.shape[0]
    if half <= 0 or n == 0:
        return x.copy()
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(n)
    lo = np.maximum(i - half, 0)
    hi = np.minimum(i + half + 1, n)
    return (c[hi] - c[lo]) / (hi - lo)


def _min_frames(seconds, fps):
    return max(1, int(math.ceil(seconds * fps - 1e-9)))


def _runs(labels):
    """(label, first, last) of each stretch of equal non-zero labels, in order."""
    if labels.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(labels)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts - 1, [labels.size - 1]])
    return [(int(labels[s]), int(s), int(e)) for s, e in zip(starts, ends) if labels[s]]


def _hysteresis(value, bands):
    """Label each frame with the band it is in, holding a label while the value
    stays in that band's wider 'keep' interval.

    ``bands``: {label: (enter_lo, enter_hi, keep_lo, keep_hi)}, half-open
    intervals; 0 means no band.
    """
    out = np.zeros(value.shape[0], dtype=np.int64)
    state = 0
    for k, v in enumerate(value.tolist()):
        if state:
            _, _, lo, hi = bands[state]
            if not lo <= v < hi:
                state = 0
        if not state:
            for label, (lo, hi, _, _) in bands.items():
                if lo <= v < hi:
                    state = label
                    break
        out[k] = state
    return out


def _merge(ranges):
    """Sorted (start, end) ranges with overlapping or touching ones joined."""
    out = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


# ----------------------------------------------------------------------------- API


def suggest_tags(root_pos, facing, fps, names=None, **thresholds):
    """Propose tags for one take from its root motion.

    ``root_pos``: (F, 3) root positions in metres (only x, y are used);
    ``facing``: (F, 2) unit facing directions on the ground (F, 3 accepted);
    ``fps``: frames per second. ``names`` maps kinds (:data:`AUTO_TAG_KINDS`) to the
    tag names to write; missing kinds keep their own name, a kind mapped to None is
    left out. ``thresholds`` override :data:`DEFAULT_THRESHOLDS`:

    - ``idle_max_speed`` 0.2, ``walk_min_speed`` 0.5, ``walk_max_speed`` 1.7,
      ``run_min_speed`` 2.0 (m/s): the pace bands of the smoothed speed;
    - ``speed_hysteresis`` 0.1 m/s: how far outside its band a pace holds;
    - ``min_idle_s``, ``min_walk_s``, ``min_run_s`` 0.5 s: shortest kept ranges;
    - ``smooth_speed_s`` 0.2 s: moving average on the speed;
    - ``transition_margin_s`` 0.25 s: starts and stops reach this far beyond the
      last idle / first moving frame (and the reverse), clamped to the take;
    - ``turn_rate_deg_s`` 45, ``turn_hysteresis_deg_s`` 10 (deg/s), ``min_turn_s``
      0.3 s, ``smooth_turn_s`` 0.2 s: turns.

    Returns a list of :class:`core.database.tags.Tag` sorted by first frame. Raises
    :class:`AutoTagError` for bad input.
    """
    th = _check_thresholds(thresholds)
    out_names = _check_names(names)
    pos, fac, fps = _check_motion(root_pos, facing, fps)
    n = pos.shape[0]
    if n == 0:
        return []

    ranges = {kind: [] for kind in AUTO_TAG_KINDS}

    # Pace: idle / walk / run with hysteresis, then drop the short stretches.
    speed, _ = root_speed_and_turn(pos, fac, fps)
    speed = _moving_average(speed, th["smooth_speed_s"], fps)
    h = th["speed_hysteresis"]
    pace = _hysteresis(speed, {
        _IDLE: (-math.inf, th["idle_max_speed"], -math.inf, th["idle_max_speed"] + h),
        _WALK: (th["walk_min_speed"], th["walk_max_speed"],
                th["walk_min_speed"] - h, th["walk_max_speed"] + h),
        _RUN: (th["run_min_speed"], math.inf, th["run_min_speed"] - h, math.inf),
    })
    shortest = {_IDLE: _min_frames(th["min_idle_s"], fps),
                _WALK: _min_frames(th["min_walk_s"], fps),
                _RUN: _min_frames(th["min_run_s"], fps)}
    kept = [r for r in _runs(pace) if r[2] - r[1] + 1 >= shortest[r[0]]]
    for label, s, e in kept:
        ranges[_PACE_KINDS[label]].append((s, e))

    # Starts and stops between consecutive kept pace ranges.
    margin = int(round(th["transition_margin_s"] * fps))
    for (la, _, ea), (lb, sb, _) in zip(kept[:-1], kept[1:]):
        if la == _IDLE and lb != _IDLE:
            kind = "start"
        elif la != _IDLE and lb == _IDLE:
            kind = "stop"
        else:
            continue
        ranges[kind].append((max(ea - margin, 0), min(sb + margin, n - 1)))

    # Turns.
    if n > 1:
        for kind, s, e in _turn_ranges(fac, fps, th):
            ranges[kind].append((s, e))

    # Rename, merge per final name (ignoring case), sort.
    by_name = {}
    for kind in AUTO_TAG_KINDS:
        name = out_names[kind]
        if name is None or not ranges[kind]:
            continue
        by_name.setdefault(name.lower(), (name, []))[1].extend(ranges[kind])
    tags = [Tag(name, s, e) for name, rs in by_name.values() for s, e in _merge(rs)]
    tags.sort(key=lambda t: (t.start, t.end, t.key))
    return validate_tags(tags, n)


def _turn_ranges(fac, fps, th):
    """[(turn_left or turn_right, first, last)]: stretches whose signed yaw rate
    (positive = counter-clockwise from above = left) stays past the threshold
    (with hysteresis) for long enough."""
    yaw = np.unwrap(np.arctan2(fac[:, 1], fac[:, 0]))
    rate = _moving_average(np.degrees(np.gradient(yaw)) * fps, th["smooth_turn_s"], fps)
    r, hy = th["turn_rate_deg_s"], th["turn_hysteresis_deg_s"]
    turn = _hysteresis(rate, {1: (r, math.inf, r - hy, math.inf),
                              2: (-math.inf, -r, -math.inf, -(r - hy))})
    shortest_turn = _min_frames(th["min_turn_s"], fps)
    return [("turn_left" if label == 1 else "turn_right", s, e) for label, s, e in _runs(turn)
            if e - s + 1 >= shortest_turn]


def tags_summary(tags, fps):
    """Seconds tagged per name: ``{name: seconds}``, a frame counted once per name
    even where ranges overlap. Names differing only in case are one entry, spelled
    as first met; entries come in order of first appearance."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(fps) or fps <= 0:
        raise AutoTagError(f"The frame rate is {fps!r}; it must be a positive number.")
    tags = validate_tags(tags, 2 ** 62)  # names and ranges only; the take is unknown
    if not tags:
        return {}
    n = max(t.end for t in tags) + 1
    grouped = {}
    for t in tags:
        grouped.setdefault(t.key, (t.name, []))[1].append((t.start, t.end))
    return {name: float(range_mask(rs, n).sum()) / float(fps)
            for name, rs in grouped.values()}
