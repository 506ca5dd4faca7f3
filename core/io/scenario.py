"""Scenarios: timed paths on the ground for a controller to follow.

A scenario is a list of waypoints ``(t, x, y, facing)``: time in seconds from the
start of the scenario (``t = 0``), ground position in metres (Z up), and an
optional facing in degrees. Facing convention: 0 faces -Y (Blender's front, where
a character looks), positive angles turn counter-clockwise seen from above (a
right-handed turn about +Z), so 90 faces +X and -90 faces -X. As a ground vector
the facing of angle ``a`` is ``(sin a, -cos a)``, as in :mod:`core.maths.springs`.

Between waypoints each coordinate follows a cubic Hermite curve whose slopes are
the three-point (parabola) estimates, limited so that no coordinate ever leaves
the range of its two waypoints (the Fritsch-Carlson monotone limit: a slope is 0
where the path turns back or holds, and at most three times either neighbouring
secant). So the path

- holds exactly still between two consecutive equal points;
- never overshoots a stop or a corner;
- reproduces exactly a motion whose distance is quadratic in time (a constant
  acceleration), and a constant speed, when the waypoints sample it;
- is constant before the first point and after the last one.

A coordinate that turns back at a waypoint has zero velocity there, so a sharp
corner given by a single waypoint is taken by slowing down into it; add points to
round it. The first and last slopes are the one-sided secants, so a path given by
two points moves at constant speed.

JSON files (:func:`load_scenario`)::

    {"name": "optional", "description": "optional",
     "points": [{"t": 0.0, "x": 0.0, "y": 0.0},
                {"t": 2.0, "x": 0.0, "y": -2.4, "facing": 0.0}, ...]}

Also here: :func:`curve_timing`, the offset along a curve over frames for the
curve controller (constant speed, speed keys, stops).
"""

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from . import text_input
from ..errors import MotionMatchingError
from .text_input import short_repr
from ..maths.springs import facing_to_yaw, yaw_to_facing


class ScenarioError(MotionMatchingError):
    """A scenario, a scenario file or controller timing that cannot be used."""


# Sane bounds for scenarios (README, "Decisions worth knowing").
MAX_DURATION = 3 * 3600.0   # seconds from t = 0 to the last point
MAX_DISTANCE = 1e6          # metres from the origin, x and y
MAX_SPEED = 100.0           # metres per second between two consecutive points
MAX_FACING = 1e6            # degrees
MAX_POINTS = 100000


# ----------------------------------------------------------------------------
# The scenario


class Scenario:
    """Timed waypoints ``(t, x, y, facing_deg or None)``; see the module docstring.

    Checked on creation: at least two points, finite numbers, the first time not
    negative and times strictly increasing.
    """

    def __init__(self, points, name="scenario"):
        self.name = str(name)
        pts = []
        for i, p in enumerate(points):
            if i >= MAX_POINTS:
                raise ScenarioError("A scenario has at most %d points." % MAX_POINTS)
            try:
                p = tuple(p)
            except TypeError:
                raise ScenarioError("Point %d must be (t, x, y) or (t, x, y, facing) (got %s)."
                                    % (i, short_repr(p))) from None
            if len(p) not in (3, 4):
                raise ScenarioError(
                    "Point %d must be (t, x, y) or (t, x, y, facing) (got %d values)." % (i, len(p)))
            t, x, y = (_number(v, i, k) for v, k in zip(p[:3], ("t", "x", "y")))
            facing = p[3] if len(p) == 4 else None
            if facing is not None:
                facing = _number(facing, i, "facing")
            _bounded(i, "t", t, MAX_DURATION, "s (3 hours)")
            _bounded(i, "x", x, MAX_DISTANCE, "m")
            _bounded(i, "y", y, MAX_DISTANCE, "m")
            if facing is not None:
                _bounded(i, "facing", facing, MAX_FACING, "degrees")
            pts.append((t, x, y, facing))
        if len(pts) < 2:
            raise ScenarioError("A scenario needs at least two points (got %d)." % len(pts))
        if pts[0][0] < 0.0:
            raise ScenarioError("Point 0 has a negative time (%g s); scenarios start at t = 0." % pts[0][0])
        for i in range(1, len(pts)):
            if not pts[i][0] > pts[i - 1][0]:
                raise ScenarioError(
                    "Point %d has time %g s, which is not after point %d (%g s); times must increase."
                    % (i, pts[i][0], i - 1, pts[i - 1][0]))
            step = math.hypot(pts[i][1] - pts[i - 1][1], pts[i][2] - pts[i - 1][2])
            if step > MAX_SPEED * (pts[i][0] - pts[i - 1][0]):
                raise ScenarioError(
                    "Point %d is %g m from point %d, %g s later: %g m/s; a scenario moves at most %g m/s."
                    % (i, step, i - 1, pts[i][0] - pts[i - 1][0], step / (pts[i][0] - pts[i - 1][0]), MAX_SPEED))
        self.points = tuple(pts)
        self.times = np.array([p[0] for p in pts])
        self.xy = np.array([[p[1], p[2]] for p in pts])
        self.has_facing = any(p[3] is not None for p in pts)
        self._slopes = _monotone_slopes(self.times, self.xy)
        if self.has_facing:
            self._yaws = _point_yaws(self)[:, None]
            self._yaw_slopes = _monotone_slopes(self.times, self._yaws)

    def __repr__(self):
        return "Scenario(%r, %d points, %.2f s)" % (self.name, len(self.points), duration(self))


