"""Look-ahead search for the bake: choose rows with the path's future in view.

The greedy search (core.bake.matching's ``Matcher``) asks one question at each search
point: which row's features (the playing pose and a second of predicted
trajectory) are nearest? A bake knows the whole path, so here each of the K
nearest rows, and the row playing on, is also judged by what playing it would
do over the next ``seconds``:

- **Path**: the candidate's own root motion is played forward from where the
  character stands now (world space, its yaw included) and compared with the
  spring character's future positions and headings at a few sample times. The
  difference is what the root pull or the clamp would have to make up, and
  while a foot is planted, that is what drags the foot.
- **Dead ends**: a candidate that runs into its clip's end or into rows the
  search may not play within the horizon would force another jump there.
- **Contact phase** (jumps only): a jump should not cut a stance or a swing (a
  foot in contact in the row playing on should be in contact in the candidate,
  and the other way round), and should land at the same point of the step: the
  time each foot has already spent in its state in the bake should match the
  time it has spent in that state in the candidate's take. A jump that keeps a
  foot planted while restarting its stance makes stances longer than any step
  of the take, and the body then walks away from the held foot.

- **Heading**: with the look-ahead on, the root may also turn toward the
  path's heading by itself at up to ``heading_mend_rate`` (core.bake.root_motion),
  so heading errors it will mend by each sample time cost nothing; without
  that, a body that lags a turn (a start after a stop) could only be put right
  by rows that turn, and never was.
- **Pieces get to play**: a jump soon after the last one costs more
  (``rejump_cost``, fading over ``rejump_seconds``), so the bake does not hop from
  piece to piece at every search.

Costs are in the units of the feature search (squared, normalised), so the
feature cost (how well the candidate joins the pose playing now and matches the
near trajectory) and these terms add up. Everything is vectorised over the
candidates; the tables are built once per bake, or once per database when the
bake is given a cache (core.bake.matching).
"""

import math
from dataclasses import dataclass

from types import SimpleNamespace

import numpy as np

from ..maths import same_everywhere, springs
from ..maths import transforms as tf


@dataclass(frozen=True)
class LookAheadTuning:
    """The look-ahead's cost terms and limits (tuned on the path suite; not shown to users).
    Costs are in the feature search's units (squared, normalised)."""

    path_error_scale: float = 0.15       # m: a path error this large over the horizon costs 1
    heading_error_scale: float = 0.035   # rad: a heading error this large over the horizon costs 1
    heading_error_free: float = 0.02     # rad: heading errors up to this cost nothing (a gait's sway, small offsets)
    heading_mend_rate: float = 0.8       # rad/s: the root's heading may turn toward the path this fast beyond the pull
    dead_end_cost: float = 4.0           # a horizon that runs wholly past playable rows
    margin_scale: float = 5.0            # the bake's jump margin counts this much here (the future's costs are larger)
    jump_cost: float = 0.1               # any jump (a blend, however alike the poses): a near tie plays on
    rejump_seconds: float = 0.4          # s: a jump this soon after the last one ...
    rejump_cost: float = 3.0             # ... costs up to this much more (fading with the time since)
    contact_flip_cost: float = 6.0       # per foot whose contact state a jump changes
    phase_scale: float = 0.15            # s: a difference this large in time spent in the contact state costs 1
    phase_cap: float = 0.6               # s: longer times in one state count as this (standing, long swings)
    samples: int = 6                     # sample times over the horizon
    candidates: int = 24                 # rows ranked by their feature cost that are judged by their future
    stance_drift_free: float = 0.15      # m: a planted foot may be dragged this far in one stance at no cost
    stance_drift_scale: float = 0.02     # m: each sample of a stance dragged this much farther costs 1


TUNING = LookAheadTuning()
T = TUNING      # short, for the cost formulas below
# The matcher's candidate selection (core.bake.matching) reads these by name.
CANDIDATES, JUMP_COST, MARGIN_SCALE = TUNING.candidates, TUNING.jump_cost, TUNING.margin_scale


def _run_ahead(db, allowed):
    """(N,) number of consecutive playable rows from each row on, within its clip
    (0 for a row that may not be played)."""
    n = db.num_rows
    out = np.zeros(n, dtype=np.int64)
    ok = np.asarray(allowed, dtype=bool)
    for c in range(len(db.clip_offsets) - 1):
        a, b = int(db.clip_offsets[c]), int(db.clip_offsets[c + 1])
        # Distance to the next blocked row (or the clip's end) after each row.
        blocked = np.flatnonzero(~ok[a:b])
        nxt_block = np.full(b - a, b - a, dtype=np.int64)
        if len(blocked):
            pos = np.searchsorted(blocked, np.arange(b - a))
            has = pos < len(blocked)
            nxt_block[has] = blocked[pos[has]]
        out[a:b] = nxt_block - np.arange(b - a)
    return out


