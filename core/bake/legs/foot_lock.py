"""Foot lock for the bake: pin a planted toe where it touched down (see docs/maths.md, 'Foot lock and IK').

One :class:`FootLock` per foot, stepped once per baked frame. It decides where the
toe should be; moving it there (two-bone IK on hip-knee-ankle with the ankle shifted
by the toe's correction, see :func:`ankle_target`) is the caller's job.

States:

- free: the wanted toe is the animated toe plus what is left of a release offset;
- locked: the wanted toe is the pinned point, fixed in the world (its height is the
  height the toe had when it locked; with ``on_contact``, the animated toe's height
  on each frame: the place on the ground is held, the data's height kept).

A free foot locks when the database says it is in contact, its speed is under
``lock_speed`` and any release offset has decayed under ``relock_offset`` (without
that last rule a foot released for drifting would lock again on the next frame, at
the same far point, and flicker). With ``on_contact`` the played data alone
decides: a foot locks whenever the data says contact (wherever the output is
then, so a lock during a blend-out does not pop), whatever the baked toe's speed;
a frame with neither foot in contact (a run's flight) has no contact to lock on.
(:func:`with_touchdowns` begins a contact where the toe came down just before the
data's flag.) A locked foot is released when the contact ends or the animated toe is more than
``unlock_distance`` from the pinned point (with ``on_contact``, a foot released so
waits for the data to lift it before it locks again).

The position may carry extra held values after x, y, z (the foot's heading, for
example): they are pinned and blended out like the position, and take no part in
the speed or distance rules. On
release the offset (pinned point - animated toe) is handed to a critically damped
decay (``blend_halflife``) whose starting velocity cancels the toe's, so the output
neither jumps nor suddenly starts moving.
"""

import copy
import math
from dataclasses import dataclass

import numpy as np

from ...errors import MotionMatchingError
from ..resume import first_change
from ..settings import FootLockSettings
from ...maths.springs import step_decay


class FootLockError(MotionMatchingError):
    """Foot lock was given settings or inputs it cannot use."""


_SETTINGS = FootLockSettings()   # the defaults are the bake settings' own


