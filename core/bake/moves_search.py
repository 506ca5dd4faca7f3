"""Stage 2 when the tag query changes over the bake (moves along the timeline):
one matcher per distinct query, each step searched by the one in force there.

The matchers' own memory of the steps played (the look-ahead's contact times
and drift) depends on the rows played alone, so every matcher is told of every
step and any of them can take over at a move.

The search anticipates (with the look-ahead on): on the steps within its
horizon before a move, a lead-in matcher searches the old query's rows (its
frames that play into the coming query's within the horizon too, though they
lack a lead of their own) and lets the rows between them play on (a take's
untagged frames between a walk and a run); it prices each candidate by when
playing on from it reaches a row of the coming query: on the move's step costs
nothing, later (or never) ``LEAD_LATE_COST``, earlier ``LEAD_EARLY_COST`` per
tenth of the horizon (the new query's rows are not played before its move, so
getting there early means a jump then). Later by a step or two
(``LEAD_SLACK``) costs in proportion, and such rows play on across the move (the
bake searches every few steps, so an arrival on the very step is rare); from
then on the row playing must carry the move's query. Rows that arrive on the
move's step are offered among the candidates too, so a run asked from frame
120 can begin there from a walk that leads into it rather than by a jump.
"""

from dataclasses import dataclass

import numpy as np

from .look_ahead import TUNING


@dataclass
class StepRows:
    """Which rows each simulation step may search and play on."""

    which: np.ndarray        # (S,) int64: index into ``rows`` of the query in force on each step
    rows: list               # [(allowed (N,), playable (N,))] per distinct query
    texts: list = None       # the query texts, as ``rows`` (for sentences)

    def single(self):
        """True when one query is in force on every step."""
        return bool(np.all(self.which == self.which[0]))

    def same_as(self, other):
        """The same steps' rows, bit for bit (to go on from a kept state)."""
        if other is None or len(other.rows) != len(self.rows) or not np.array_equal(other.which, self.which):
            return False
        return all(np.array_equal(a, b) and np.array_equal(pa, pb)
                   for (a, pa), (b, pb) in zip(self.rows, other.rows))


# Costs in the look-ahead's units: arriving late means a jump at the move, priced as a dead end.
LEAD_LATE_COST = TUNING.dead_end_cost    # a candidate that reaches none of the coming query's rows by the move
LEAD_EARLY_COST = TUNING.dead_end_cost   # one that reaches them a tenth of the horizon early (in proportion)
LEAD_SLACK = 0.05        # of the horizon: a move's rows may come this late when playing on brings them
LEAD_OFFERED = 8         # rows arriving on the move's step offered among the candidates


def lead_steps(which, horizon):
    """(S,) int64: for each step within ``horizon`` steps before a change of the
    query in force, the index of the step the coming query starts on; -1 elsewhere."""
    which = np.asarray(which, dtype=np.int64)
    out = np.full(len(which), -1, dtype=np.int64)
    for m in np.flatnonzero(which[1:] != which[:-1]) + 1:
        lo = max(int(m) - int(horizon), 0)
        same = which[lo:m] == which[m - 1]       # only the stretch the move ends
        first = lo + (len(same) - int(np.argmin(same[::-1])) if not same.all() else 0)
        out[first:m] = m
    return out


def lead_slack(horizon):
    """Steps a move's rows may come late (LEAD_SLACK of the look-ahead's horizon): the rows
    playing into the coming query within them play on across the move."""
    return max(int(round(horizon * LEAD_SLACK)), 0)


def reach_rows(db, target, through, never=10 ** 9):
    """(N,) int64 steps of playing on from each row until the first row of
    ``target`` (0 for a row in it), passing only rows of ``through`` within the
    clip; ``never`` when playing on does not get there."""
    n = db.num_rows
    target = np.asarray(target, dtype=bool)
    blocked = np.flatnonzero(~(np.asarray(through, dtype=bool) | target))
    hits = np.flatnonzero(target)
    idx = np.arange(n)
    ends = np.asarray(db.clip_offsets[1:], dtype=np.int64)[db.clip_index]
    nxt_hit = np.append(hits, n)[np.searchsorted(hits, idx)]
    nxt_block = np.append(blocked, n)[np.searchsorted(blocked, idx)]
    ok = (nxt_hit < ends) & (nxt_hit < nxt_block)
    return np.where(ok, nxt_hit - idx, never)