def _number(v, index, key):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ScenarioError("Point %d: %s must be a number (got %s)." % (index, key, short_repr(v)))
    try:
        v = float(v)
    except OverflowError:  # an integer beyond float range
        v = math.inf
    if not math.isfinite(v):
        raise ScenarioError("Point %d: %s must be a finite number (got %r)." % (index, key, v))
    return v


def _bounded(index, key, value, limit, unit):
    if abs(value) > limit:
        raise ScenarioError("Point %d: %s is %g; it must be within %g %s." % (index, key, value, limit, unit))


def duration(scenario):
    """Seconds from t = 0 to the last point."""
    return float(scenario.times[-1])


# ----------------------------------------------------------------------------
# Interpolation


def _monotone_slopes(t, y):
    """Slopes (N, K) of a shape-preserving cubic Hermite through ``y`` (N, K) at ``t`` (N,)."""
    h = np.diff(t)[:, None]
    delta = np.diff(y, axis=0) / h
    d = np.empty_like(y)
    d[0] = delta[0]
    d[-1] = delta[-1]
    if len(t) > 2:
        h0, h1 = h[:-1], h[1:]
        a, b = delta[:-1], delta[1:]
        # Slope of the parabola through three points: exact for constant acceleration.
        mid = (h1 * a + h0 * b) / (h0 + h1)
        limit = 3.0 * np.minimum(np.abs(a), np.abs(b))
        mid = np.clip(mid, -limit, limit)
        mid[a * b <= 0.0] = 0.0  # turns back or holds: stand still there
        d[1:-1] = mid
    return d


def _hermite(t, y, d, times, derivative=False):
    """Evaluate the Hermite curve (knots ``t``, values ``y``, slopes ``d``) at ``times``.

    Written as ``y0 + (y1 - y0) H + h (d0 H0 + d1 H1)`` so that a segment whose
    ends and slopes are equal gives exactly ``y0``. Constant outside the knots.
    """
    times = np.asarray(times, dtype=np.float64)
    n = len(t)
    k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, n - 2)
    h = (t[k + 1] - t[k])[:, None]
    s = np.clip((times - t[k]) / h[:, 0], 0.0, 1.0)[:, None]
    y0, y1, d0, d1 = y[k], y[k + 1], d[k], d[k + 1]
    if derivative:
        out = (y1 - y0) * (6 * s - 6 * s * s) / h + d0 * (3 * s * s - 4 * s + 1) + d1 * (3 * s * s - 2 * s)
        outside = (times < t[0]) | (times > t[-1])
        out[outside] = 0.0
        return out
    s2, s3 = s * s, s * s * s
    out = y0 + (y1 - y0) * (3 * s2 - 2 * s3) + h * (d0 * (s3 - 2 * s2 + s) + d1 * (s3 - s2))
    # The curve is monotone on each segment; clipping only removes rounding.
    out = np.clip(out, np.minimum(y0, y1), np.maximum(y0, y1))
    out[times >= t[-1]] = y[-1]
    return out


def _wrap_pi(a):
    """Angle in (-pi, pi]: a half turn goes counter-clockwise."""
    return math.pi - (math.pi - a) % (2.0 * math.pi)