class FootLock:
    """The lock state of one foot. See the module notes for the rules."""

    def __init__(self, lock_speed=_SETTINGS.lock_speed, unlock_distance=_SETTINGS.unlock_distance,
                 blend_halflife=_SETTINGS.lock_blend_halflife, relock_offset=0.02,
                 on_contact=_SETTINGS.lock_on_contact):
        for name, value in (("lock speed", lock_speed), ("unlock distance", unlock_distance),
                            ("blend half-life", blend_halflife),
                            ("relock offset", relock_offset)):
            if not (np.isfinite(value) and value > 0.0):
                raise FootLockError("The foot lock %s must be a positive number (got %s)."
                                    % (name, value))
        self.lock_speed = float(lock_speed)
        self.unlock_distance = float(unlock_distance)
        self.blend_halflife = float(blend_halflife)
        self.relock_offset = float(relock_offset)
        self.on_contact = bool(on_contact)
        self.lock_count = 0
        self._rate_for, self._rate = None, None     # the decay's (y, e) for one dt
        self.reset()

    def reset(self):
        """Free the foot and drop any offset (the lock count is kept)."""
        self.locked = False
        self.pinned = None
        self.offset = None
        self.offset_vel = None
        self._prev_toe = None
        self._wait_lift = False

    STATE = ("locked", "pinned", "offset", "offset_vel", "_prev_toe", "_wait_lift", "lock_count")

    def state(self):
        """What carries from one step to the next (copies), to go on from later."""
        return tuple(copy.copy(getattr(self, name)) for name in self.STATE)

    def restore(self, state):
        for name, value in zip(self.STATE, state):
            setattr(self, name, copy.copy(value))

    def step(self, contact, toe_pos, toe_speed, dt):
        """Advance one frame of ``dt`` seconds.

        ``contact`` the database's contact flag for this frame; ``toe_pos`` (3,) the
        toe's world position in the animation; ``toe_speed`` its speed in m/s (None:
        measured from the positions given to this object, so a foot cannot lock on
        the first frame it is given). Returns
        ``(wanted_toe (3,), locked)``.
        """
        if not dt > 0.0:
            raise FootLockError("The time step must be a positive number of seconds (got %s)."
                                % (dt,))
        toe = np.asarray(toe_pos, dtype=np.float64).ravel()
        if len(toe) < 3:
            raise FootLockError("The toe position needs x, y and z (got %d values)." % len(toe))
        if not np.all(np.isfinite(toe)):
            raise FootLockError("The toe position contains values that are not numbers.")
        wanted, locked = self._advance(contact, toe.tolist(), toe_speed, dt)
        return np.asarray(wanted, dtype=np.float64), locked

    def _decay(self, dt):
        """The release offset one step of ``dt`` on: :func:`decay_spring` computed
        on Python floats (the same bits; numpy costs more than the sum on 4 numbers)."""
        if self._rate_for != dt:
            self._rate_for, self._rate = dt, step_decay(self.blend_halflife, dt)
        y, e = self._rate
        out, vel = [], []
        for x, v in zip(self.offset, self.offset_vel):      # spring_floats(x, v, 0.0, y, e, dt), written out
            j1 = v + (x - 0.0) * y
            out.append(e * ((x - 0.0) + j1 * dt) + 0.0)
            vel.append(e * (v - j1 * y * dt))
        return out, vel

    def _advance(self, contact, toe, toe_speed, dt):
        """:meth:`step` on checked input, ``toe`` a list of finite floats. The
        state and the wanted toe are lists of Python floats: each sum, product
        and square root is numpy's float64 one (IEEE), without numpy's cost per
        number; the two lengths numpy took by a dot product are :func:`_length_below`."""
        n = len(toe)
        if self.offset is None or len(self.offset) != n:
            self.offset, self.offset_vel = [0.0] * n, [0.0] * n
        prev = self._prev_toe
        speed = None if toe_speed is None else float(toe_speed)
        self._prev_toe = toe
        if not contact:
            self._wait_lift = False
        if self.locked:
            return self._held(contact, toe, prev, dt)
        self.offset, self.offset_vel = self._decay(dt)
        wanted = [t + o for t, o in zip(toe, self.offset)]
        if contact and ((self.on_contact and not self._wait_lift) or (
                _speed(toe, prev, dt) if speed is None else speed) < self.lock_speed
                and _length_below(self.offset[:3], self.relock_offset, False)):
            # Pin where the output is now, so a lock during a blend-out does not pop.
            self.locked = True
            self.pinned = wanted
            self.offset, self.offset_vel = [0.0] * n, [0.0] * n
            self.lock_count += 1
            return list(wanted), True
        return wanted, False

    def _held(self, contact, toe, prev, dt):
        """:meth:`_advance` of a locked foot: held, or released."""
        held = list(self.pinned)
        if self.on_contact:
            # The data's own height: a foot locked while still settling is not
            # held in the air (only its place on the ground and heading are held).
            held[2] = toe[2]
        if contact and _length_below([h - t for h, t in zip(held[:3], toe[:3])], self.unlock_distance, True):
            return held, True
        # Release: the output stays on the pinned point for this frame and at rest
        # (offset velocity = -toe velocity); the decay takes it from there.
        self.offset = [h - t for h, t in zip(held, toe)]
        self.offset_vel = [-0.0] * len(toe) if prev is None else [-((t - p) / dt) for t, p in zip(toe, prev)]
        if self.on_contact:
            self.offset_vel[2] = 0.0
        self._wait_lift = bool(contact)
        self.locked = False
        self.pinned = None
        return [t + o for t, o in zip(toe, self.offset)], False


def _speed(toe, prev, dt):
    """The toe's speed measured from the step before (inf on the first step: a
    foot cannot lock on the first step it is given)."""
    if prev is None:
        return math.inf
    v0, v1, v2 = [(t - p) / dt for t, p in zip(toe[:3], prev[:3])]
    return math.sqrt(v0 ** 2 + v1 ** 2 + v2 ** 2)     # np.float64's ** is the C pow, as Python's


def _length_below(d, limit, or_equal):
    """Whether the length of the 3-vector ``d`` (a list) is under ``limit`` (or
    equal, ``or_equal``) as numpy's ``sqrt(d @ d)`` says. Its dot product may
    add the three squares in any order, fused or not: each way is within 4
    units in the last place (relative, 1e-15) of the plain sum below, so only
    a length within 1e-12 (relative) of the limit is asked of numpy."""
    length = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    if abs(length - limit) <= 1e-12 * max(length, limit):
        a = np.array(d, dtype=np.float64)
        length = float(np.sqrt(a @ a))
    return length <= limit if or_equal else length < limit


