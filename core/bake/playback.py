"""Stages 2 and 4 step by step: which row plays on each step (searches, jumps,
the time warp's playback rate) and where the root stands."""

from dataclasses import dataclass

import math

import numpy as np

from ..database.search import keep_playing
from . import time_warp as twp
from .rows import next_rows


@dataclass
class Played:
    """Stages 2 and 4, per step."""

    rows: np.ndarray
    searched: np.ndarray
    jumped: np.ndarray
    cost: np.ndarray
    root_pos: np.ndarray
    root_yaw: np.ndarray
    phase: np.ndarray = None     # (S,) time warp: share of the way to the next row (None: off)
    rate: np.ndarray = None      # (S,) time warp: rows advanced on the step
    states: list = None          # PlayState every SNAPSHOT_EVERY steps (to go on from one)


def sharp_change(want_v, want_speed, v, speed, settings):
    """Has the wanted velocity changed speed or turned enough to search at once?
    ``want_v``, ``v``: (x, y) velocities, Python floats; ``want_speed``, ``speed``
    their lengths (np.hypot, computed for every step at once)."""
    turn = math.atan2(want_v[0] * v[1] - want_v[1] * v[0], want_v[0] * v[0] + want_v[1] * v[1])
    return (abs(speed - want_speed) > settings.search.force_search_speed
            or (speed > 0.3 and want_speed > 0.3 and abs(turn) > settings.search.force_search_angle))


@dataclass
class PlayState:
    """Everything :func:`play_rows` carries from one step to the next, at the
    start of step ``s``: its own variables, the matcher's (the look-ahead's
    history) and the time warp's; enough to go on from there."""

    s: int
    own: tuple              # (row playing, x, y, yaw, last search step, wanted velocity and speed, rate)
    matcher: object
    warp: object


SNAPSHOT_EVERY = 32         # steps between the states play_rows keeps


def _restore(resume, arrays, matcher, warp):
    """Go back to a kept state: ``resume`` (PlayState, the Played it was kept
    in); the steps before it copied into ``arrays`` (rows, searched, jumped,
    cost, root positions and yaws, phase, rates; None ones skipped), the
    matcher and the time warp restored. Returns (first step, states kept, own variables)."""
    state, before = resume
    first = state.s
    kept = (before.rows, before.searched, before.jumped, before.cost, before.root_pos, before.root_yaw,
            before.phase, before.rate)
    for mine, theirs in zip(arrays, kept):
        if mine is not None:
            mine[:first] = theirs[:first]
    matcher.restore(state.matcher)
    if warp is not None:
        warp.restore(state.warp)
    return first, [k for k in before.states if k.s <= first], state.own