def _point_yaws(scenario):
    """Yaw (radians, unrolled) at every point: its facing, else the direction of travel.

    A point that is not moving takes the direction it is about to move in, else
    the one it arrived from, else holds its neighbour's yaw.
    """
    pts, xy, d = scenario.points, scenario.xy, scenario._slopes
    n = len(pts)
    yaws = [None] * n
    for i, p in enumerate(pts):
        if p[3] is not None:
            yaws[i] = math.radians(p[3])
            continue
        for v in (d[i], xy[i + 1] - xy[i] if i + 1 < n else None, xy[i] - xy[i - 1] if i > 0 else None):
            if v is not None and np.hypot(v[0], v[1]) > 1e-12:
                yaws[i] = float(facing_to_yaw(v))
                break
    known = [i for i in range(n) if yaws[i] is not None]  # never empty: some point has a facing
    for i in range(n):
        if yaws[i] is None:
            before = [j for j in known if j < i]
            yaws[i] = yaws[before[-1]] if before else yaws[known[0]]
    out = np.empty(n)
    out[0] = yaws[0]
    for i in range(1, n):
        out[i] = out[i - 1] + _wrap_pi(yaws[i] - out[i - 1])
    return out


def sample(scenario, times):
    """The scenario at ``times`` (T,) seconds: positions (T, 3) on the ground
    (z = 0) and facings (T, 2) as unit ``(x, y)`` vectors, or None when no point
    gives a facing (the character then faces where it goes).

    Facing angles are interpolated the same monotone way as positions, between
    the points' angles taken the short way round (points without a facing take
    the direction of travel there).
    """
    times = np.atleast_1d(np.asarray(times, dtype=np.float64))
    if not np.all(np.isfinite(times)):
        raise ScenarioError("Sample times must be finite numbers.")
    pos = np.zeros((len(times), 3))
    pos[:, :2] = _hermite(scenario.times, scenario.xy, scenario._slopes, times)
    if not scenario.has_facing:
        return pos, None
    yaw = _hermite(scenario.times, scenario._yaws, scenario._yaw_slopes, times)[:, 0]
    return pos, yaw_to_facing(yaw)


def velocity(scenario, times):
    """Ground velocity (T, 2) in m/s at ``times`` (the derivative of :func:`sample`)."""
    times = np.atleast_1d(np.asarray(times, dtype=np.float64))
    return _hermite(scenario.times, scenario.xy, scenario._slopes, times, derivative=True)


# ----------------------------------------------------------------------------
# JSON files

_POINT_KEYS = ("t", "x", "y", "facing")
_FILE_KEYS = ("points", "name", "description")


def scenario_from_dict(data, name="scenario"):
    """A :class:`Scenario` from the parsed JSON format (see the module docstring)."""
    if not isinstance(data, dict):
        raise ScenarioError('A scenario file must hold an object with a "points" list.')
    unknown = sorted(set(data) - set(_FILE_KEYS))
    if unknown:
        raise ScenarioError("Unknown key %s in the scenario; expected %s."
                            % (short_repr(unknown[0]), ", ".join(_FILE_KEYS)))
    points = data.get("points")
    if not isinstance(points, list):
        raise ScenarioError('A scenario file must have a "points" list.')
    if len(points) > MAX_POINTS:
        raise ScenarioError("The scenario has %d points; a scenario has at most %d." % (len(points), MAX_POINTS))
    name = data.get("name", name)
    if not isinstance(name, str):
        raise ScenarioError('The scenario "name" must be a string.')
    rows = []
    for i, p in enumerate(points):
        if not isinstance(p, dict):
            raise ScenarioError('Point %d must be an object like {"t": 0, "x": 0, "y": 0}.' % i)
        unknown = sorted(set(p) - set(_POINT_KEYS))
        if unknown:
            raise ScenarioError("Point %d has an unknown key %s; expected t, x, y and optionally facing."
                                % (i, short_repr(unknown[0])))
        missing = [k for k in ("t", "x", "y") if k not in p]
        if missing:
            raise ScenarioError("Point %d has no %r." % (i, missing[0]))
        rows.append((p["t"], p["x"], p["y"], p.get("facing")))
    return Scenario(rows, name)