TOUCHDOWN_HEIGHT = 0.01   # m: a toe this close above the planted toe height is down
TOUCHDOWN_AHEAD = 0.15    # s: how long before the data's contact a toe that is down may lock


def with_touchdowns(contacts, toe_heights, planted, dt, height=TOUCHDOWN_HEIGHT, ahead=TOUCHDOWN_AHEAD):
    """The contact flags (S,) with each contact begun where the toe came down,
    if it came down from the air less than ``ahead`` seconds before: the
    steps just before a contact whose toe is lower than ``planted`` +
    ``height`` count as contact when the step before them has the toe higher
    (a toe down since the last contact, or longer than ``ahead``, pivots or
    drags: it is left alone). A heel-first landing, or a jump between two
    rows that both land, puts the foot on the ground a few steps before the
    played data says contact; unlocked, it skates there."""
    given = np.asarray(contacts, dtype=bool)
    out = given.copy()
    low = np.asarray(toe_heights, dtype=np.float64) < planted + height
    n = int(round(ahead / dt))
    for start in np.flatnonzero(given[1:] & ~given[:-1]) + 1:
        i = start - 1
        while i >= 0 and low[i] and not given[i]:
            i -= 1
        if i >= 0 and not given[i] and start - 1 - i <= n:
            out[i + 1:start] = True
    return out


STANCE_HEIGHT = 0.02    # m: a toe this close above the planted toe height may stand
STANCE_SPEED = 1.5      # m/s: a toe on the ground slower than this (as baked) may stand
STANCE_REACH = 0.2      # m: a stance ends when the toe has gone this far from where it stood
STANCE_TURN = 0.3       # radians: or when the foot has turned this far (a longer hold snaps the ankle on release)
STANCE_AFTER = 0.1      # s: neither foot flagged this long before a foot stands (a walk's short gaps left alone)


def with_stance(contacts, toes, headings, planted, dt, height=STANCE_HEIGHT, speed=STANCE_SPEED, reach=STANCE_REACH,
                turn=STANCE_TURN, after=STANCE_AFTER):
    """The contact flags (S, 2) with a stance foot where neither foot has been
    in contact for more than ``after`` seconds: a toe (of ``toes`` (S, 2, 3), as
    baked) lower than ``planted`` + ``height`` and slower than ``speed``
    (horizontally, from the step before) stands (of two, the slower; ties: the
    left) until it leaves the ground, speeds up, has gone ``reach`` from where
    it stood or turned ``turn`` radians from its heading there (``headings``
    (S, 2), unwrapped); a foot whose stance ran out waits to leave the ground
    or speed up before it stands again. A run's
    flight has both toes up and is left alone; a take whose contacts were
    missed (feet sliding on the ground) gets one foot to hold, so the body
    does not glide."""
    given = np.asarray(contacts, dtype=bool)
    toes = np.asarray(toes, dtype=np.float64)
    v = np.zeros(toes.shape[:2])
    v[1:] = np.hypot(toes[1:, :, 0] - toes[:-1, :, 0], toes[1:, :, 1] - toes[:-1, :, 1]) / dt
    v[0] = v[1] if len(v) > 1 else 0.0
    none = ~given.any(axis=1)
    idx = np.arange(len(none))
    since = idx - np.maximum.accumulate(np.where(none, -1, idx))     # steps with neither foot down, so far
    ok = ((since > round(after / dt))[:, None] & (toes[:, :, 2] < planted + height) & (v < speed)).tolist()
    xy, speeds, yaw = toes[:, :, :2].tolist(), v.tolist(), np.asarray(headings, dtype=np.float64).tolist()
    out = given.copy()
    foot, start, start_yaw, barred = -1, None, 0.0, [False, False]
    for i, (can, vi) in enumerate(zip(ok, speeds)):
        barred = [b and c for b, c in zip(barred, can)]
        if foot >= 0 and can[foot]:
            if math.dist(xy[i][foot], start) < reach and abs(yaw[i][foot] - start_yaw) < turn:
                out[i, foot] = True
                continue
            barred[foot] = True         # out of reach: this foot waits to lift
        free = [f for f in (0, 1) if can[f] and not barred[f]]
        foot = -1 if not free else min(free, key=lambda f: (vi[f], f))
        if foot >= 0:
            start, start_yaw = xy[i][foot], yaw[i][foot]
            out[i, foot] = True
    return out


