"""Moves along the timeline: the tag query changing over a bake.

A move is a scene frame where a tag query starts; it holds until the next move.
Before the first move, and from a move whose query is empty (it clears), the
scene's own Tag Query is in force. :class:`Moves` holds them sorted by frame;
:meth:`Moves.in_force` gives, for any frames, which query is in force, as an
index into a list of the distinct queries (the scene's first), so that a caller
makes one set of rows per distinct query.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..database.query import parse_query
from ..database.tags import TagError
from ..errors import MotionMatchingError


class MovesError(MotionMatchingError):
    """A move that cannot be used: a bad frame or query."""


def _text(query):
    return "" if query is None else str(query).strip()


@dataclass(frozen=True)
class Moves:
    """Scene frames where a tag query starts (increasing) and the query text of
    each ("": back to the scene's Tag Query). Checked on creation."""

    frames: tuple = ()
    queries: tuple = ()

    def __post_init__(self):
        frames = tuple(float(f) for f in self.frames)
        queries = tuple(_text(q) for q in self.queries)
        if len(frames) != len(queries):
            raise MovesError("Moves need one query per frame (got %d frames, %d queries)."
                             % (len(frames), len(queries)))
        for i, (f, q) in enumerate(zip(frames, queries)):
            if not math.isfinite(f):
                raise MovesError("Move %d has no finite frame (got %r)." % (i + 1, f))
            if i and not f > frames[i - 1]:
                raise MovesError("Move %d at frame %g is not after move %d (frame %g): two moves cannot start "
                                 "on one frame." % (i + 1, f, i, frames[i - 1]))
            if q:
                try:
                    parse_query(q)
                except TagError as ex:
                    raise MovesError("%s: %s" % (self.describe(i, frames, queries), ex)) from None
        object.__setattr__(self, "frames", frames)
        object.__setattr__(self, "queries", queries)

    @classmethod
    def of(cls, pairs):
        """Moves from (frame, query) pairs in any order."""
        pairs = sorted(((float(f), q) for f, q in pairs), key=lambda p: p[0])
        return cls(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))

    def __len__(self):
        return len(self.frames)

    def __bool__(self):
        return bool(self.frames)

    def describe(self, i, frames=None, queries=None):
        """'Move 2 (frame 120, tag query 'run')': how a sentence names move ``i`` (from 0)."""
        frames = self.frames if frames is None else frames
        queries = self.queries if queries is None else queries
        what = ("tag query '%s'" % queries[i]) if queries[i] else "back to the scene's Tag Query"
        return "Move %d (frame %g, %s)" % (i + 1, frames[i], what)

    def texts(self, base=""):
        """The distinct queries in force: the scene's ``base`` first, then each
        move's own in order of first appearance (an empty one is the base)."""
        out = [_text(base)]
        for q in self.queries:
            if q and q not in out:
                out.append(q)
        return out

    def in_force(self, frames, base=""):
        """(index (F,) int64 into :meth:`texts` of the query in force on each of
        the scene ``frames`` (fractional or whole), that list)."""
        texts = self.texts(base)
        frames = np.atleast_1d(np.asarray(frames, dtype=np.float64))
        # The query each move puts in force, as an index; before the first move: the base (0).
        of_move = np.array([0] + [texts.index(q) if q else 0 for q in self.queries], dtype=np.int64)
        started = np.searchsorted(np.asarray(self.frames, dtype=np.float64), frames, side="right")
        return of_move[started], texts

    def query_at(self, frame, base=""):
        """The query text in force on one scene frame."""
        which, texts = self.in_force([frame], base)
        return texts[int(which[0])]

    def stretches(self, first, last):
        """[(move index, first frame, last frame)] of the whole frames ``first``..``last``
        each move holds for (None for frames: it holds for none of them)."""
        out = []
        for i, f in enumerate(self.frames):
            end = int(math.ceil(self.frames[i + 1])) - 1 if i + 1 < len(self.frames) else last
            lo, hi = max(first, int(math.ceil(f))), min(last, end)
            out.append((i, lo, hi) if lo <= hi else (i, None, None))
        return out


NO_MOVES = Moves()


def moves_of_times(times, queries, fps, frame_start=1):
    """Moves from scenario times (seconds from its start) at ``fps``, the
    scenario's t = 0 on ``frame_start`` (as the controller made from it)."""
    return Moves(tuple(float(frame_start) + float(t) * float(fps) for t in times), tuple(queries))