def play_rows(db, ctrl, sim_pos, sim_yaw, sim_vel, matcher, root, settings, fps, warp=None, resume=None):
    """Stages 2 and 4, step by step: search on schedule, at a clip end, or when
    the wanted motion changes sharply; a best row close to the playing one is no
    jump; the root follows. ``warp`` (core.bake.time_warp.TimeWarp or None) sets the
    playback rate. ``resume``: (a :class:`PlayState`, the :class:`Played` it was
    kept in) to go on from that step, the steps before copied (their inputs
    must be those of that run). A generator yielding progress (up to 0.8),
    returning :class:`Played`, whose ``states`` hold a state every
    :data:`SNAPSHOT_EVERY` steps."""
    S = len(ctrl)
    nxt = next_rows(db)
    rows, searched, jumped = np.empty(S, dtype=np.int64), np.zeros(S, dtype=bool), np.zeros(S, dtype=bool)
    cost, root_pos, root_yaw = np.zeros(S), np.empty((S, 3)), np.empty(S)
    interval = max(1, int(round(settings.search.search_interval * fps)))
    phase, rates = (None, None) if warp is None else (np.zeros(S), np.ones(S))
    vel = np.asarray(sim_vel[:, :2], dtype=np.float64)
    speed = np.hypot(vel[:, 0], vel[:, 1]).tolist()     # the same bits as np.hypot step by step
    vel = vel.tolist()
    # What each step reads, as Python numbers (float64 and int64 values: the same arithmetic).
    sim_xy, yaws, ctrl_xy = (np.asarray(a, dtype=np.float64).tolist() for a in (sim_pos[:, :2], sim_yaw, ctrl[:, :2]))
    nxt_of, playable, clip_of = nxt.tolist(), np.asarray(matcher.playable).tolist(), db.clip_index.tolist()
    playable_at = getattr(matcher, "playable_at", None)     # per step, when the tag query changes over the bake
    states = []
    if resume is None:
        first = 0
        cur, px, py, yaw = None, float(sim_pos[0, 0]), float(sim_pos[0, 1]), float(sim_yaw[0])
        last_search, want_v, want_speed, rate = -interval, vel[0], speed[0], 1.0
    else:
        first, states, own = _restore(resume, (rows, searched, jumped, cost, root_pos, root_yaw, phase, rates),
                                      matcher, warp)
        cur, px, py, yaw, last_search, want_v, want_speed, rate = own
    # Each step's row, cost, root and time warp, kept in lists and put in the arrays at the end.
    step_rows, step_cost, step_x, step_y, step_yaw, step_phase, step_rate = [], [], [], [], [], [], []
    last_cost = float(cost[first - 1]) if first > 0 else 0.0     # a step without a search keeps the last cost
    for s in range(first, S):
        if s % 256 == 0:
            yield 0.8 * s / S
        if s % SNAPSHOT_EVERY == 0 and (resume is None or s > first):   # the state at ``first`` is kept
            states.append(PlayState(s, (cur, px, py, yaw, last_search, want_v, want_speed, rate), matcher.state(),
                                    None if warp is None else warp.state()))
        if cur is not None:
            rate = 1.0 if warp is None else warp.step_rate(s, cur)
            px, py, yaw = root.advance(px, py, yaw, cur, sim_xy[s], yaws[s], rate)
            cur = nxt_of[cur] if warp is None else warp.advance(cur)
        px, py, yaw = root.clamped(px, py, yaw, ctrl_xy[s], yaws[s])
        at_end = cur is not None and (nxt_of[cur] == cur or not (playable if playable_at is None
                                                                  else playable_at[s])[cur])
        if cur is None or s - last_search >= interval or at_end \
                or sharp_change(want_v, want_speed, vel[s], speed[s], settings):
            best, best_cost = matcher.search(s, cur, cur is not None and not at_end, (px, py, yaw))
            searched[s] = True
            last_search = s
            want_v, want_speed = vel[s], speed[s]
            last_cost = best_cost
            same_clip = cur is not None and clip_of[best] == clip_of[cur]
            if cur is None or not (same_clip and keep_playing(cur, best, True, settings.search.keep_window)) \
                    or (at_end and best != cur):
                if cur is not None:
                    jumped[s] = True
                cur = int(best)
                if warp is not None:
                    warp.restart()
        if warp is None:
            matcher.played(cur, (px, py, yaw))
        else:
            matcher.played(cur, (px, py, yaw), rate=rate, moved_on=not jumped[s])
            step_phase.append(warp.phase)
            step_rate.append(rate)
        step_rows.append(cur)
        step_cost.append(last_cost)
        step_x.append(px)
        step_y.append(py)
        step_yaw.append(yaw)
    rows[first:], cost[first:], root_yaw[first:] = step_rows, step_cost, step_yaw
    root_pos[first:, 0], root_pos[first:, 1], root_pos[first:, 2] = step_x, step_y, 0.0
    if warp is not None:
        phase[first:], rates[first:] = step_phase, step_rate
    return Played(rows=rows, searched=searched, jumped=jumped, cost=cost, root_pos=root_pos, root_yaw=root_yaw,
                   phase=phase, rate=rates, states=states)


def time_warp_state(db, root, sim_vel, settings, fps, cache=None):
    """The playback rate's state (core.bake.time_warp), or None when the knob is
    off. The rows' speeds and next rows (Python lists) go through ``cache(key,
    make)`` when given (they depend on the database alone)."""
    if not settings.time_warp.on:
        return None

    def rows():
        speeds = twp.row_speeds(root.dpos, db.clip_index, db.clip_offsets, fps)
        return [float(v) for v in speeds], [int(v) for v in next_rows(db)]

    speeds, nxt = rows() if cache is None else cache("time_warp_rows_%r" % fps, rows)
    wanted = np.hypot(sim_vel[:, 0], sim_vel[:, 1])
    return twp.TimeWarp(speeds, nxt, wanted, settings.time_warp.time_warp, 1.0 / fps)