def run_foot_lock(contacts, toe_positions, toe_speeds, dt, **params):
    """Run a :class:`FootLock` over a whole take.

    ``contacts`` (T,) bools, ``toe_positions`` (T, 3) (or (T, 3 + k): k held values
    after the position, see the module notes), ``toe_speeds`` (T,) or None.
    Extra keyword arguments go to :class:`FootLock`. Returns
    ``(wanted (T, 3), locked (T,) bools, lock_count)``.
    """
    return run_foot_lock_kept(contacts, toe_positions, toe_speeds, dt, None, **params)[:3]


KEEP_EVERY = 32     # steps between the states run_foot_lock_kept keeps


@dataclass
class KeptLock:
    """What one :func:`run_foot_lock_kept` read and made, with the lock's state every :data:`KEEP_EVERY` steps."""

    params: tuple
    inputs: tuple           # contacts, toe positions, toe speeds (or None)
    wanted: np.ndarray
    locked: np.ndarray
    states: list            # (step, FootLock.state() at its start)


def run_foot_lock_kept(contacts, toe_positions, toe_speeds, dt, previous=None, **params):
    """:func:`run_foot_lock`, going on from the last state ``previous`` (a
    :class:`KeptLock` or None) kept at or before the first step whose inputs
    differ (bit for bit) from its own, with the same parameters; the steps
    before are copied. The result is the same as from the first step. Returns
    ``(wanted, locked, lock_count, KeptLock)``."""
    contacts = np.asarray(contacts, dtype=bool)
    toes = np.asarray(toe_positions, dtype=np.float64)
    if toes.ndim != 2 or toes.shape[1] < 3 or len(toes) != len(contacts):
        raise FootLockError(
            "Toe positions must be an array of shape (frames, 3) with one contact flag "
            "per frame (got %s positions and %d flags)." % (toes.shape, len(contacts)))
    if toe_speeds is not None and len(toe_speeds) != len(toes):
        raise FootLockError("Give one toe speed per frame (got %d for %d frames)."
                            % (len(toe_speeds), len(toes)))
    if not dt > 0.0:
        raise FootLockError("The time step must be a positive number of seconds (got %s)." % (dt,))
    if not np.all(np.isfinite(toes)):
        raise FootLockError("The toe position contains values that are not numbers.")
    lock = FootLock(**params)
    wanted = np.empty_like(toes)
    locked = np.zeros(len(toes), dtype=bool)
    speeds = [None] * len(toes) if toe_speeds is None else [float(v) for v in toe_speeds]
    flags = contacts.tolist()
    inputs = (contacts, toes, None if toe_speeds is None else np.asarray(toe_speeds, dtype=np.float64))
    key = (tuple(sorted(params.items())), float(dt))
    start, states = 0, []
    if previous is not None and previous.params == key:
        first = first_change(previous.inputs, inputs)
        kept = [k for k in previous.states if k[0] <= first]
        if kept:
            start, states = kept[-1][0], kept[:-1]
            lock.restore(kept[-1][1])
            wanted[:start], locked[:start] = previous.wanted[:start], previous.locked[:start]
    rows, out, advance = toes.tolist(), [False] * len(toes), lock._advance
    for i in range(start, len(toes)):
        if i % KEEP_EVERY == 0:
            states.append((i, lock.state()))
        rows[i], out[i] = advance(flags[i], rows[i], speeds[i], dt)
    if start < len(toes):
        wanted[start:], locked[start:] = rows[start:], out[start:]
    return wanted, locked, lock.lock_count, KeptLock(key, inputs, wanted.copy(), locked.copy(), states)


def ankle_target(ankle, toe, wanted_toe):
    """Where the ankle must go so the toe lands on ``wanted_toe`` with the foot's
    orientation unchanged: the ankle moved by the toe's correction. (..., 3)."""
    return (np.asarray(ankle, dtype=np.float64)
            + np.asarray(wanted_toe, dtype=np.float64) - np.asarray(toe, dtype=np.float64))
