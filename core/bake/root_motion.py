"""Stage 4 of the bake: the character's root moved by the played rows' own root
motion, pulled toward the spring character and clamped to the controller's path."""

import math

import numpy as np

from ..maths import springs
from . import look_ahead as la
from .rows import row_deltas, yaw_of


class RootMotion:
    """Stage 4: the character's root (ground position and yaw), moved by the
    played rows' own root motion, pulled toward the spring character and
    clamped to the controller's path."""

    def __init__(self, db, root_positions, root_quats, settings, dt, cache=None):
        # The rows' tables depend on the database and two settings only: made once
        # per database through ``cache(key, make)`` when the caller gives one.
        make = (lambda: _row_tables(db, root_positions, root_quats, settings.root.planted_adjustment,
                                    settings.root.turn_like_data))
        key = "root_motion_rows_%r_%r" % (settings.root.planted_adjustment, settings.root.turn_like_data)
        self.dpos, self.dyaw, self.share, self.turn_cap, self._steps = make() if cache is None else cache(key, make)
        self.ratio, self.clamp, self.clamp_a = settings.root.adjustment_ratio, settings.root.clamp_distance,\
            settings.root.clamp_angle
        self.alpha = 1.0 - math.exp(-math.log(2.0) / settings.root.adjustment_halflife * dt)
        # With the look-ahead on, the heading may also be corrected at a small rate of its own.
        self.turn_floor = la.TUNING.heading_mend_rate * dt if settings.look_ahead.on else 0.0

    def advance(self, px, py, yaw, row, sim_xy, sim_yaw, rate=1.0):
        """One step along the row being left: its own root motion (times the
        time warp's ``rate``), in our frame, then the pull toward the spring
        character (at most ratio * own motion)."""
        # numpy's cos, sin and hypot, the sums on Python floats (the same bits, without numpy's cost per number).
        c, sn = float(np.cos(yaw)), float(np.sin(yaw))
        lx, ly, dyaw_row, share = self._steps[row]
        if rate != 1.0:
            lx, ly, dyaw_row = lx * rate, ly * rate, dyaw_row * rate
        vx, vy = c * lx - sn * ly, sn * lx + c * ly
        px += vx
        py += vy
        yaw += dyaw_row
        alpha, ratio = self.alpha, self.ratio * share
        ax, ay = (sim_xy[0] - px) * alpha, (sim_xy[1] - py) * alpha
        limit = ratio * float(np.hypot(vx, vy))
        mag = float(np.hypot(ax, ay))
        if mag > limit:
            ax, ay = ax * limit / max(mag, 1e-12), ay * limit / max(mag, 1e-12)
        px += ax
        py += ay
        dyw = springs.wrap_float(float(sim_yaw - yaw))
        limit_a = ratio * abs(dyaw_row) + self.turn_floor
        step_a = float(min(max(dyw * alpha, -limit_a), limit_a))     # np.clip's value, without numpy
        yaw += capped_turn(dyaw_row, step_a, self.turn_cap) - dyaw_row
        return px, py, yaw

    def clamped(self, px, py, yaw, ctrl_xy, sim_yaw):
        """Within the clamp distance of the controller (the path the user asked
        for; the spring character only smooths it) and the clamp angle of the
        wanted facing."""
        clamp = self.clamp
        ex, ey = px - ctrl_xy[0], py - ctrl_xy[1]
        d = float(np.hypot(ex, ey))
        if d > clamp:
            px, py = ctrl_xy[0] + ex * clamp / d, ctrl_xy[1] + ey * clamp / d
        dyw = springs.wrap_float(float(yaw - sim_yaw))
        if abs(dyw) > self.clamp_a:
            yaw = sim_yaw + (1.0 if dyw > 0.0 else -1.0) * self.clamp_a
        return px, py, yaw


TURN_PERCENTILE = 99.9   # the root's fastest turn per step: this percentile of the database's own


def _row_tables(db, root_positions, root_quats, planted_adjustment, turn_like_data):
    """Per row: its root step (N, 3) and yaw change (N,), the share of the pull
    allowed (less while the data plants a foot), the fastest turn a step may
    take (the data's own, corrections included; inf when not limited), and the
    same numbers as Python floats, read once per step."""
    dpos, drot = row_deltas(db, root_positions, root_quats)
    dyaw = yaw_of(drot)
    planted = db.contacts.any(axis=1) if db.contacts is not None else np.zeros(db.num_rows, dtype=bool)
    share = np.where(planted, planted_adjustment, 1.0)
    turn_cap = float(np.percentile(np.abs(dyaw), TURN_PERCENTILE)) if turn_like_data else np.inf
    steps = [(x, y, a, sh) for (x, y), a, sh in zip(dpos[:, :2].tolist(), dyaw.tolist(), share.tolist())]
    return dpos, dyaw, share, turn_cap, steps


def capped_turn(data, correction, cap):
    """A step's whole yaw change: the data's own ``data`` plus ``correction``,
    held within ``cap`` (radians per step) unless the data alone turns faster
    (then a correction may only slow it)."""
    cap = max(cap, abs(data))
    return min(max(float(data + correction), -cap), cap)