def scenario_to_dict(scenario):
    """The JSON form of a scenario (what :func:`load_scenario` reads)."""
    points = []
    for t, x, y, f in scenario.points:
        p = {"t": t, "x": x, "y": y}
        if f is not None:
            p["facing"] = f
        points.append(p)
    return {"name": scenario.name, "points": points}


def load_scenario(path):
    """Read a JSON scenario file; errors name the file and the offending point."""
    base = os.path.basename(str(path))
    try:
        raw = text_input.read_bytes(path, "it")
    except MotionMatchingError as ex:
        raise ScenarioError("Cannot read the scenario file %s (%s)." % (path, str(ex).rstrip("."))) from None
    try:
        data = text_input.parse_json(raw, base)
    except MotionMatchingError as ex:
        raise ScenarioError(str(ex).rstrip(".") + ".") from None
    stem = os.path.splitext(base)[0]
    try:
        return scenario_from_dict(data, stem)
    except ScenarioError as ex:
        raise ScenarioError("%s: %s" % (base, ex)) from None


def save_scenario(scenario, path):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(scenario_to_dict(scenario), fh, indent=1)


# ----------------------------------------------------------------------------
# Built-in scenarios

WALK_SPEED = 1.2  # m/s
RUN_SPEED = 3.0
WALK_RAMP = 1.2  # seconds from standing to full speed (peak 1.5 m/s^2)
RUN_RAMP = 1.75  # (peak 2.6 m/s^2)
STEP = 0.1  # seconds between generated waypoints


def _shape_length(shape):
    return shape[1] if shape[0] == "line" else shape[1] * math.radians(abs(shape[2]))


def _along(start, yaw, shapes, s):
    """Positions (S, 2) at arc lengths ``s`` along lines and arcs starting at
    ``start`` heading ``yaw``; also the end point and heading. Shapes:
    ("line", length) or ("arc", radius, degrees), positive degrees turning
    counter-clockwise (to the left)."""
    s = np.asarray(s, dtype=np.float64)
    out = np.empty((len(s), 2))
    p = np.asarray(start, dtype=np.float64)
    base = 0.0
    for k, shape in enumerate(shapes):
        length = _shape_length(shape)
        last = k == len(shapes) - 1
        m = (s >= base) & ((s <= base + length) if last else (s < base + length))
        u = s[m] - base
        if shape[0] == "line":
            out[m] = p + u[:, None] * yaw_to_facing(yaw)
            p = p + length * yaw_to_facing(yaw)
        else:
            r, sign = shape[1], math.copysign(1.0, shape[2])
            centre = p + sign * r * yaw_to_facing(yaw + math.pi / 2)
            out[m] = centre - sign * r * yaw_to_facing(yaw + sign * u / r + math.pi / 2)
            yaw = yaw + math.radians(shape[2])
            p = centre - sign * r * yaw_to_facing(yaw + math.pi / 2)
        base += length
    return out, p, yaw


def _leg(t0, start, yaw, shapes, speed, ramp):
    """Waypoints of one move from standing to standing along ``shapes``.

    The speed eases from 0 to ``speed`` over ``ramp`` seconds as
    ``speed * (3u^2 - 2u^3)`` (no jolt at either end, peak acceleration
    ``1.5 speed / ramp``), cruises, and eases back to 0 the same way. A move too
    short to reach ``speed`` goes slower. Returns points, end point and heading.
    """
    total = sum(_shape_length(sh) for sh in shapes)
    speed = min(speed, total / ramp)
    cruise = (total - speed * ramp) / speed
    bounds = [0.0, ramp, ramp + cruise, 2 * ramp + cruise]
    ts = [0.0]
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a > 1e-9:
            ts.extend(np.linspace(a, b, max(1, int(math.ceil((b - a) / STEP - 1e-9))) + 1)[1:])
    ts = np.array(ts)

    def eased(t):  # distance covered t seconds into a ramp from standing
        u = np.clip(t / ramp, 0.0, 1.0)
        return speed * ramp * (u ** 3 - 0.5 * u ** 4)

    s = np.where(ts <= ramp, eased(ts),
                 np.where(ts <= ramp + cruise, 0.5 * speed * ramp + speed * (ts - ramp),
                          total - eased(bounds[-1] - ts)))
    s[-1] = total
    xy, end, end_yaw = _along(start, yaw, shapes, s)
    xy[-1] = end
    return [(t0 + t, float(x), float(y)) for t, (x, y) in zip(ts, xy)], end, end_yaw


