"""Time warping: play the rows somewhat faster or slower so
the character's own root speed meets the speed the path asks for, instead of
the pull toward the path dragging the feet.

Playback keeps a fractional position: a row and a phase in [0, 1) toward the
next row of its clip. Each step advances it by a rate, chosen from the spring
character's wanted speed over the played rows' own root speed (averaged over
about a step, so one gait cycle's surges are not undone), eased toward and
limited in how fast it changes so a gait does not stutter, and left at 1 where
the data stands still (no speed to scale). The root moves by the rows' motion
times the rate; poses are blended between the row and the next (locations
linearly, rotations by normalised linear blending), and contacts are the
nearest row's. A jump starts the new row at phase 0; at a clip end the phase
stays 0 (the last row holds).
"""

import math

import numpy as np

from ..maths import transforms as tf

DATA_SPEED = (0.2, 0.5)   # m/s of the played rows' own speed over which the warp fades in
SPEED_WINDOW = 0.5        # s: the rows' own speed is averaged over this centred window of their clip
RATE_HALFLIFE = 0.15      # s: the rate eases toward its target with this half-life
RATE_SLEW = 0.75          # 1/s: the rate changes by at most this much a second
MAX_TIME_WARP = 0.5       # the knob's largest value (rates 0.5-2)


def rate_limits(time_warp):
    """(slowest, fastest) playback rate of the knob ``time_warp`` (0.2: 0.8-1.25)."""
    return 1.0 - time_warp, 1.0 / (1.0 - time_warp)


def row_speeds(row_steps, clip_index, clip_offsets, fps, window=SPEED_WINDOW):
    """(N,) each row's own ground speed (m/s), averaged over the centred window
    of rows of its clip (cut at the clip's ends)."""
    speed = np.hypot(row_steps[:, 0], row_steps[:, 1]) * fps
    n = len(speed)
    half = max(1, int(round(0.5 * window * fps)))
    c = np.concatenate([[0.0], np.cumsum(speed)])
    i = np.arange(n)
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    lo = np.maximum(i - half, offsets[clip_index])
    hi = np.minimum(i + half, offsets[np.asarray(clip_index) + 1] - 1)
    return (c[hi + 1] - c[lo]) / (hi - lo + 1)


class TimeWarp:
    """The playback position and rate, step by step (plain Python floats: this
    runs on every step of the bake)."""

    def __init__(self, speeds, nxt, wanted_speed, time_warp, dt):
        # Lists are taken as they are (shared, never changed here).
        self.speeds = speeds if type(speeds) is list else [float(v) for v in speeds]
        self.nxt = nxt if type(nxt) is list else [int(v) for v in nxt]
        self.want = [float(v) for v in wanted_speed]
        self.lo, self.hi = rate_limits(time_warp)
        self.ease = 1.0 - math.exp(-math.log(2.0) / RATE_HALFLIFE * dt)
        self.slew = RATE_SLEW * dt
        self.rate, self.phase = 1.0, 0.0

    def target(self, s, row):
        """The rate step ``s`` asks of row ``row``: the wanted speed over the
        row's own, within the limits, faded to 1 where the data stands still."""
        data = self.speeds[row]
        fade = min(max((data - DATA_SPEED[0]) / (DATA_SPEED[1] - DATA_SPEED[0]), 0.0), 1.0)
        if fade <= 0.0:
            return 1.0
        ratio = min(max(self.want[s] / data, self.lo), self.hi)
        return 1.0 + (ratio - 1.0) * fade

    def step_rate(self, s, row):
        """The rate of step ``s`` (row ``row`` playing): eased toward its target,
        changed by at most the slew limit."""
        change = (self.target(s, row) - self.rate) * self.ease
        self.rate += min(max(change, -self.slew), self.slew)
        return self.rate

    def advance(self, row):
        """The row reached after advancing by the current rate (the phase kept)."""
        nxt = self.nxt
        phase = self.phase + self.rate
        while phase >= 1.0 and nxt[row] != row:
            row, phase = nxt[row], phase - 1.0
        self.phase = phase if nxt[row] != row else 0.0
        return row

    def restart(self):
        """A jump: the new row plays from its start."""
        self.phase = 0.0

    def state(self):
        """(rate, phase): what carries from one step to the next."""
        return self.rate, self.phase

    def restore(self, state):
        self.rate, self.phase = state


def offset_positions(rows, phase, add, nxt):
    """Rows and phases ``add`` (S,) rows past ``(rows, phase)`` along each clip
    (a clip's last row holds, phase 0)."""
    r, ph = np.asarray(rows, dtype=np.int64).copy(), np.asarray(phase, dtype=np.float64) + add
    while True:
        move = (ph >= 1.0) & (nxt[r] != r)
        if not move.any():
            break
        r[move], ph[move] = nxt[r[move]], ph[move] - 1.0
    return r, np.where(nxt[r] == r, 0.0, ph)


def blend_poses(pose_locations, pose_rotations, rows, phase, nxt):
    """Poses between each row and the next of its clip at ``phase`` (S,):
    locations linear, rotations normalised linear (the shorter way)."""
    a = np.asarray(phase, dtype=np.float64)[:, None, None]
    l0, l1 = pose_locations[rows].astype(np.float64), pose_locations[nxt[rows]].astype(np.float64)
    q0, q1 = pose_rotations[rows].astype(np.float64), pose_rotations[nxt[rows]].astype(np.float64)
    q1 = np.where(np.sum(q0 * q1, axis=-1, keepdims=True) < 0, -q1, q1)
    return l0 * (1.0 - a) + l1 * a, tf.quat_normalize(q0 * (1.0 - a) + q1 * a)


def warped_rows(pose_locations, pose_rotations, rows, phase, rate, nxt, jumped=None):
    """Stand-in rows for the inertialization (core.bake): per step, its blended
    pose and where playing on would be one and two steps later, so the pose's
    velocity and what a jump leaves are those of the warped playback. Returns
    (locations (n, J, 3), rotations (n, J, 4), the step's rows (S,), the next
    row of each (n,)). ``jumped`` (S,) bools: the later positions are made only
    where a jump reads them (the steps before a jump and the jumps' own), the
    others standing at their own end; None: on every step."""
    S = len(rows)
    rate = np.asarray(rate, dtype=np.float64)
    if jumped is None:
        need = np.arange(S)
    else:
        at = np.flatnonzero(np.asarray(jumped)[1:]) + 1
        need = np.unique(np.concatenate([at - 1, at]))
    n = len(need)
    locs = np.empty((S + 2 * n,) + pose_locations.shape[1:])
    rots = np.empty((S + 2 * n,) + pose_rotations.shape[1:])
    locs[:S], rots[:S] = blend_poses(pose_locations, pose_rotations, rows, phase, nxt)
    for k in (1, 2):
        r, ph = offset_positions(rows[need], phase[need], k * rate[need], nxt)
        part = slice(S + (k - 1) * n, S + k * n)
        locs[part], rots[part] = blend_poses(pose_locations, pose_rotations, r, ph, nxt)
    vnxt = np.arange(S + 2 * n)
    vnxt[need] = S + np.arange(n)                # a step, then one step later, then two (which stands at its end)
    vnxt[S:S + n] = S + n + np.arange(n)
    return locs, rots, np.arange(S), vnxt


def nearest_rows(rows, phase, nxt):
    """The row nearest each playback position (its contacts count)."""
    return np.where(np.asarray(phase) >= 0.5, nxt[rows], rows)
