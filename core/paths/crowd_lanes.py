"""A crowd on one path: N timed paths spread from one ground polyline in lanes.

Lanes are copies of the path offset sideways by whole lane widths, centred on
it: lane ``l`` of ``L`` lies ``(l - (L - 1) / 2) * width`` to the left. Two
points on two such parallel curves are never closer than the lanes' offset
difference, as long as no offset exceeds the path's turning radius (a lane that
folds back on itself is refused).

Character ``k`` walks in lane ``k % L`` as its ``k // L``-th walker. The walkers
of a lane queue ``spacing`` apart and walk the same distance at the lane's one
speed (speeding up from rest and slowing down to it at one rate), the front
walker furthest along; starts are staggered front first, so
the gap between two walkers of a lane only grows while one has started and the
other not, and never falls below ``spacing``. Lane speeds and start delays
vary by fixed low-discrepancy sequences (multiples of the golden ratio), the
same on every machine.

The result is one :class:`core.paths.scenario.Scenario` per character: it stands
at its start until its delay has passed, walks at constant speed, then stands at
its end until the last walker arrives, so every path lasts the same time.
"""

import math
from dataclasses import dataclass

import numpy as np

from .scenario import Scenario, ScenarioError

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0   # 0.618...: fractions of its multiples are evenly spread
ACCELERATION = 1.5   # m/s^2 at a walker's start and stop: a walk reached in about a second
RAMP_STEP = 0.1      # s between the waypoints that sample a start or a stop


@dataclass(frozen=True)
class Lanes:
    """How a crowd spreads over a path."""

    count: int = 10            # characters
    lanes: int = 3             # side by side
    width: float = 1.0         # m between neighbouring lanes
    spacing: float = 1.5       # m between walkers of one lane
    speed_min: float = 1.0     # m/s, the slowest lane
    speed_max: float = 1.6     # m/s, the fastest lane
    stagger: float = 1.0       # s, the longest wait between two starts in a lane


def _fraction(k):
    return (k * _GOLDEN) % 1.0


def _check(lanes):
    if not 1 <= lanes.count <= 10000:
        raise ScenarioError("A crowd has 1 to 10000 characters (got %d)." % lanes.count)
    if not 1 <= lanes.lanes <= lanes.count:
        raise ScenarioError("Use between 1 lane and one lane per character (%d), not %d." % (lanes.count, lanes.lanes))
    for what, v in (("lane width", lanes.width), ("spacing", lanes.spacing)):
        if not (math.isfinite(v) and v > 0.0):
            raise ScenarioError("The %s must be above 0 m (got %g)." % (what, v))
    if not (math.isfinite(lanes.speed_min) and 0.0 < lanes.speed_min <= lanes.speed_max
            and math.isfinite(lanes.speed_max)):
        raise ScenarioError("Speeds must be above 0 m/s with the slowest at most the fastest (got %g and %g)."
                            % (lanes.speed_min, lanes.speed_max))
    if not (math.isfinite(lanes.stagger) and lanes.stagger >= 0.0):
        raise ScenarioError("The stagger must be 0 s or more (got %g)." % lanes.stagger)


def ground_polyline(points):
    """The (P, 2) ground points of ``points`` (P, 2 or 3), with repeated points dropped."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] not in (2, 3) or len(pts) < 2 or not np.all(np.isfinite(pts)):
        raise ScenarioError("The path needs at least two finite points.")
    xy = pts[:, :2]
    keep = np.concatenate([[True], np.linalg.norm(np.diff(xy, axis=0), axis=1) > 1e-9])
    xy = xy[keep]
    if len(xy) < 2:
        raise ScenarioError("The path has no length on the ground.")
    return xy


def _normals(xy):
    """Unit left normals at the points: the mean of the neighbouring segments' directions, turned 90 degrees."""
    seg = np.diff(xy, axis=0)
    seg /= np.linalg.norm(seg, axis=1, keepdims=True)
    tangent = np.vstack([seg[:1], seg[:-1] + seg[1:], seg[-1:]])
    length = np.linalg.norm(tangent, axis=1, keepdims=True)
    tangent = np.where(length > 1e-9, tangent / np.maximum(length, 1e-12), np.vstack([seg, seg[-1:]]))
    return np.column_stack([-tangent[:, 1], tangent[:, 0]])


def lane_polyline(xy, offset):
    """The path ``xy`` (P, 2) moved ``offset`` m to its left (negative: right);
    refused where the offset folds a segment back (a turn tighter than the offset)."""
    if offset == 0.0:
        return xy.copy()
    lane = xy + offset * _normals(xy)
    before, after = np.diff(xy, axis=0), np.diff(lane, axis=0)
    if np.any((before * after).sum(axis=1) <= 0.0):
        raise ScenarioError("The path turns tighter than a lane %.2f m to its %s can follow: use fewer or "
                            "narrower lanes, or a wider curve." % (abs(offset), "left" if offset > 0 else "right"))
    return lane