class _Builder:
    """Appends stands and moves to a list of waypoints, starting at the origin facing -Y."""

    def __init__(self):
        self.points = [(0.0, 0.0, 0.0)]
        self.pos = np.zeros(2)
        self.yaw = 0.0

    @property
    def t(self):
        return self.points[-1][0]

    def stand(self, seconds):
        self.points.append((self.t + seconds, float(self.pos[0]), float(self.pos[1])))

    def move(self, shapes, speed, ramp, turn_degrees=0.0):
        self.yaw += math.radians(turn_degrees)
        pts, self.pos, self.yaw = _leg(self.t, self.pos, self.yaw, shapes, speed, ramp)
        self.points.extend(pts[1:])


def _cruise_length(speed, ramp, seconds):
    """Path length of a move of ``seconds`` (ramps included) at ``speed``."""
    return speed * ramp + speed * (seconds - 2 * ramp)


def _showcase():
    b = _Builder()
    b.stand(1.0)
    # Run along -Y: 1.75 s easing up to 3 m/s, 1.25 s at 3 m/s, 1.75 s easing down (8.6 m).
    b.move([("line", _cruise_length(RUN_SPEED, RUN_RAMP, 4.75))], RUN_SPEED, RUN_RAMP)
    b.stand(1.0)
    # Walk back (+Y) for 6.25 s at up to 1.2 m/s: 2.1 m straight, then a quarter
    # circle of radius 2.5 m to the left, ending heading -X.
    arc = ("arc", 2.5, 90.0)
    walked = _cruise_length(WALK_SPEED, WALK_RAMP, 6.25)
    b.move([("line", walked - _shape_length(arc)), arc], WALK_SPEED, WALK_RAMP, turn_degrees=180.0)
    b.stand(1.5)
    return b.points


def _straight_walk():
    b = _Builder()
    b.stand(1.0)
    b.move([("line", _cruise_length(WALK_SPEED, WALK_RAMP, 7.5))], WALK_SPEED, WALK_RAMP)
    b.stand(1.5)
    return b.points


def _circle():
    b = _Builder()
    b.stand(1.0)
    b.move([("arc", 2.5, 360.0)], WALK_SPEED, WALK_RAMP)
    b.stand(1.0)
    return b.points


BUILTINS = {
    "showcase": ("Showcase", "Stand 1 s, run 8.6 m, stand 1 s, walk back 2.1 m and a quarter circle, stand 1.5 s (14.5 s)",
                 _showcase),
    "straight_walk": ("Straight Walk", "Stand 1 s, walk 7.6 m straight ahead at 1.2 m/s, stand 1.5 s (10 s)", _straight_walk),
    "circle": ("Circle", "Stand 1 s, walk once round a circle of radius 2.5 m to the left, stand 1 s (16.3 s)", _circle),
}


def builtin(name):
    """A built-in scenario by name: "showcase", "straight_walk" or "circle".

    Each starts and ends standing, at the origin heading -Y. Walks are 1.2 m/s
    and the run 3 m/s; speeds ease in and out over 1.2 s (walk) and 1.75 s (run),
    peak accelerations 1.5 and 2.6 m/s^2. Waypoints are at most 0.1 s apart.
    """
    if name not in BUILTINS:
        raise ScenarioError("There is no built-in scenario %r; choose one of %s."
                            % (name, ", ".join(sorted(BUILTINS))))
    return Scenario(BUILTINS[name][2](), name)


# ----------------------------------------------------------------------------
# Timing along a curve (the curve controller)


@dataclass
class CurveTiming:
    """Keys of the offset along a curve (0 at its start, 1 at its end) over frames.

    ``frames``, ``offsets`` (K,); ``slope_left``/``slope_right`` (K,) offset per
    frame on either side of each key; ``linear`` (K-1,) True where a segment is
    straight (constant speed), else it is a quadratic (speed changing linearly,
    an exact cubic Bezier with handles a third of the way along).
    """

    frames: np.ndarray
    offsets: np.ndarray
    slope_left: np.ndarray
    slope_right: np.ndarray
    linear: np.ndarray
    frame_end: float
    length: float

    def handles(self):
        """Bezier handles (K, 2) left and right that make each segment exact."""
        f, y = self.frames, self.offsets
        gap = np.diff(f) / 3.0
        left_gap = np.concatenate([gap[:1], gap])
        right_gap = np.concatenate([gap, gap[-1:]])
        left = np.stack([f - left_gap, y - self.slope_left * left_gap], axis=1)
        right = np.stack([f + right_gap, y + self.slope_right * right_gap], axis=1)
        return left, right

    def evaluate(self, frames):
        """Offsets at ``frames`` (constant outside the keys)."""
        return _piecewise(self, np.asarray(frames, dtype=np.float64))


