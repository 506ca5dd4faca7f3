"""The tag query language: ``(walk or run) and not stop`` over tag masks, and
the rows a search may return under a query.

A query combines tag names with ``not``, ``and``, ``or`` and parentheses, binding
in that order (``not`` tightest): ``a or b and not c`` means ``a or (b and (not c))``.
Keywords are case-insensitive; ``all`` selects every row. Error positions count
characters from 0. :func:`query_rows` gives the rows a search may return: a row the
query selects whose trajectory future exists in its clip (the frames after it may
carry other tags: the bake searches again as soon as the frame it plays leaves the
selection, so only selected frames are played), optionally with some selected frames
after it (a lead: a piece found there plays at least that long). The strict rule
asks the whole ``future`` to be selected, so the trajectory a row promises never runs
out of the selected motion; a take whose tagged pieces are shorter than the
look-ahead then has almost nothing left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .clip_features import frame_offset
from .tags import KEYWORDS, TagError, tag_masks

__all__ = [
    "Query",
    "parse_query",
    "future_frames_per_row",
    "query_rows",
    "database_query_rows",
]


@dataclass(frozen=True)
class _Name:
    text: str  # as typed

    def evaluate(self, masks, n):
        return masks[self.text.lower()]

    def names(self):
        return [self.text.lower()]

    def __str__(self):
        return self.text


@dataclass(frozen=True)
class _All:
    def evaluate(self, masks, n):
        return np.ones(n, dtype=bool)

    def names(self):
        return []

    def __str__(self):
        return "all"


@dataclass(frozen=True)
class _Not:
    child: object

    def evaluate(self, masks, n):
        return ~self.child.evaluate(masks, n)

    def names(self):
        return self.child.names()

    def __str__(self):
        c = str(self.child)
        return f"not ({c})" if isinstance(self.child, (_And, _Or)) else f"not {c}"


@dataclass(frozen=True)
class _And:
    children: tuple

    def evaluate(self, masks, n):
        out = self.children[0].evaluate(masks, n).copy()
        for c in self.children[1:]:
            out &= c.evaluate(masks, n)
        return out

    def names(self):
        return [k for c in self.children for k in c.names()]

    def __str__(self):
        return " and ".join(f"({c})" if isinstance(c, _Or) else str(c) for c in self.children)


@dataclass(frozen=True)
class _Or:
    children: tuple

    def evaluate(self, masks, n):
        out = self.children[0].evaluate(masks, n).copy()
        for c in self.children[1:]:
            out |= c.evaluate(masks, n)
        return out

    def names(self):
        return [k for c in self.children for k in c.names()]

    def __str__(self):
        return " or ".join(str(c) for c in self.children)


@dataclass(frozen=True)
class Query:
    """A parsed tag query. ``text`` is what was typed; ``str(query)`` is a canonical
    form with only the parentheses precedence needs."""

    text: str
    root: object = field(repr=False)

    def names(self):
        """Tag names the query uses, lower case, in order of first use, no repeats."""
        return list(dict.fromkeys(self.root.names()))

    def evaluate(self, masks, n_rows):
        """(n_rows,) bool: rows the query selects, given :func:`tag_masks` output.

        Raises :class:`TagError` when the query names a tag no clip has.
        """
        n_rows = int(n_rows)
        for k, m in masks.items():
            if np.shape(m) != (n_rows,):
                raise TagError(f"The mask of tag '{k}' has shape {np.shape(m)}; "
                               f"expected ({n_rows},), one flag per database row.")
        unknown = [k for k in self.names() if k not in masks]
        if unknown:
            have = (f"the tags that exist are: {', '.join(sorted(masks))}" if masks
                    else "no clip has any tag yet")
            which = ", ".join(f"'{k}'" for k in unknown)
            raise TagError(f"Tag query '{self.text}' uses {which}, which no clip has; "
                           f"{have}.")
        return np.asarray(self.root.evaluate(masks, n_rows), dtype=bool)

    def __str__(self):
        return str(self.root)


_TOKEN_RE = re.compile(r"\s*(?:(?P<name>[\w.\-]+)|(?P<paren>[()])|(?P<bad>\S))")


def _tokenize(text):
    """List of (kind, value, position): kind is 'name', 'and', 'or', 'not', 'all',
    '(' or ')'; ends with ('end', '', len(text))."""
    tokens, pos = [], 0
    while True:
        m = _TOKEN_RE.match(text, pos)
        if m is None:  # only whitespace left
            break
        start = m.start(m.lastgroup)
        if m.lastgroup == "bad":
            raise TagError(f"Tag query '{text}': unexpected character {m.group('bad')!r} at "
                           f"position {start}; tag names use only letters, digits, "
                           "'_', '-' and '.', joined by and, or, not and parentheses.")
        value = m.group(m.lastgroup)
        if m.lastgroup == "paren":
            tokens.append((value, value, start))
        elif value.lower() in KEYWORDS:
            tokens.append((value.lower(), value, start))
        else:
            tokens.append(("name", value, start))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    """Recursive descent over: or := and ('or' and)*; and := not ('and' not)*;
    not := 'not' not | atom; atom := NAME | 'all' | '(' or ')'."""

    def __init__(self, text):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.tokens[self.i]

    def take(self):
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def fail(self, expected, tok, then=""):
        found = "" if tok[0] == "end" else f", found '{tok[1]}'"
        raise TagError(f"Tag query '{self.text}': expected {expected} at position "
                       f"{tok[2]}{then}{found}")

    def parse(self):
        if self.peek()[0] == "end":
            raise TagError("The tag query is empty; write tag names joined by and, or, "
                           "not, or 'all' for every frame.")
        node = self.parse_or(after=None)
        tok = self.peek()
        if tok[0] == ")":
            raise TagError(f"Tag query '{self.text}': the ')' at position {tok[2]} has no "
                           "'(' before it")
        if tok[0] != "end":
            self.fail("'and', 'or' or the end of the query", tok)
        return node

    def parse_or(self, after):
        items = [self.parse_and(after)]
        while self.peek()[0] == "or":
            self.take()
            items.append(self.parse_and("'or'"))
        return items[0] if len(items) == 1 else _Or(tuple(items))

    def parse_and(self, after):
        items = [self.parse_not(after)]
        while self.peek()[0] == "and":
            self.take()
            items.append(self.parse_not("'and'"))
        return items[0] if len(items) == 1 else _And(tuple(items))

    def parse_not(self, after):
        if self.peek()[0] == "not":
            self.take()
            return _Not(self.parse_not("'not'"))
        return self.parse_atom(after)

    def parse_atom(self, after):
        tok = self.peek()
        if tok[0] == "name":
            self.take()
            return _Name(tok[1])
        if tok[0] == "all":
            self.take()
            return _All()
        if tok[0] == "(":
            self.take()
            node = self.parse_or("'('")
            close = self.peek()
            if close[0] != ")":
                self.fail("')'", close, f" to close the '(' at position {tok[2]}")
            self.take()
            return node
        self.fail("a tag name" + (f" after {after}" if after else ""), tok)


def parse_query(text):
    """Parse a tag query such as ``(walk or run) and not stop`` into a :class:`Query`.

    Raises :class:`TagError` with the position (from 0) and what was expected.
    """
    if isinstance(text, Query):
        return text
    if not isinstance(text, str):
        raise TagError(f"A tag query must be text, not {type(text).__name__}.")
    return Query(text, _Parser(text).parse())


# -------------------------------------------------------------- the end-of-range rule


def future_frames_per_row(clip_fps, clip_offsets, seconds):
    """(N,) int: ``seconds`` converted to frames with each row's clip frame rate
    (rounded as :func:`core.database.clip_features.frame_offset` does)."""
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    per_clip = np.array([frame_offset(seconds, f) for f in np.asarray(clip_fps, float)],
                        dtype=np.int64)
    return np.repeat(per_clip, np.diff(offsets))


def query_rows(query, masks, db_valid, clip_offsets, future_frames, selected_ahead=0):
    """Rows a search may return under ``query``: (N,) bool.

    Row i is allowed when the query selects it, ``db_valid[i]`` holds, row
    i+future_frames[i] is in i's clip (its trajectory future exists) and rows
    i..i+selected_ahead[i] are all selected and in i's clip (a piece chosen there
    plays at least that long before it leaves the selection). ``future_frames`` and
    ``selected_ahead`` are ints or (N,) int arrays (see :func:`future_frames_per_row`);
    pass the trajectory's largest future offset as ``future_frames``; passing it as
    ``selected_ahead`` too is the strict rule (the trajectory a row promises stays in
    the selected motion; at the end of a selected range the last ``future`` rows drop
    out).

    Raises :class:`TagError` for a bad query, an unknown tag, or when no row is left.
    """
    q = parse_query(query)
    valid = np.asarray(db_valid, dtype=bool)
    n = valid.shape[0]
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets[0] != 0 or offsets[-1] != n \
            or (np.diff(offsets) < 0).any():
        raise TagError(f"The clip offsets must rise from 0 to the number of rows ({n}).")
    fut, ahead = (_frames(v, n) for v in (future_frames, selected_ahead))

    sel = q.evaluate(masks, n)
    rows = np.arange(n, dtype=np.int64)
    clip_end = np.repeat(offsets[1:], np.diff(offsets))  # one past each row's clip
    last = rows + np.maximum(fut, ahead)
    count = np.concatenate(([0], np.cumsum(sel, dtype=np.int64)))  # selected before row k
    whole = count[np.minimum(rows + ahead + 1, n)] - count[rows] == ahead + 1
    allowed = sel & valid & (last < clip_end) & whole
    if not allowed.any():
        if not sel.any():
            why = "no frame carries these tags."
        elif ahead.max() > 0 and np.array_equal(ahead, fut):
            why = ("every selected range is shorter than the trajectory looks ahead "
                   f"({int(fut.max())} frames) or lies on frames the database does not offer.")
        elif ahead.max() > 0:
            why = ("every selected range is shorter than the lead a frame needs after it "
                   f"({int(ahead.max())} frames; a lower Tag Query Lead offers shorter pieces) or lies on "
                   "frames the database does not offer.")
        else:
            why = ("every selected frame lies within the trajectory's look-ahead "
                   f"({int(fut.max())} frames) of its clip's end or on frames the database does not offer.")
        raise TagError(f"The tag query '{q.text}' selects no frame that can be played: {why}")
    return allowed


def _frames(value, n):
    """(n,) int64 frame counts from an int or an array; refuses negative or fractional ones."""
    v = np.broadcast_to(np.asarray(value), (n,))
    if v.dtype.kind not in "iu" or (v < 0).any():
        raise TagError("The future offsets must be whole numbers of frames, 0 or more.")
    return v.astype(np.int64)


def database_query_rows(db, clips_tags, query, ahead_s=0.0, strict=False):
    """:func:`query_rows` for a :class:`core.database.feature_database.Database`, the future being the
    largest positive trajectory time of its feature set; ``ahead_s``: seconds of
    selected frames a row needs after it; ``strict``: the whole future (the strict
    rule, as ``ahead_s`` equal to the future)."""
    times = [float(t) for g in db.spec.groups if g.is_trajectory for t in g.times_s]
    horizon = max([0.0] + times)
    masks = tag_masks(clips_tags, db.clip_offsets, db.clip_names)
    fut = future_frames_per_row(db.clip_fps, db.clip_offsets, horizon)
    ahead = fut if strict else future_frames_per_row(db.clip_fps, db.clip_offsets, float(ahead_s))
    return query_rows(query, masks, db.valid, db.clip_offsets, fut, selected_ahead=ahead)
