"""Scenarios: timed paths on the ground for a controller to follow.

A scenario is a list of waypoints ``(t, x, y, facing)``: time in seconds from the
start of the scenario (``t = 0``), ground position in metres (Z up), and an
optional facing in degrees. Facing convention: 0 faces -Y (Blender's front, where
a character looks), positive angles turn counter-clockwise seen from above (a
right-handed turn about +Z), so 90 faces +X and -90 faces -X. As a ground vector
the facing of angle ``a`` is ``(sin a, -cos a)``, as in :mod:`core.maths.facing`.

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
     "points": [{"t": 0.0, "x": 0.0, "y": 0.0, "query": "walk"},
                {"t": 2.0, "x": 0.0, "y": -2.4, "facing": 0.0, "query": "run"}, ...]}

A point's ``query`` (optional) is a tag query in force from that point's time
until a later point names another; ``""`` goes back to the scene's Tag Query
(moves along the timeline, :mod:`.moves`).

The built-in scenarios are in :mod:`.scenario_builtins`; the offset along a
curve over frames for the curve controller in :mod:`.curve_timing`.
"""

import json
import math
import os

import numpy as np

from ..errors import MotionMatchingError
from ..io import text_input
from ..io.text_input import short_repr
from ..database.query import parse_query
from ..database.tags import TagError
from ..maths.facing import facing_to_yaw, yaw_to_facing
from .moves import moves_of_times


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

    def __init__(self, points, name="scenario", queries=()):
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
        self.queries = _checked_queries(queries, self.times)
        self._slopes = _monotone_slopes(self.times, self.xy)
        if self.has_facing:
            self._yaws = _point_yaws(self)[:, None]
            self._yaw_slopes = _monotone_slopes(self.times, self._yaws)

    def __repr__(self):
        return "Scenario(%r, %d points, %.2f s)" % (self.name, len(self.points), duration(self))


def _checked_queries(queries, times):
    """((t, query text), ...) of the points that carry a tag query: ``queries``
    are (point index, text) pairs; the query's syntax is checked here, its tags
    when a bake reads it."""
    out = []
    for i, text in queries:
        if not isinstance(text, str):
            raise ScenarioError("Point %d: query must be a tag query in quotes (got %s)." % (i, short_repr(text)))
        if text.strip():
            try:
                parse_query(text)
            except TagError as ex:
                raise ScenarioError("Point %d: %s" % (i, ex)) from None
        out.append((float(times[i]), text.strip()))
    return tuple(out)


def scenario_moves(scenario, fps, frame_start=1):
    """The :class:`.moves.Moves` of the scenario's points that carry a query, on a
    controller whose frame ``frame_start`` holds t = 0 at ``fps``."""
    return moves_of_times([t for t, _ in scenario.queries], [q for _, q in scenario.queries], fps, frame_start)


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

_POINT_KEYS = ("t", "x", "y", "facing", "query")
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
            raise ScenarioError("Point %d has an unknown key %s; expected t, x, y and optionally facing and query."
                                % (i, short_repr(unknown[0])))
        missing = [k for k in ("t", "x", "y") if k not in p]
        if missing:
            raise ScenarioError("Point %d has no %r." % (i, missing[0]))
        rows.append((p["t"], p["x"], p["y"], p.get("facing")))
    queries = [(i, p["query"]) for i, p in enumerate(points) if "query" in p]
    return Scenario(rows, name, queries)


def scenario_to_dict(scenario):
    """The JSON form of a scenario (what :func:`load_scenario` reads)."""
    points = []
    queries = dict(scenario.queries)
    for t, x, y, f in scenario.points:
        p = {"t": t, "x": x, "y": y}
        if f is not None:
            p["facing"] = f
        if t in queries:
            p["query"] = queries[t]
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