def _piecewise(timing, frames):
    f, y = timing.frames, timing.offsets
    k = np.clip(np.searchsorted(f, frames, side="right") - 1, 0, len(f) - 2)
    h = f[k + 1] - f[k]
    s = np.clip((frames - f[k]) / h, 0.0, 1.0)
    y0, y1 = y[k], y[k + 1]
    d0, d1 = timing.slope_right[k], timing.slope_left[k + 1]
    return y0 + (y1 - y0) * (3 * s * s - 2 * s ** 3) + h * (d0 * (s ** 3 - 2 * s * s + s) + d1 * (s ** 3 - s * s))


def _finite(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise ScenarioError("%s must be a finite number (got %r)." % (what, v))
    return float(v)


def curve_timing(length, fps, frame_start, frame_end=None, speed=None, stops=()):
    """When the controller is where along a curve of ``length`` metres.

    ``speed``: None to cover the curve evenly from ``frame_start`` to ``frame_end``;
    a number in m/s for a constant speed (the end follows from the length); or speed
    keys ``[(frame, m/s), ...]``, the speed changing linearly between keys and held
    before the first and after the last. ``stops``: ``[(frame, seconds), ...]``,
    the frame where the controller stops (on the resulting timeline) and how long
    it stands; the motion after a stop comes that much later, so stops push the
    end later. A stop must begin after the previous one ends and before the
    controller reaches the end of the curve.
    """
    length = _finite(length, "The curve length")
    fps = _finite(fps, "The frame rate")
    frame_start = _finite(frame_start, "The start frame")
    if length <= 0.0:
        raise ScenarioError("The curve has no length.")
    if fps <= 0.0:
        raise ScenarioError("The frame rate must be positive.")
    key_f, key_v = _speed_keys(length, fps, frame_start, frame_end, speed)
    stop_list = _stop_list(stops, fps)
    segs, end = _timing_segments(length, frame_start, key_f, key_v, stop_list)
    return _timing_from_segments(segs, end, length)


def _speed_keys(length, fps, frame_start, frame_end, speed):
    """Stage 1 of :func:`curve_timing`: the speed keys as (frames, metres per frame)."""
    if speed is None:
        if frame_end is None:
            raise ScenarioError("Give an end frame or a speed.")
        frame_end = _finite(frame_end, "The end frame")
        if frame_end <= frame_start:
            raise ScenarioError("The end frame (%g) must come after the start frame (%g)."
                                % (frame_end, frame_start))
        return [frame_start], [length / (frame_end - frame_start)]
    if isinstance(speed, (int, float, np.integer, np.floating)) and not isinstance(speed, bool):
        v = _finite(speed, "The speed")
        if v <= 0.0:
            raise ScenarioError("The speed must be positive (got %g m/s)." % v)
        return [frame_start], [v / fps]
    pairs = sorted((_finite(f, "A speed key's frame"), _finite(v, "A speed key's speed"))
                   for f, v in _pairs(speed, "speed key"))
    if not pairs:
        raise ScenarioError("Give at least one speed key.")
    for (f0, _), (f1, _) in zip(pairs[:-1], pairs[1:]):
        if f1 - f0 < 1e-6:
            raise ScenarioError("Two speed keys are on frame %g." % f0)
    if any(v < 0.0 for _, v in pairs):
        raise ScenarioError("Speeds must not be negative.")
    return [f for f, _ in pairs], [v / fps for _, v in pairs]


def _stop_list(stops, fps):
    """Stage 2: the stops, sorted, as (frame, frames standing)."""
    stop_list = []
    for f, sec in sorted(_pairs(stops, "stop")):
        f = _finite(f, "A stop's frame")
        sec = _finite(sec, "A stop's duration")
        if sec <= 0.0:
            raise ScenarioError("The stop at frame %g must last a positive time (got %g s)." % (f, sec))
        stop_list.append((f, sec * fps))
    return stop_list


def _timing_segments(length, frame_start, key_f, key_v, stop_list):
    """Stage 3: walk the timeline from ``frame_start`` to where the curve is
    covered, one segment per speed ramp or stop: returns the segments
    ``(f0, f1, d0, d1, v0, v1)`` (frames, metres covered, metres per frame)
    and the end frame."""
    eps = 1e-6
    knots = [f for f in key_f if f > frame_start + eps]

    def v_at(f):
        return float(np.interp(f, key_f, key_v))

    segs = []
    f, dist, i = frame_start, 0.0, 0
    while True:
        if i < len(stop_list) and stop_list[i][0] <= f + eps:
            s, hold = stop_list[i]
            if s < f - eps:
                if i == 0:
                    raise ScenarioError("The stop at frame %g is before the start frame %g." % (s, frame_start))
                raise ScenarioError("The stop at frame %g starts before the previous stop ends (frame %g)."
                                    % (s, f))
            segs.append((f, f + hold, dist, dist, 0.0, 0.0))
            f += hold
            i += 1
            continue
        nxt = min([k for k in knots if k > f + eps] + ([stop_list[i][0]] if i < len(stop_list) else [])
                  + [math.inf])
        v0 = v_at(f)
        v1 = v_at(nxt) if nxt < math.inf else v0
        span = (v0 + v1) / 2.0 * (nxt - f) if nxt < math.inf else (math.inf if v0 > 0 else 0.0)
        if dist + span >= length * (1.0 - 1e-12):
            # The curve ends inside this ramp: solve need = v0 tau + acc tau^2 / 2
            # for tau (in the form that stays exact when acc is 0).
            need = length - dist
            acc = (v1 - v0) / (nxt - f) if nxt < math.inf else 0.0
            tau = 2.0 * need / (v0 + math.sqrt(max(v0 * v0 + 2.0 * acc * need, 0.0)))
            end = f + tau
            segs.append((f, end, dist, length, v0, v0 + acc * tau))
            break
        if nxt == math.inf:
            raise ScenarioError("The speed keys leave the controller standing before the end of the curve "
                                "(%.2f of %.2f m covered)." % (dist, length))
        segs.append((f, nxt, dist, dist + span, v0, v1))
        dist += span
        f = nxt
    if i < len(stop_list):
        raise ScenarioError("The stop at frame %g starts after the controller reaches the end of the curve "
                            "(frame %.2f)." % (stop_list[i][0], end))
    return segs, end


def _timing_from_segments(segs, end, length):
    """Stage 4: the :class:`CurveTiming` of the segments (offsets and slopes as
    fractions of the curve)."""
    eps = 1e-6
    # Drop zero-length segments (a speed key right on a stop's end).
    segs = [sg for sg in segs if sg[1] - sg[0] > eps] or segs[-1:]
    frames = np.array([sg[0] for sg in segs] + [segs[-1][1]])
    offsets = np.array([sg[2] for sg in segs] + [segs[-1][3]]) / length
    slope_right = np.array([sg[4] for sg in segs] + [0.0]) / length
    slope_left = np.array([0.0] + [sg[5] for sg in segs]) / length
    linear = np.array([abs(sg[4] - sg[5]) <= 1e-12 * max(abs(sg[4]), 1e-300) for sg in segs])
    offsets[-1] = 1.0
    return CurveTiming(frames, offsets, slope_left, slope_right, linear, float(end), length)


def _pairs(values, what):
    out = []
    for p in values or ():
        try:
            a, b = p
        except (TypeError, ValueError):
            raise ScenarioError("Each %s must be a pair (frame, value) (got %r)." % (what, p)) from None
        out.append((a, b))
    return out


def parse_pairs(text, what="stop"):
    """Parse ``"120:1.0, 300:2"`` into ``[(120.0, 1.0), (300.0, 2.0)]`` (empty text: [])."""
    out = []
    for item in (x.strip() for x in text.replace(";", ",").split(",")):
        if not item:
            continue
        parts = item.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            a, b = float(parts[0]), float(parts[1])
            if not (math.isfinite(a) and math.isfinite(b)):
                raise ValueError
        except ValueError:
            raise ScenarioError("Cannot read %s %r: write frame:value pairs separated by commas, "
                                "like 120:1.0, 300:2." % (what, item)) from None
        out.append((a, b))
    return out