def _time_in_state(db, cap):
    """(N, 2) frames each foot has spent in its contact state at each row, within
    its clip, at most ``cap``."""
    n = db.num_rows
    if db.contacts is None:
        return np.full((n, 2), cap, dtype=np.int64)
    c = np.asarray(db.contacts, dtype=bool)
    starts = np.zeros((n, 2), dtype=bool)
    starts[1:] = c[1:] != c[:-1]
    starts[np.asarray(db.clip_offsets[:-1], dtype=np.int64)] = True
    idx = np.arange(n)[:, None]
    last_start = np.maximum.accumulate(np.where(starts, idx, 0), axis=0)
    return np.minimum(idx - last_start, cap)


def look_ahead_tables(db, root_positions, root_quats, allowed, fps, seconds, body_turn=None):
    """The :class:`LookAhead`'s tables, {attribute: value}: they depend on the
    database, the rows allowed, the rate and the horizon only (never changed
    by a bake, so one set may serve many)."""
    t = SimpleNamespace()
    n = db.num_rows
    t.db, t.fps = db, float(fps)
    t.offsets = np.unique(np.maximum(1, np.rint(np.linspace(seconds / T.samples, seconds, T.samples) * fps)
                                        .astype(np.int64)))
    t.run = _run_ahead(db, allowed)
    # Each row's dead-end cost: the share of the sample times past its playable rows (future_cost's sum).
    t.dead_cost = T.dead_end_cost * (np.add.reduce(t.offsets[None, :] >= t.run[:, None], axis=1, dtype=np.float64)
                                     / len(t.offsets))
    # Heading errors the root mends by itself by each sample time, and a free margin.
    t.mend = T.heading_error_free + T.heading_mend_rate * t.offsets / fps
    ends = np.asarray(db.clip_offsets[1:], dtype=np.int64)[db.clip_index] - 1
    ahead = np.minimum(np.arange(n)[:, None] + t.offsets[None, :], ends[:, None])
    pos = np.asarray(root_positions, dtype=np.float64)
    yaw = 2.0 * same_everywhere.arctan2(np.asarray(root_quats)[:, 3], np.asarray(root_quats)[:, 0])
    d = pos[ahead, :2] - pos[:, None, :2]
    c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
    # Each row's future root, in the row's own ground frame: (N, M) x, y and yaw change.
    t.fxy = np.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]], axis=-1)
    # The body's facing (hip joints) rather than the root's: the facing a viewer sees.
    turn = np.zeros(n) if body_turn is None else np.asarray(body_turn, dtype=np.float64)
    t.fyaw = springs.wrap_angle(yaw[ahead] + turn[ahead] - yaw[:, None])
    one = np.minimum(np.arange(n) + 1, ends)
    d1 = pos[one, :2] - pos[:, :2]
    c1, s1 = np.cos(yaw), np.sin(yaw)
    t.step_xy = np.column_stack([c1 * d1[:, 0] + s1 * d1[:, 1], -s1 * d1[:, 0] + c1 * d1[:, 1]])
    t.cap = int(round(T.phase_cap * fps))
    t.in_state = _time_in_state(db, t.cap)
    t.contacts = (np.asarray(db.contacts, dtype=bool) if db.contacts is not None
                  else np.zeros((n, 2), dtype=bool))
    t.ahead_contacts = t.contacts[ahead]          # (N, M, 2)
    # Not in contact at a sample time or at the one before (the row itself before the first).
    t.lifted = ~(t.ahead_contacts & np.concatenate([t.contacts[:, None], t.ahead_contacts[:, :-1]], axis=1))
    t.contact_list = t.contacts.tolist()          # per row [left, right]
    # Per row and foot: its state for the jump cost, contact * (cap + 1) + time in it.
    t.foot_state = t.contacts * (t.cap + 1) + np.asarray(t.in_state, dtype=np.int64)
    t.step_list = t.step_xy.tolist()
    return vars(t)