class LeadIn:
    """The cost a lead-in matcher adds to each candidate (see the module's description)
    and the rows it offers: ``reach`` (N,) from :func:`reach_rows`, ``move_at`` (S,)
    from :func:`lead_steps`, ``horizon`` in steps."""

    def __init__(self, reach, move_at, horizon):
        self.reach, self.move_at, self.horizon = reach, move_at, max(int(horizon), 1)

    def cost(self, rows, s):
        left = int(self.move_at[s]) - s
        r = self.reach[rows]
        early = np.maximum(left - r, 0) * (10.0 * LEAD_EARLY_COST / self.horizon)
        slack = lead_slack(self.horizon)
        late = np.minimum((r - left) / (slack + 1.0), 1.0) * LEAD_LATE_COST
        return np.where(r > left, late, early)

    def offered(self, rows, costs, s, k=LEAD_OFFERED):
        """Positions in ``rows`` (costs ``costs``) of the ``k`` cheapest rows arriving on the move's step
        (ties: the lowest position)."""
        at = np.flatnonzero(self.reach[rows] == int(self.move_at[s]) - s)
        return at[np.argsort(costs[at], kind="stable")[:k]]


def lead_matchers(step_rows, make, db, horizon):
    """(matchers, which, own, grace) for :class:`MovesMatcher`: one matcher per distinct query
    (``make(allowed, playable)``) and, when ``horizon`` > 0 (steps the look-ahead sees),
    one per change of query (old, new) searching both queries' rows with a
    :class:`LeadIn`, used on the steps within the horizon before the change; ``grace``
    {step: playable rows}: on the lead-in's steps the old query's rows and those leading into
    the new one's, on a move's step and the :func:`lead_slack` after it the new query's rows
    and those playing into them within the slack."""
    matchers = [make(a, p) for a, p in step_rows.rows]
    own = np.asarray(step_rows.which, dtype=np.int64)
    which = own.copy()
    if horizon <= 0 or not hasattr(matchers[0], "lead"):
        return matchers, which, own, {}
    move_at = lead_steps(step_rows.which, horizon)
    pairs, grace, slack = {}, {}, lead_slack(horizon)
    valid = ~np.asarray(db.excluded, dtype=bool)
    for s in np.flatnonzero(move_at >= 0):
        key = (int(step_rows.which[s]), int(step_rows.which[move_at[s]]))
        if key not in pairs:
            pairs[key] = len(matchers)
            matchers.append(_lead_matcher(make, db, step_rows.rows[key[0]], step_rows.rows[key[1]], valid,
                                          move_at, horizon, matchers[key[1]].playable))
        m = matchers[pairs[key]]
        which[s] = pairs[key]
        grace.setdefault(s, m.lead_playable)       # a move's slack, set before, comes first
        if move_at[s] == s + 1:         # the move's step and the slack after it (within its stretch)
            for g in range(s + 1, min(s + slack + 2, len(own))):
                if own[g] != own[s + 1]:
                    break
                grace[g] = m.grace
    return matchers, which, own, grace


def _lead_matcher(make, db, old, new, valid, move_at, horizon, new_playable):
    """The lead-in matcher of a change from the query whose rows are ``old`` to ``new``
    ((allowed, playable) each): it searches the old query's rows, its frames among them
    that play into the new one's within the horizon (searchable though they lack a lead of
    their own); playing on, the rows that lead there (a take's untagged transition between
    a walk and a run, say) play too, but the new query's rows wait for the move. Its
    look-ahead sees past the move into them (no dead end there)."""
    (a, p), (na, np_) = old, new
    target = np_ | na
    reach = reach_rows(db, target, valid)
    leads = valid & (reach <= horizon) & ~target
    m = make(a | ((p | a) & (reach <= horizon)), p | a | leads | target)
    m.lead = LeadIn(reach, move_at, horizon)
    m.lead_playable = (p | a | leads).tolist()
    m.grace = (np.asarray(new_playable) | (valid & (reach <= lead_slack(horizon)))).tolist()
    return m


class MovesMatcher:
    """The matcher of the query in force on each step (``matchers[which[s]]``).
    ``playable_at[s]``: the rows step ``s`` plays on through (a list of bools,
    shared between the steps of one query)."""

    def __init__(self, matchers, which, own=None, grace=None):
        # ``own`` (S,): the query in force on each step, whose rows it plays on through (default ``which``);
        # ``grace`` {step: rows playable there} (lead_matchers): a move's step and the slack after it.
        self.matchers = list(matchers)
        self.which = [int(k) for k in np.asarray(which)]
        lists = {}
        own = self.which if own is None else [int(k) for k in np.asarray(own)]
        for k in set(own):
            lists[k] = np.asarray(self.matchers[k].playable).tolist()
        self.playable_at = [lists[k] for k in own]
        for s, rows in (grace or {}).items():
            self.playable_at[s] = rows
        self.playable = self.matchers[self.which[0]].playable
        self.ahead = getattr(self.matchers[0], "ahead", None)

    def search(self, s, cur, can_continue, root=None):
        return self.matchers[self.which[s]].search(s, cur, can_continue, root)

    def played(self, row, root, rate=1.0, moved_on=None):
        for m in self.matchers:
            m.played(row, root, rate, moved_on)

    def state(self):
        return tuple(m.state() for m in self.matchers)

    def restore(self, state):
        for m, kept in zip(self.matchers, state):
            m.restore(kept)
