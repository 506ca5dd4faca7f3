"""The built-in scenarios: standing, walking and running along lines and arcs,
with speeds that ease in and out (see :func:`builtin`)."""

import math

import numpy as np

from ..maths.facing import yaw_to_facing
from .scenario import Scenario, ScenarioError

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
