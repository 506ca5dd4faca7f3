"""Critically damped springs and the simulated character that follows a controller.

A critically damped spring pulls a value ``x`` with velocity ``v`` toward a goal ``g``
without overshooting the goal. Its error ``d = x - g`` obeys
``d'' + 2 y d' + y^2 d = 0`` (a double root at ``-y``), whose exact solution over a
step ``dt`` is (see docs/maths.md, 'Springs and the trajectory')::

    y  = 2 ln 2 / halflife
    j0 = x - g;  j1 = v + j0 y;  e = exp(-y dt)
    x' = e (j0 + j1 dt) + g;     v' = e (v - j1 y dt)

Because it is the exact solution of a linear equation, one step of ``2 dt`` equals two
steps of ``dt``, and any ``dt`` (however large) is stable.

Note on the name "half-life": with this ``y``, a spring released at rest covers
``1 - (1 + 2 ln 2) / 4 ~= 40 %`` of the distance after one half-life (the envelope
``exp(-y t)`` has quartered, the ``(1 + y t)`` factor slows it). Half the distance is
covered after about ``1.21`` half-lives. The name is kept for the formula's sake (docs/maths.md, 'Springs and the trajectory').

Character simulation (:func:`simulate_character`; from a given state,
:func:`.prediction.predict_future`): a position spring and a yaw spring follow the
controller, aimed a little ahead on its known future (:func:`spring_lead`) so that
they smooth it without trailing behind. Yaw 0 faces -Y (see :mod:`.facing`).

long file: each spring step exists twice, on arrays and on Python floats (the
same operations in the same order, so the same bits); the two are kept side by
side here so that a change to one is seen next to the other.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..errors import MotionMatchingError
from .facing import facing_to_yaw, yaw_to_facing
from . import same_everywhere

LN2 = float(np.log(2.0))


class SpringError(MotionMatchingError):
    """A spring or the character simulation was given values it cannot use."""


# ----------------------------------------------------------------------------
# The spring itself


def halflife_to_damping(halflife):
    """The rate ``y = 2 ln 2 / halflife`` of a critically damped spring.

    ``halflife`` in seconds, a number or an array; every entry must be positive.
    """
    if type(halflife) is float:        # the common case, checked without numpy (called every step)
        if not (math.isfinite(halflife) and halflife > 0.0):
            raise SpringError("The half-life must be a positive number of seconds (got %s)." % (halflife,))
        return 2.0 * LN2 / halflife
    h = np.asarray(halflife, dtype=np.float64)
    if not np.all(np.isfinite(h)) or np.any(h <= 0.0):
        raise SpringError(
            "The half-life must be a positive number of seconds (got %s)." % (halflife,))
    y = 2.0 * LN2 / h
    return float(y) if y.ndim == 0 else y


def _check_dt(dt):
    if type(dt) is float:
        if not (math.isfinite(dt) and dt >= 0.0):
            raise SpringError("The time step must be zero or a positive number of seconds (got %s)." % (dt,))
        return dt
    d = np.asarray(dt, dtype=np.float64)
    if not np.all(np.isfinite(d)) or np.any(d < 0.0):
        raise SpringError(
            "The time step must be zero or a positive number of seconds (got %s)." % (dt,))
    return d


def critical_spring(x, v, goal, halflife, dt):
    """Advance a critically damped spring by ``dt`` toward a still ``goal``;
    returns ``(x', v')``.

    ``x``, ``v``, ``goal``, ``halflife`` and ``dt`` broadcast against each other and
    may have any shape (an array of ``dt`` gives the state at several times).
    """
    y = halflife_to_damping(halflife)
    dt = _check_dt(dt)
    x = np.asarray(x, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    g = np.asarray(goal, dtype=np.float64)
    j0 = x - g
    j1 = v + j0 * y
    e = same_everywhere.exp(-y * dt)  # underflows to exactly 0 for huge dt: the spring is at rest
    return e * (j0 + j1 * dt) + g, e * (v - j1 * y * dt)


def spring_floats(x, v, goal, y, e, dt):
    """One step of :func:`critical_spring` on plain Python floats, given its rate
    ``y`` and ``e = exp(-y dt)``: the same operations in the same order, so the
    same bits, without numpy's cost on a single number (called every step).
    Arrays that broadcast work too (several springs sharing one ``e``)."""
    j0 = x - goal
    j1 = v + j0 * y
    return e * (j0 + j1 * dt) + goal, e * (v - j1 * y * dt)


def step_decay(halflife, dt):
    """``(y, e)`` of a spring with ``halflife`` stepped by ``dt`` (as :func:`critical_spring`
    computes them), for :func:`spring_floats`."""
    y = halflife_to_damping(float(halflife))
    dt = _check_dt(float(dt))
    return y, same_everywhere.exp_float(-y * dt)


def decay_spring(x, v, halflife, dt):
    """A critically damped spring whose goal is zero; returns ``(x', v')``.

    This is the decay of an inertialization offset: ``x(t) = e (x0 + j1 t)``.
    """
    return critical_spring(x, v, 0.0, halflife, dt)


# ----------------------------------------------------------------------------
# Angles


def wrap_angle(a):
    """Angles in radians wrapped to ``[-pi, pi)``."""
    a = np.asarray(a, dtype=np.float64)
    return np.mod(a + np.pi, 2.0 * np.pi) - np.pi


TWO_PI = 2.0 * math.pi


def wrap_float(a):
    """:func:`wrap_angle` of one Python float (Python's ``%`` on floats is numpy's
    ``mod``: C ``fmod`` moved to the divisor's sign; the same bits)."""
    return (a + math.pi) % TWO_PI - math.pi


def yaw_spring(yaw, yaw_rate, goal_yaw, halflife, dt):
    """A critically damped spring on an angle; returns ``(yaw', yaw_rate')``.

    The error to the goal is taken the short way round (wrapped to ``[-pi, pi)``),
    so a yaw of -179 deg pulled toward +179 deg turns 2 deg, never 358. The result
    stays continuous with ``yaw`` (it is not wrapped), so a turning character's yaw
    can run past +-pi without jumping.
    """
    yaw = np.asarray(yaw, dtype=np.float64)
    d = wrap_angle(yaw - np.asarray(goal_yaw, dtype=np.float64))
    d_new, rate_new = critical_spring(d, yaw_rate, 0.0, halflife, dt)
    return yaw + (d_new - d), rate_new


# ----------------------------------------------------------------------------
# The controller


def facing_from_path(positions, dt, min_speed=0.05):
    """Facings (T, 2) of a path that has none: the direction it moves on the ground.

    Velocities are central differences (one-sided at the ends). Where the ground
    speed is under ``min_speed`` (m/s) the last direction is held; frames before
    the first movement take the first direction; a path that never moves faces -Y.
    """
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise SpringError("A controller path must be an array of positions, one row per frame.")
    if len(p) < 2:
        return np.tile([0.0, -1.0], (len(p), 1))
    vel = np.gradient(p[:, :2], dt, axis=0)
    return _hold_valid(vel, np.linalg.norm(vel, axis=1) >= min_speed)


def _hold_valid(vectors, valid):
    """Normalise (T, 2) vectors; invalid rows take the last valid one (the first
    valid one before it appears; -Y when there is none)."""
    t = len(vectors)
    out = np.tile([0.0, -1.0], (t, 1))
    idx = np.where(valid, np.arange(t), -1)
    idx = np.maximum.accumulate(idx)  # index of the last valid row so far
    if np.any(valid):
        idx[idx < 0] = np.argmax(valid)
        v = vectors[idx]
        out = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def controller_yaws(controller_pos, controller_facing, dt):
    """The controller's yaw per frame (T,), unrolled so that each frame-to-frame
    change is the short way round. ``controller_facing`` (T, 2) or (T, 3) (only x, y
    are read) or None to face the way the path moves. Zero-length facings hold the
    previous one."""
    p = np.asarray(controller_pos, dtype=np.float64)
    if controller_facing is None:
        f = facing_from_path(p, dt)
    else:
        f = np.asarray(controller_facing, dtype=np.float64)
        if f.ndim != 2 or f.shape[1] < 2 or len(f) != len(p):
            raise SpringError(
                "The controller facings must have one (x, y) row per controller position "
                "(got %s for %d positions)." % (f.shape, len(p)))
        f = f[:, :2]
        f = _hold_valid(f, np.linalg.norm(f, axis=1) > 1e-9)
    return np.unwrap(facing_to_yaw(f))


# ----------------------------------------------------------------------------
# The simulated character


@dataclass
class CharacterState:
    """Where the simulated character is, how it moves and which way it faces."""

    position: np.ndarray  # (3,)
    velocity: np.ndarray  # (3,)
    yaw: float  # radians, 0 faces -Y, continuous (not wrapped)
    yaw_rate: float  # radians per second

    @property
    def facing(self):
        return yaw_to_facing(self.yaw)


@dataclass
class SimulatedPath:
    """Per-frame result of :func:`simulate_character`."""

    positions: np.ndarray  # (T, 3)
    velocities: np.ndarray  # (T, 3)
    yaws: np.ndarray  # (T,) continuous
    yaw_rates: np.ndarray  # (T,)
    goals: tuple = None    # (goal positions (T-1, 3), goal yaws (T-1,), start (8,)): what the steps followed

    @property
    def facings(self):
        """(T, 2) unit ground-plane facings."""
        return yaw_to_facing(self.yaws)

    def state(self, frame):
        return CharacterState(self.positions[frame].copy(), self.velocities[frame].copy(),
                              float(self.yaws[frame]), float(self.yaw_rates[frame]))


def spring_lead(halflife, dt):
    """Look-ahead (s) that cancels the lag of a spring chasing a moving goal.

    A spring stepped toward a goal held still over each step (the value at the
    step's end) trails a goal moving at speed u by ``u (2 / y - dt / 2)``. Aiming it
    at the goal that much later puts it on the goal instead. Offline the
    controller's future is known, so this costs nothing.
    """
    return 2.0 / halflife_to_damping(halflife) - 0.5 * float(dt)


def _check_path(controller_pos):
    p = np.asarray(controller_pos, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3 or len(p) == 0:
        raise SpringError(
            "The controller positions must be an array of shape (frames, 3) (got %s)."
            % (p.shape,))
    if not np.all(np.isfinite(p)):
        raise SpringError("The controller positions contain values that are not numbers.")
    return p


def _check_step(dt):
    dt = float(dt)
    if not (np.isfinite(dt) and dt > 0.0):
        raise SpringError("The time step must be a positive number of seconds (got %s)." % dt)
    return dt


def _sample(values, index):
    """Linear interpolation of ``values`` (T, ...) at fractional frame indices,
    clamped to the first and last frame (the controller stands still outside)."""
    index = np.clip(np.asarray(index, dtype=np.float64), 0.0, len(values) - 1)
    i0 = np.floor(index).astype(int)
    i1 = np.minimum(i0 + 1, len(values) - 1)
    w = (index - i0).reshape(index.shape + (1,) * (values.ndim - 1))
    return values[i0] * (1.0 - w) + values[i1] * w


class ControllerGoals:
    """The controller resampled as spring goals: the goal of the step that ends at
    frame f is the controller at frame ``f + lead / dt``."""

    def __init__(self, controller_pos, controller_facing, dt, halflife_pos, halflife_rot,
                 lead):
        self.pos = _check_path(controller_pos)
        self.dt = _check_step(dt)
        self.halflife_pos = float(halflife_pos)
        self.halflife_rot = float(halflife_rot)
        if lead is None:
            lead_pos = spring_lead(halflife_pos, self.dt)
            lead_rot = spring_lead(halflife_rot, self.dt)
        else:
            if not np.isfinite(lead):
                raise SpringError("The look-ahead must be a number of seconds (got %s)." % lead)
            halflife_to_damping(halflife_pos)
            halflife_to_damping(halflife_rot)
            lead_pos = lead_rot = float(lead)
        self.shift_pos = lead_pos / self.dt
        self.shift_rot = lead_rot / self.dt
        self.yaws = controller_yaws(self.pos, controller_facing, self.dt)
        self._decay_cache = {}

    def at(self, frames):
        frames = np.asarray(frames, dtype=np.float64)
        return _sample(self.pos, frames + self.shift_pos), _sample(self.yaws,
                                                                  frames + self.shift_rot)

    def initial_state(self):
        """On the controller's first sample, moving as it moves there."""
        p, yaws, dt = self.pos, self.yaws, self.dt
        if len(p) > 1:
            return CharacterState(p[0].copy(), (p[1] - p[0]) / dt, float(yaws[0]),
                                  float((yaws[1] - yaws[0]) / dt))
        return CharacterState(p[0].copy(), np.zeros(3), float(yaws[0]), 0.0)

    def advance(self, pos, vel, yaw, rate, goal_pos, goal_yaw, span):
        """One step of ``span`` seconds: :func:`critical_spring` on the position and
        :func:`yaw_spring` on the yaw, computed on Python floats (the same bits).
        ``pos``, ``vel``, ``goal_pos``: 3 numbers each; returns lists and floats."""
        (yp, ep), (yr, er) = self._decays(span)
        (x0, x1, x2), (v0, v1, v2), (g0, g1, g2) = pos, vel, goal_pos
        # spring_floats on each coordinate, written out (its operations, in its order).
        j0, k0, l0 = x0 - g0, x1 - g1, x2 - g2
        j1, k1, l1 = v0 + j0 * yp, v1 + k0 * yp, v2 + l0 * yp
        d = wrap_float(yaw - goal_yaw)
        d_new, rate = spring_floats(d, rate, 0.0, yr, er, span)
        return ([ep * (j0 + j1 * span) + g0, ep * (k0 + k1 * span) + g1, ep * (l0 + l1 * span) + g2],
                [ep * (v0 - j1 * yp * span), ep * (v1 - k1 * yp * span), ep * (v2 - l1 * yp * span)],
                yaw + (d_new - d), rate)

    def _decays(self, span):
        """The position and yaw springs' ``(y, e)`` for a step of ``span`` (cached)."""
        cached = self._decay_cache.get(span)
        if cached is None:
            cached = (step_decay(self.halflife_pos, span), step_decay(self.halflife_rot, span))
            self._decay_cache[span] = cached
        return cached


def simulate_character(controller_pos, controller_facing, dt, halflife_pos=0.25,
                       halflife_rot=0.25, initial_state=None, lead=None, previous=None):
    """Run the simulated character along a controller, one step per frame.

    ``controller_pos`` (T, 3) world positions of the controller per frame;
    ``controller_facing`` (T, 2) ground facings per frame, or None to face the way
    the controller moves (:func:`facing_from_path`); ``dt`` seconds per frame.

    Frame 0 is ``initial_state`` (default: on the controller's first sample, moving
    and turning as it does there). Frame i + 1 is frame i after one step of the
    critically damped spring above, toward the controller at time ``(i + 1) dt + lead``, position
    and yaw each with their own half-life.

    ``lead`` (seconds): None (default) looks ahead by :func:`spring_lead` of each
    half-life, so a steadily moving or turning controller is followed with no lag;
    0 gives the plain spring (no lead), which trails the controller by about
    0.36 s of travel at the default half-life. Either way, once the initial
    state's influence has faded, each simulated sample is a weighted average of
    controller samples with positive weights: the springs smooth the controller's
    changes but do not overshoot its path (a stop is not overrun, a teleport
    becomes a smooth move). Past the controller's last sample it stands still, so
    the character eases into the end point, arriving a little after it.

    Yaw goals are unrolled along time and each step's error is taken the short way
    round, so facings never spin the long way. Returns a :class:`SimulatedPath`.
    ``previous``: an earlier result; the steps that followed the same goals
    from the same start are copied from it (the same numbers).
    """
    goals = ControllerGoals(controller_pos, controller_facing, dt, halflife_pos, halflife_rot, lead)
    s = initial_state if initial_state is not None else goals.initial_state()
    t = len(goals.pos)
    goal_p, goal_y = goals.at(np.arange(1, t))
    start = np.concatenate([s.position, s.velocity, [s.yaw, s.yaw_rate]]).astype(np.float64)
    first = _same_steps(previous, (goal_p, goal_y, start), halflife_pos, halflife_rot, dt)
    if first:
        # Steps up to ``first`` followed the same goals from the same start: copied.
        out_p, out_v = previous.positions[:first + 1].tolist(), previous.velocities[:first + 1].tolist()
        out_y, out_r = previous.yaws[:first + 1].tolist(), previous.yaw_rates[:first + 1].tolist()
    else:
        out_p = [np.asarray(s.position, dtype=np.float64).tolist()]
        out_v = [np.asarray(s.velocity, dtype=np.float64).tolist()]
        out_y, out_r = [float(s.yaw)], [float(s.yaw_rate)]
    pos, vel, yaw, rate = out_p[-1], out_v[-1], out_y[-1], out_r[-1]
    gp, gy = goal_p.tolist(), goal_y.tolist()
    for i in range(first, t - 1):
        pos, vel, yaw, rate = goals.advance(pos, vel, yaw, rate, gp[i], gy[i], goals.dt)
        out_p.append(pos)
        out_v.append(vel)
        out_y.append(yaw)
        out_r.append(rate)
    return SimulatedPath(np.array(out_p, dtype=np.float64).reshape(t, 3),
                         np.array(out_v, dtype=np.float64).reshape(t, 3),
                         np.array(out_y, dtype=np.float64), np.array(out_r, dtype=np.float64),
                         goals=(goal_p, goal_y, start, halflife_pos, halflife_rot, dt))


def _same_steps(previous, goals, halflife_pos, halflife_rot, dt):
    """The first step whose goal differs (bit for bit) from ``previous``'s (a
    SimulatedPath of as many steps, or None), when the start and half-lives are
    the same; 0 otherwise."""
    if previous is None or previous.goals is None:
        return 0
    goal_p, goal_y, start, hp, hr, pdt = previous.goals
    if (hp, hr, pdt) != (halflife_pos, halflife_rot, dt) or len(goal_p) != len(goals[0]) \
            or start.tobytes() != goals[2].tobytes():
        return 0
    moved = np.any(goal_p.view(np.uint64) != goals[0].view(np.uint64), axis=1) | \
        (goal_y.view(np.uint64) != goals[1].view(np.uint64))
    hit = np.flatnonzero(moved)
    return int(hit[0]) if len(hit) else len(goal_p)