def _arc(lane):
    return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(lane, axis=0), axis=1))])


def _profile(distance, speed, accel=ACCELERATION):
    """Time (s) to cover ``distance`` at ``speed`` starting and ending at rest with
    a constant ``accel`` ramp at each end (a triangle when too short to reach the
    speed), and the inverse: the function from arc length walked to time."""
    ramp = min(speed * speed / (2.0 * accel), distance / 2.0)
    top = math.sqrt(2.0 * accel * ramp)
    t_ramp = top / accel
    total = 2.0 * t_ramp + (distance - 2.0 * ramp) / top

    def time_at(s):
        s = np.clip(s, 0.0, distance)
        cruise = t_ramp + (s - ramp) / top
        start = np.sqrt(2.0 * np.maximum(s, 0.0) / accel)
        end = total - np.sqrt(2.0 * np.maximum(distance - s, 0.0) / accel)
        return np.where(s <= ramp, start, np.where(s >= distance - ramp, end, cruise))

    def arc_at(t):
        t = np.clip(t, 0.0, total)
        start = 0.5 * accel * t * t
        cruise = ramp + top * (t - t_ramp)
        end = distance - 0.5 * accel * (total - t) ** 2
        return np.where(t <= t_ramp, start, np.where(t >= total - t_ramp, end, cruise))

    return total, t_ramp, time_at, arc_at


def _walk(lane, arc, start, distance, speed, delay, duration, name):
    """The scenario of one walker: stand at arc length ``start`` until ``delay``,
    walk ``distance`` (speeding up and slowing down at :data:`ACCELERATION`, at
    ``speed`` between) through the lane's vertices, stand until ``duration``."""
    total, t_ramp, time_at, arc_at = _profile(distance, speed)
    inner = arc[(arc > start + 1e-6) & (arc < start + distance - 1e-6)] - start
    ramps = np.arange(RAMP_STEP, t_ramp, RAMP_STEP)
    walked = np.unique(np.concatenate([[0.0, distance], inner, arc_at(ramps), arc_at(total - ramps)]))
    t = delay + time_at(walked)
    keep = np.concatenate([[True], np.diff(t) > 1e-6])
    walked, t = walked[keep], t[keep]
    s = start + walked
    xy = np.column_stack([np.interp(s, arc, lane[:, 0]), np.interp(s, arc, lane[:, 1])])
    rows = [(0.0, xy[0, 0], xy[0, 1])] if delay > 0.0 else []
    rows += [(float(ti), float(x), float(y)) for ti, (x, y) in zip(t, xy)]
    if duration > t[-1] + 1e-6:
        rows.append((duration, float(xy[-1, 0]), float(xy[-1, 1])))
    return Scenario(rows, name)


def spread(points, lanes=Lanes(), name="Crowd"):
    """One :class:`Scenario` per character (``lanes.count``), in character
    order, spread from the path ``points`` (P, 2 or 3; only X and Y are used)."""
    _check(lanes)
    xy = ground_polyline(points)
    plans = []
    for lane_index in range(lanes.lanes):
        walkers = range(lane_index, lanes.count, lanes.lanes)
        offset = (lane_index - (lanes.lanes - 1) / 2.0) * lanes.width
        lane = lane_polyline(xy, offset)
        arc = _arc(lane)
        queue = (len(walkers) - 1) * lanes.spacing
        distance = arc[-1] - queue
        if distance <= 0.0:
            raise ScenarioError("Lane %d is %.1f m long, too short for %d walkers %.2f m apart: use more lanes, "
                                "less spacing or a longer path." % (lane_index + 1, arc[-1], len(walkers), lanes.spacing))
        speed = lanes.speed_min + (lanes.speed_max - lanes.speed_min) * _fraction(lane_index + 1)
        delay = 0.0
        for rank, k in enumerate(walkers):
            if rank:
                delay += lanes.stagger * (0.5 + 0.5 * _fraction(k + 1))
            plans.append((k, lane, arc, queue - rank * lanes.spacing, distance, speed, delay))
    duration = max(delay + _profile(distance, speed)[0] for _k, _l, _a, _s, distance, speed, delay in plans)
    out = [None] * lanes.count
    for k, lane, arc, start, distance, speed, delay in plans:
        out[k] = _walk(lane, arc, start, distance, speed, delay, duration, "%s.%03d" % (name, k))
    return out