class LookAhead:
    """Tables of every row's future (root motion over the horizon, playable rows
    ahead, time in contact state) and the ranking of candidates with them."""

    def __init__(self, db, root_positions, root_quats, allowed, fps, seconds, body_turn=None, tables=None):
        # ``tables``: what look_ahead_tables returned for these arguments (made once per database by a caller).
        self.__dict__.update(tables if tables is not None else
                             look_ahead_tables(db, root_positions, root_quats, allowed, fps, seconds, body_turn))
        self.played_contacts = None         # [left, right] contact of the row played last
        self.played_time = [0, 0]           # per foot: steps in its contact state, at most ``cap``
        self.drift = [[0.0, 0.0], [0.0, 0.0]]   # per foot: how far the root was moved off the played rows' motion
        self.last = None                    # (row, x, y, yaw) of the previous step
        self.since_jump = 10 ** 9           # steps since the played rows last jumped
        self._gathered_for, self._gathered = None, None
        self._terms_cache = {}

    def played(self, row, root, rate=1.0, moved_on=None):
        """Note the row played on this step and where the root is (the bake's own
        time in each foot's state, and how far the root has been moved, beyond
        the rows' own motion, since each planted foot planted). Plain Python:
        this runs on every step. Under a time warp, ``rate`` scales the rows'
        motion and ``moved_on`` says the rows played on (no jump)."""
        c = self.contact_list[row]
        if self.played_contacts is None:
            self.played_time = [int(v) for v in self.in_state[row]]
        else:
            prow, px, py, pyaw = self.last
            cs, sn = math.cos(pyaw), math.sin(pyaw)
            lx, ly = self.step_list[prow]
            if rate != 1.0:
                lx, ly = lx * rate, ly * rate
            mx = root[0] - px - (cs * lx - sn * ly)
            my = root[1] - py - (sn * lx + cs * ly)
            for f in range(2):
                same = c[f] == self.played_contacts[f]
                self.played_time[f] = min(self.played_time[f] + 1, self.cap) if same else 0
                self.drift[f] = [self.drift[f][0] + mx, self.drift[f][1] + my] if same and c[f] else [0.0, 0.0]
        if self.last is not None:
            on = row == self.last[0] + 1 if moved_on is None else moved_on
            self.since_jump = self.since_jump + 1 if on else 0
        self.played_contacts = c
        self.last = (row, root[0], root[1], root[2])

    HISTORY = ("played_contacts", "played_time", "drift", "last", "since_jump")

    def state(self):
        """What :meth:`played` remembers (a copy), to go on from later."""
        return _history_copy({name: getattr(self, name) for name in self.HISTORY})

    def restore(self, state):
        for name, value in _history_copy(state).items():
            setattr(self, name, value)

    def reach(self):
        """Steps ahead of the step searched that a search reads (the spring character's future)."""
        return int(self.offsets.max())

    def future_cost(self, rows, root, sim_pos, sim_yaw, s):
        """(K,) cost of playing each of ``rows`` from the root ``(x, y, yaw)`` at step
        ``s`` over the horizon, against the spring character's future."""
        px, py, yaw = root
        at = np.minimum(s + self.offsets, len(sim_pos) - 1)
        c, sn = np.cos(yaw), np.sin(yaw)
        f, here = self.fxy[rows], np.array([px, py])        # (K, M, 2): x and y side by side
        # The path error: the candidate's root played from here less the spring character's
        # (per coordinate the operations of px + c * fx - sn * fy - sim_x and py + sn * fx + c * fy - sim_y).
        w = here + f[..., :1] * np.array([c, sn]) + f[..., 1:] * np.array([-sn, c]) - sim_pos[at, :2]
        dyaw = springs.wrap_angle(yaw + self.fyaw[rows] - sim_yaw[at])
        M = len(self.offsets)       # means over the horizon: np.mean's own sum and division, without its overhead
        # The path error's change from each sample to the next (from the error now to the first): np.diff's.
        steps = np.empty_like(w)
        np.subtract(w[:, 0], here - sim_pos[s, :2], out=steps[:, 0])
        np.subtract(w[:, 1:], w[:, :-1], out=steps[:, 1:])
        w *= w
        return (np.add.reduce(w[..., 0] + w[..., 1], axis=1) / M / T.path_error_scale ** 2
                + np.add.reduce(np.maximum(np.abs(dyaw) - self.mend, 0.0) ** 2, axis=1) / M
                / T.heading_error_scale ** 2
                + self.dead_cost[rows]
                + self._stance_drift(rows, steps))

    def _stance_drift(self, rows, steps):
        """(K,) cost of dragging planted feet: within each stance of each foot over
        the horizon (the stance playing now included), the root must be moved off
        the candidate's own motion by the change of its path error, ``steps``
        (K, M, 2) from sample to sample; beyond ``stance_drift_free`` the held foot
        stretches the leg or lets go. Both feet at once; the sums are added in a
        fixed order (same choices)."""
        K, M = steps.shape[:2]
        on = self.contacts[rows]                                       # (K, 2)
        played = np.zeros(2, dtype=bool) if self.played_contacts is None else np.array(self.played_contacts)
        drift = np.where((on & played)[:, :, None], np.asarray(self.drift)[None, :, :], 0.0)   # (K, foot, xy)
        ahead = self.ahead_contacts[rows]                               # (K, M, 2)
        lifted = self.lifted[rows].transpose(1, 0, 2)[:, :, :, None]       # (M, K, foot, 1)
        steps = steps.transpose(1, 0, 2)[:, :, None, :]                     # (M, K, 1, xy)
        drifts = np.empty((M, K, 2, 2))
        for j in range(M):      # each sample's drift carries on from the last while the foot stays planted
            drift = np.add(drift, steps[j], out=drifts[j])
            np.copyto(drift, 0.0, where=lifted[j])
        over = np.maximum(tf.row_norm(drifts) - T.stance_drift_free, 0.0) / T.stance_drift_scale   # (M, K, foot)
        terms = np.where(ahead.transpose(1, 0, 2), over * over, 0.0) / M
        # Foot by foot, sample by sample, added one after another (accumulate adds in order; the
        # terms are never -0, so starting from them rather than from 0 changes no bit).
        return np.add.accumulate(terms.transpose(2, 0, 1).reshape(2 * M, K), axis=0)[-1]

    def jump_cost(self, rows, on_row):
        """(K,) contact-phase cost of jumping to each of ``rows`` instead of playing
        on to ``on_row``: flipped contact states, and a different time spent in
        the state. Each foot's term depends on its state (contact, time in it) alone,
        so it is read from a table of every state's term (the same operations)."""
        if rows is not self._gathered_for:      # the matcher asks about the same rows every time
            keys = self.foot_state[rows]
            self._gathered = (np.ascontiguousarray(keys[:, 0]), np.ascontiguousarray(keys[:, 1]))
            self._gathered_for = rows
        left, right = self._gathered
        on = self.contact_list[on_row]
        soon = T.rejump_cost * max(0.0, 1.0 - self.since_jump / (T.rejump_seconds * self.fps))
        out = np.add(self._foot_terms(self.played_time[0], on[0]).take(left),
                     self._foot_terms(self.played_time[1], on[1]).take(right))
        return np.add(T.jump_cost + soon, out, out=out)

    def _foot_terms(self, played_time, on):
        """(2 (cap + 1),) one foot's jump cost for each state ``contact * (cap + 1) + time
        in it`` of the row jumped to, the bake's foot ``played_time`` steps in its state
        and ``on`` the contact of the row playing on (kept, few ever made)."""
        key = (played_time, on)
        terms = self._terms_cache.get(key)
        if terms is None:
            gap = (played_time - np.arange(self.cap + 1, dtype=np.int64)) / (T.phase_scale * self.fps)
            near = np.minimum(gap * gap, T.contact_flip_cost)
            flip = np.full(self.cap + 1, T.contact_flip_cost)
            terms = np.concatenate([near, flip] if not on else [flip, near])
            self._terms_cache[key] = terms
        return terms


