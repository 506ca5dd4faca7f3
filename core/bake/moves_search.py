"""Stage 2 when the tag query changes over the bake (moves along the timeline):
one matcher per distinct query, each step searched by the one in force there.

The matchers' own memory of the steps played (the look-ahead's contact times
and drift) depends on the rows played alone, so every matcher is told of every
step and any of them can take over at a move.
"""

from dataclasses import dataclass

import numpy as np


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


class MovesMatcher:
    """The matcher of the query in force on each step (``matchers[which[s]]``).
    ``playable_at[s]``: the rows step ``s`` plays on through (a list of bools,
    shared between the steps of one query)."""

    def __init__(self, matchers, which):
        self.matchers = list(matchers)
        self.which = [int(k) for k in np.asarray(which)]
        lists = [np.asarray(m.playable).tolist() for m in self.matchers]
        self.playable_at = [lists[k] for k in self.which]
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