def _history_copy(history):
    """A copy of :meth:`LookAhead.state`'s history (what copy.deepcopy makes of it,
    without its cost: lists of numbers, a tuple of numbers, numbers)."""
    out = dict(history)
    if out["played_contacts"] is not None:
        out["played_contacts"] = list(out["played_contacts"])
    out["played_time"] = list(out["played_time"])
    out["drift"] = [list(d) for d in out["drift"]]
    return out


def tie_order(db):
    """(N,) each row's place in the order that breaks ties between equal costs:
    the lowest frame (within its clip) first, then the lowest clip. A clip added
    twice thus offers both copies among the candidates, not only the first."""
    order = np.lexsort((db.clip_index, db.frame_index))
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    return place


def smallest(costs, k, order=None, cut=None):
    """Indices of the ``k`` smallest of ``costs`` (all when fewer), in index order.
    Among equal costs at the cut, those lowest in ``order`` (default: the index)
    are kept, so the set does not depend on how numpy's partition orders ties
    (its version, the processor). ``cut``: the k-th smallest cost when the
    caller has it already."""
    costs = np.asarray(costs)
    if k >= len(costs):
        return np.arange(len(costs))
    if cut is None:
        cut = np.partition(costs, k - 1)[k - 1]        # a value: the same on every machine
    upto = np.flatnonzero(costs <= cut)     # one pass over all; then the few
    if len(upto) == k:      # no ties past the cut to choose among: these, in index order
        return upto
    below, tied = upto[costs[upto] < cut], upto[costs[upto] == cut]
    if order is not None:
        tied = tied[np.argsort(order[tied], kind="stable")]
    return np.sort(np.concatenate([below, tied[:k - len(below)]]))


def rank(costs, k, order=None):
    """Indices of the ``k`` smallest of ``costs`` (all when fewer), in a fixed
    order (by cost, then ``order``, default the index) so the same inputs give
    the same choice on every machine."""
    part = smallest(costs, min(k, len(costs)), order)
    return part[np.lexsort((part if order is None else order[part], costs[part]))]
