"""Tags, tag queries, dance cards and the coverage report.

Tags
----
A tag is a named, inclusive frame range on one clip, ``Tag(name, start, end)``, in
the clip's own 0-based frame indices (the Blender side converts from scene frames).
A name uses letters (any alphabet), digits, ``_``, ``-`` and ``.``; spaces and
every other character are refused, so ``t-pose`` and ``turn.90`` are names but
``turn left`` is not. The words ``and``, ``or``, ``not`` and ``all`` are reserved
by the query language and cannot be tag names. Names match case-insensitively
(``Walk`` and ``walk`` are one tag) but keep the spelling they were given.

Ranges tagged with one of the exclusion names (default :data:`DEFAULT_EXCLUDE_NAMES`)
are left out of the database at build time (:func:`excluded_rows`).

Tag queries
-----------
A query combines tag names with ``not``, ``and``, ``or`` and parentheses, binding
in that order (``not`` tightest): ``a or b and not c`` means ``a or (b and (not c))``.
Keywords are case-insensitive; ``all`` selects every row. Error positions count
characters from 0. :func:`query_rows` adds the end-of-range rule: a row is offered
only when it and the ``future`` rows after it are all selected and in the same clip,
so the trajectory a row promises never runs out of the selected motion.

Dance cards
-----------
A dance card lists the moves to capture. TOML (``.toml``)::

    title = "Locomotion"          # optional

    [[move]]
    name = "walk"                 # required, a valid tag name, unique ignoring case
    duration = 30                 # optional, seconds, > 0
    description = "Straight, any pace"   # optional

JSON (``.json``)::

    {"title": "Locomotion",
     "moves": [{"name": "walk", "duration": 30, "description": "Straight"}]}

Any other key is an error. Without a title, :func:`load_dance_card` uses the file name
without its extension. Files are UTF-8.

Coverage report
---------------
:func:`coverage_report` measures, per move of a card, the seconds tagged, and over
all usable frames a capability map: seconds of motion per bin of root speed (m/s)
and turning rate (deg/s). :func:`format_report_text` writes it as plain text.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from . import text_input
from .errors import MotionMatchingError
from .features import frame_offset
from .text_input import short_repr

__all__ = [
    "TagError",
    "CoverageError",
    "DEFAULT_EXCLUDE_NAMES",
    "KEYWORDS",
    "Tag",
    "tag_name_problem",
    "check_tag_name",
    "validate_tags",
    "range_mask",
    "excluded_rows",
    "tag_masks",
    "Query",
    "parse_query",
    "future_frames_per_row",
    "query_rows",
    "database_query_rows",
    "Move",
    "DanceCard",
    "dance_card_from_dict",
    "load_dance_card",
    "save_dance_card",
    "DEFAULT_SPEED_BINS",
    "DEFAULT_TURN_BINS",
    "speed_name",
    "turn_phrase",
    "root_speed_and_turn",
    "coverage_report",
    "format_report_text",
]

DEFAULT_EXCLUDE_NAMES = ("exclude", "tpose", "t-pose", "calibration", "mistake")
KEYWORDS = ("and", "or", "not", "all")

_NAME_RE = re.compile(r"[\w.\-]+")  # \w: letters of any alphabet, digits and '_'


class TagError(MotionMatchingError):
    """A tag, a tag query or a dance card cannot be used."""


class CoverageError(MotionMatchingError):
    """The data given to the coverage report cannot be measured."""


# ------------------------------------------------------------------------------ tags


def tag_name_problem(name):
    """Why ``name`` is not a valid tag name (a sentence fragment), or None if it is."""
    if not isinstance(name, str):
        return f"a tag name must be text, not {type(name).__name__}"
    if not name:
        return "a tag name cannot be empty"
    if not _NAME_RE.fullmatch(name):
        bad = next(ch for ch in name if not _NAME_RE.fullmatch(ch))
        what = "a space" if bad == " " else repr(bad)
        return (f"it contains {what}; tag names use only letters, digits, "
                "'_', '-' and '.'")
    if name.lower() in KEYWORDS:
        return f"'{name.lower()}' is a word of the tag query language"
    return None


def check_tag_name(name):
    """Return ``name`` unchanged, or raise :class:`TagError` saying what is wrong."""
    problem = tag_name_problem(name)
    if problem is not None:
        raise TagError(f"{name!r} is not a valid tag name: {problem}.")
    return name


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


@dataclass(frozen=True)
class Tag:
    """Frames ``start`` to ``end`` (both included, 0-based in the clip) named ``name``."""

    name: str
    start: int
    end: int

    @property
    def key(self):
        """The name as tags are matched: lower case."""
        return self.name.lower()

    @property
    def n_frames(self):
        return int(self.end) - int(self.start) + 1


def _as_tag(t):
    if isinstance(t, Tag):
        return t
    if isinstance(t, (tuple, list)) and len(t) == 3:
        return Tag(*t)
    raise TagError(f"A tag must be a Tag(name, start, end), not {t!r}.")


def validate_tags(tags, n_frames, clip_name=None):
    """Check names and ranges of the tags of one clip of ``n_frames`` frames.

    Returns the tags as a list of :class:`Tag` (tuples ``(name, start, end)`` are
    accepted). Raises :class:`TagError` naming the first bad tag and the clip.
    """
    where = f"clip '{clip_name}'" if clip_name is not None else "the clip"
    out = []
    for t in tags:
        t = _as_tag(t)
        problem = tag_name_problem(t.name)
        if problem is not None:
            raise TagError(f"A tag on {where} is named {t.name!r}, which is not a valid "
                           f"tag name: {problem}. Rename the tag.")
        if not (_is_int(t.start) and _is_int(t.end)):
            raise TagError(f"Tag '{t.name}' on {where} has range {t.start!r}-{t.end!r}; "
                           "the first and last frames must be whole numbers.")
        if t.start > t.end:
            raise TagError(f"Tag '{t.name}' on {where} starts at frame {t.start} after it "
                           f"ends at frame {t.end}; swap or correct the two frames.")
        if t.start < 0 or t.end > n_frames - 1:
            raise TagError(f"Tag '{t.name}' on {where} covers frames {t.start}-{t.end}, "
                           f"but the clip only has frames 0-{n_frames - 1}; move the "
                           "tag inside the clip.")
        out.append(Tag(t.name, int(t.start), int(t.end)))
    return out


def range_mask(ranges, n):
    """(n,) bool, True on every frame of the inclusive ``(start, end)`` ranges.

    Overlapping ranges simply overlap (a frame is counted once). The ranges must
    lie in 0..n-1 (validate first).
    """
    diff = np.zeros(n + 1, dtype=np.int64)
    if len(ranges):
        r = np.asarray(ranges, dtype=np.int64).reshape(-1, 2)
        np.add.at(diff, r[:, 0], 1)
        np.add.at(diff, r[:, 1] + 1, -1)
    return np.cumsum(diff[:n]) > 0


def excluded_rows(tags, n_frames, exclude_names=DEFAULT_EXCLUDE_NAMES, clip_name=None):
    """(n_frames,) bool: frames covered by a tag whose name is in ``exclude_names``
    (compared ignoring case). These frames are left out of the database."""
    tags = validate_tags(tags, n_frames, clip_name)
    names = {str(n).lower() for n in (exclude_names or ())}
    return range_mask([(t.start, t.end) for t in tags if t.key in names], int(n_frames))


def tag_masks(clips_tags, clip_offsets, clip_names=None):
    """Per-tag row masks over the database: ``{lowercased name: (N,) bool}``.

    ``clips_tags[c]`` are the tags of clip c, whose rows are
    ``clip_offsets[c]:clip_offsets[c + 1]`` (N = ``clip_offsets[-1]``). Every tag that
    appears on any clip gets a mask.
    """
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    n_clips = offsets.shape[0] - 1
    if offsets.ndim != 1 or n_clips < 0 or (np.diff(offsets) < 0).any():
        raise TagError("The clip offsets must be a rising list of first rows, ending "
                       "with the number of rows.")
    if len(clips_tags) != n_clips:
        raise TagError(f"There are tags for {len(clips_tags)} clips but the database has "
                       f"{n_clips}; give one list of tags per clip (empty if none).")
    n_rows = int(offsets[-1])
    ranges = {}
    for c, tags in enumerate(clips_tags):
        name = clip_names[c] if clip_names is not None else None
        n = int(offsets[c + 1] - offsets[c])
        for t in validate_tags(tags, n, name if name is not None else f"number {c}"):
            ranges.setdefault(t.key, []).append((offsets[c] + t.start, offsets[c] + t.end))
    return {k: range_mask(r, n_rows) for k, r in ranges.items()}


# ------------------------------------------------------------------------ tag queries


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
    (rounded as :func:`core.features.frame_offset` does)."""
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    per_clip = np.array([frame_offset(seconds, f) for f in np.asarray(clip_fps, float)],
                        dtype=np.int64)
    return np.repeat(per_clip, np.diff(offsets))


def query_rows(query, masks, db_valid, clip_offsets, future_frames):
    """Rows a search may return under ``query``: (N,) bool.

    Row i is allowed when the query selects it, ``db_valid[i]`` holds, and rows
    i..i+future_frames[i] are all selected and in i's clip (so the trajectory a row
    promises stays in the selected motion; at the end of a selected range the last
    ``future`` rows drop out). ``future_frames`` is an int or an (N,) int array (see
    :func:`future_frames_per_row`); pass the trajectory's largest future offset.

    Raises :class:`TagError` for a bad query, an unknown tag, or when no row is left.
    """
    q = parse_query(query)
    valid = np.asarray(db_valid, dtype=bool)
    n = valid.shape[0]
    offsets = np.asarray(clip_offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets[0] != 0 or offsets[-1] != n \
            or (np.diff(offsets) < 0).any():
        raise TagError(f"The clip offsets must rise from 0 to the number of rows ({n}).")
    fut = np.broadcast_to(np.asarray(future_frames), (n,))
    if fut.dtype.kind not in "iu" or (fut < 0).any():
        raise TagError("The future offsets must be whole numbers of frames, 0 or more.")
    fut = fut.astype(np.int64)

    sel = q.evaluate(masks, n)
    rows = np.arange(n, dtype=np.int64)
    clip_end = np.repeat(offsets[1:], np.diff(offsets))  # one past each row's clip
    last = rows + fut
    inside = last < clip_end
    count = np.concatenate(([0], np.cumsum(sel, dtype=np.int64)))  # selected before row k
    whole = count[np.minimum(last + 1, n)] - count[rows] == fut + 1
    allowed = sel & valid & inside & whole
    if not allowed.any():
        if not sel.any():
            why = "no frame carries these tags."
        else:
            why = ("every selected range is shorter than the trajectory looks ahead "
                   f"({int(fut.max())} frames) or lies on frames the database does not offer.")
        raise TagError(f"The tag query '{q.text}' selects no frame that can be played: {why}")
    return allowed


def database_query_rows(db, clips_tags, query):
    """:func:`query_rows` for a :class:`core.features.Database`, the future being the
    largest positive trajectory time of its feature set."""
    times = [float(t) for g in db.spec.groups if g.is_trajectory for t in g.times_s]
    horizon = max([0.0] + times)
    masks = tag_masks(clips_tags, db.clip_offsets, db.clip_names)
    fut = future_frames_per_row(db.clip_fps, db.clip_offsets, horizon)
    return query_rows(query, masks, db.valid, db.clip_offsets, fut)


# ------------------------------------------------------------------------ dance cards


@dataclass
class Move:
    """One move of a dance card; ``duration_s`` is the wanted seconds, or None."""

    name: str
    duration_s: float | None = None
    description: str = ""


@dataclass
class DanceCard:
    title: str
    moves: list

    def to_dict(self):
        """The JSON form (what :func:`dance_card_from_dict` reads)."""
        moves = []
        for m in self.moves:
            d = {"name": m.name}
            if m.duration_s is not None:
                d["duration"] = float(m.duration_s)
            if m.description:
                d["description"] = m.description
            moves.append(d)
        return {"title": self.title, "moves": moves}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_toml(self):
        lines = [f"title = {_toml_str(self.title)}"]
        for m in self.moves:
            lines += ["", "[[move]]", f"name = {_toml_str(m.name)}"]
            if m.duration_s is not None:
                lines.append(f"duration = {float(m.duration_s)!r}")
            if m.description:
                lines.append(f"description = {_toml_str(m.description)}")
        return "\n".join(lines) + "\n"


def _toml_str(s):
    # A JSON string is a TOML basic string, except that TOML wants DEL escaped.
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


MAX_MOVES = 10000
_CARD_KEYS = ("title",)
_MOVE_KEYS = ("name", "duration", "description")


def _quoted(keys):
    return ", ".join(f"'{k}'" for k in keys)


def _card_from_mapping(d, moves_key, source, default_title=""):
    ref = f"dance card {source}" if source else "dance card"
    card = "The " + ref
    if not isinstance(d, dict):
        raise TagError(f"{card} must be a table of 'title' and '{moves_key}', not "
                       f"{type(d).__name__}.")
    unknown = [k for k in d if k not in _CARD_KEYS + (moves_key,)]
    if unknown:
        raise TagError(f"{card} has unknown keys: {_quoted(unknown)}; a dance card has "
                       f"only {_quoted(_CARD_KEYS + (moves_key,))}.")
    title = d.get("title", default_title)
    if not isinstance(title, str):
        raise TagError(f"{card} has a title that is not text: {short_repr(title)}.")
    raw_moves = d.get(moves_key)
    how = "[[move]] table" if moves_key == "move" else "entry in 'moves'"
    if raw_moves is None or (isinstance(raw_moves, list) and not raw_moves):
        raise TagError(f"{card} lists no moves; add at least one {how} with a name.")
    if not isinstance(raw_moves, list):
        raise TagError(f"{card} has a '{moves_key}' that is not a list of moves; write "
                       f"each move as a {how}.")
    if len(raw_moves) > MAX_MOVES:
        raise TagError(f"{card} lists {len(raw_moves)} moves; a dance card has at most {MAX_MOVES}.")
    moves, seen = [], {}
    for i, m in enumerate(raw_moves, 1):
        if not isinstance(m, dict):
            raise TagError(f"Move {i} of {ref} is not a table of name, duration "
                           "and description.")
        label = f"Move {i}" + (f" ('{m['name']}')" if isinstance(m.get("name"), str) else "")
        where = f"{label} of {ref}"
        unknown = [k for k in m if k not in _MOVE_KEYS]
        if unknown:
            raise TagError(f"{where} has unknown keys: {_quoted(unknown)}; a move has only "
                           f"{_quoted(_MOVE_KEYS)}.")
        if "name" not in m:
            raise TagError(f"{where} has no name; give it a name, e.g. name = \"walk\".")
        name = m["name"]
        problem = tag_name_problem(name)
        if problem is not None:
            raise TagError(f"{where} has the name {short_repr(name)}, which is not a valid tag name: "
                           f"{problem}.")
        if name.lower() in seen:
            raise TagError(f"{where} repeats the name of move {seen[name.lower()]} "
                           f"('{raw_moves[seen[name.lower()] - 1]['name']}'); names are "
                           "compared ignoring case, so give each move its own name.")
        seen[name.lower()] = i
        duration = m.get("duration")
        if duration is not None:
            if not isinstance(duration, (int, float)) or isinstance(duration, bool):
                raise TagError(f"{where} has a duration that is not a number: {short_repr(duration)}; "
                               "write the wanted seconds, e.g. duration = 30.")
            if not math.isfinite(duration) or duration <= 0:
                raise TagError(f"{where} has duration {short_repr(duration)}; it must be a number of "
                               "seconds greater than 0.")
            duration = float(duration)
        desc = m.get("description", "")
        if not isinstance(desc, str):
            raise TagError(f"{where} has a description that is not text: {short_repr(desc)}.")
        moves.append(Move(name, duration, desc))
    return DanceCard(title, moves)


def dance_card_from_dict(d):
    """A :class:`DanceCard` from the JSON form ``{"title": ..., "moves": [...]}``."""
    return _card_from_mapping(d, "moves", "")


def load_dance_card(path):
    """Read a dance card from a ``.toml`` or ``.json`` file (see the module docstring)."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".toml", ".json"):
        raise TagError(f"The dance card '{path}' has extension '{ext or '(none)'}'; a dance "
                       "card must be a .toml or .json file.")
    if not os.path.exists(path):
        raise TagError(f"The dance card file '{path}' does not exist; check the path.")
    if os.path.isdir(path):
        raise TagError(f"'{path}' is a folder, not a dance card file.")
    source = f"'{os.path.basename(path)}'"
    stem = os.path.splitext(os.path.basename(path))[0]
    what = f"The dance card {source}"
    try:
        raw = text_input.read_bytes(path, what, max_bytes=16 * 1024 * 1024)
        if ext == ".toml":
            return _card_from_mapping(text_input.parse_toml(raw, what), "move", source, stem)
        return _card_from_mapping(text_input.parse_json(raw, what), "moves", source, stem)
    except TagError:
        raise
    except MotionMatchingError as ex:
        raise TagError(str(ex)) from None


def save_dance_card(card, path):
    """Write ``card`` as TOML or JSON, chosen by the extension of ``path``."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".toml":
        text = card.to_toml()
    elif ext == ".json":
        text = card.to_json()
    else:
        raise TagError(f"Cannot save a dance card as '{ext or '(none)'}'; use a .toml or "
                       ".json file name.")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# -------------------------------------------------------------------- coverage report

DEFAULT_SPEED_BINS = (0.0, 0.2, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, math.inf)
DEFAULT_TURN_BINS = (0.0, 15.0, 45.0, 90.0, 180.0, math.inf)
THIN_SECONDS = 1.0

# Pace zones (lower edge in m/s, name) and turning zones (lower edge in deg/s, phrase).
_SPEED_ZONES = ((0.0, "idle"), (0.2, "idle to walk"), (0.5, "walk"),
                (1.5, "walk to run"), (2.0, "run"))
_TURN_ZONES = ((0.0, "going straight"), (15.0, "with gentle turns"), (45.0, "with turns"),
               (90.0, "with sharp turns"), (180.0, "with very sharp turns"))


def _zone_name(lo, hi, zones):
    names = [name for i, (edge, name) in enumerate(zones)
             if edge < hi and (i + 1 == len(zones) or zones[i + 1][0] > lo)]
    if len(names) == 1:
        return names[0]
    return f"{names[0]} .. {names[-1]}"


def speed_name(lo, hi):
    """Name of the pace of speeds in [lo, hi) m/s: idle under 0.2, walk 0.5-1.5, run
    from 2.0, 'idle to walk' and 'walk to run' between; a bin spanning several zones
    is named by its first and last."""
    return _zone_name(lo, hi, _SPEED_ZONES)


def turn_phrase(lo, hi):
    """Phrase for turning rates in [lo, hi) deg/s, e.g. 'with sharp turns'."""
    return _zone_name(lo, hi, _TURN_ZONES)


def _fmt(x, min_decimals):
    s = f"{x:g}"
    if min_decimals and "." not in s and "e" not in s:
        s = f"{x:.{min_decimals}f}"
    return s


def _bin_labels(edges, unit, min_decimals):
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if math.isinf(hi):
            out.append(f"{_fmt(lo, min_decimals)}+ {unit}")
        else:
            out.append(f"{_fmt(lo, min_decimals)}-{_fmt(hi, min_decimals)} {unit}")
    return out


def _check_edges(edges, what):
    e = [float(x) for x in edges]
    if len(e) < 2 or any(math.isnan(x) for x in e) or e[0] < 0 or \
            any(b <= a for a, b in zip(e[:-1], e[1:])) or math.isinf(e[0]):
        raise CoverageError(f"The {what} bins must be at least two rising numbers from 0 up, "
                            f"not {list(edges)!r}.")
    return e


def root_speed_and_turn(root_pos, facing, fps):
    """Per-frame root ground speed (m/s) and absolute turning rate (deg/s).

    Central differences (one-sided at the ends) of the root's x, y position and of
    its unwrapped facing angle, times ``fps``. ``facing`` is (F, 2) or (F, 3); only
    its x, y matter. A single frame has speed and rate 0.
    """
    p = np.asarray(root_pos, dtype=np.float64)[:, :2]
    f = np.asarray(facing, dtype=np.float64)[:, :2]
    if p.shape[0] < 2:
        z = np.zeros(p.shape[0])
        return z, z.copy()
    vel = np.gradient(p, axis=0) * fps
    yaw = np.unwrap(np.arctan2(f[:, 1], f[:, 0]))
    rate = np.abs(np.degrees(np.gradient(yaw) * fps))
    return np.hypot(vel[:, 0], vel[:, 1]), rate


def _unpack_clip(i, clip):
    if not isinstance(clip, (tuple, list)) or len(clip) not in (6, 7):
        raise CoverageError(f"Clip {i} of the coverage report must be (name, fps, frames, "
                            "tags, root positions, root facing[, excluded]).")
    name, fps, n, tags, pos, facing = clip[:6]
    excl = clip[6] if len(clip) == 7 else None
    if not isinstance(fps, (int, float, np.integer, np.floating)) or isinstance(fps, bool) \
            or not math.isfinite(fps) or fps <= 0:
        raise CoverageError(f"Clip '{name}' has frame rate {fps!r}; it must be a positive "
                            "number.")
    if not _is_int(n) or n < 1:
        raise CoverageError(f"Clip '{name}' has {n!r} frames; it needs at least one.")
    n = int(n)
    pos = np.asarray(pos, dtype=np.float64)
    facing = np.asarray(facing, dtype=np.float64)
    if pos.shape != (n, 3):
        raise CoverageError(f"Clip '{name}' has root positions of shape {pos.shape}; "
                            f"expected ({n}, 3).")
    if facing.ndim != 2 or facing.shape[0] != n or facing.shape[1] not in (2, 3):
        raise CoverageError(f"Clip '{name}' has root facings of shape {facing.shape}; "
                            f"expected ({n}, 2) or ({n}, 3).")
    if not (np.isfinite(pos).all() and np.isfinite(facing).all()):
        raise CoverageError(f"Clip '{name}' has a NaN or infinite root position or facing.")
    if (np.hypot(facing[:, 0], facing[:, 1]) < 1e-9).any():
        raise CoverageError(f"Clip '{name}' has a root facing with no horizontal direction "
                            "on some frame; rebuild its virtual root.")
    if excl is not None:
        excl = np.asarray(excl, dtype=bool)
        if excl.shape != (n,):
            raise CoverageError(f"Clip '{name}' has an exclusion mask of shape {excl.shape}; "
                                f"expected ({n},).")
    tags = validate_tags(tags, n, name)
    return str(name), float(fps), n, tags, pos, facing, excl


def coverage_report(dance_card, clips, speed_bins=DEFAULT_SPEED_BINS,
                    turn_bins_deg_per_s=DEFAULT_TURN_BINS,
                    exclude_names=DEFAULT_EXCLUDE_NAMES, thin_s=THIN_SECONDS):
    """What the clips cover, as a JSON-serialisable dict.

    ``clips``: a list of ``(name, fps, n_frames, tags, root_pos (F, 3), facing (F, 2|3))``
    with an optional 7th item, an (F,) bool mask of frames to leave out. Frames tagged
    with an ``exclude_names`` tag are left out too. Left-out frames count in
    ``totals.excluded_*`` only: not in moves, extra tags, nor the map.

    Keys:
    - ``moves`` (one per card move, in card order): name, description, seconds,
      frames, expected_s (or None), ratio (seconds / expected, or None), status
      ('ok', 'short' under the expected duration, 'missing' with no frame), clips;
    - ``extra_tags``: tags on the clips that the card does not list (exclusion tags
      aside): name, seconds, frames, clips;
    - ``totals``: clips, frames, seconds, excluded_frames, excluded_seconds,
      usable_seconds;
    - ``capability``: speed_edges and turn_edges (None for an open last edge),
      speed_labels, speed_names, turn_labels, turn_phrases and ``seconds`` [speed][turn];
    - ``gaps``: the map cells with under ``thin_s`` seconds, each with speed, turn,
      seconds, kind ('empty' or 'thin') and a sentence.

    Seconds of a tag count each frame once, even where ranges of the tag overlap.
    Speeds and rates are rounded to 6 decimals before binning, so exactly 90 deg/s
    falls in the bin starting at 90 despite rounding errors.
    """
    s_edges = _check_edges(speed_bins, "speed")
    t_edges = _check_edges(turn_bins_deg_per_s, "turning rate")
    if not isinstance(thin_s, (int, float)) or thin_s < 0:
        raise CoverageError(f"The thin threshold must be 0 seconds or more, not {thin_s!r}.")
    if dance_card is not None and not isinstance(dance_card, DanceCard):
        raise CoverageError("The dance card must be a DanceCard (see load_dance_card).")
    excl_names = {str(n).lower() for n in (exclude_names or ())}

    grid = np.zeros((len(s_edges) - 1, len(t_edges) - 1))
    per_tag = {}  # key -> [spelling, frames, seconds, clip names]
    totals = dict(clips=0, frames=0, seconds=0.0, excluded_frames=0, excluded_seconds=0.0)
    for i, clip in enumerate(clips):
        name, fps, n, tags, pos, facing, excl = _unpack_clip(i, clip)
        left_out = range_mask([(t.start, t.end) for t in tags if t.key in excl_names], n)
        if excl is not None:
            left_out |= excl
        usable = ~left_out
        totals["clips"] += 1
        totals["frames"] += n
        totals["seconds"] += n / fps
        totals["excluded_frames"] += int(left_out.sum())
        totals["excluded_seconds"] += float(left_out.sum()) / fps

        ranges = {}
        for t in tags:
            ranges.setdefault(t.key, (t.name, []))[1].append((t.start, t.end))
        for key, (spelling, rs) in ranges.items():
            frames = int((range_mask(rs, n) & usable).sum())
            entry = per_tag.setdefault(key, [spelling, 0, 0.0, []])
            entry[1] += frames
            entry[2] += frames / fps
            if frames:
                entry[3].append(name)

        speed, turn = root_speed_and_turn(pos, facing, fps)
        speed, turn = np.round(speed[usable], 6), np.round(turn[usable], 6)
        si = np.searchsorted(s_edges, speed, side="right") - 1
        ti = np.searchsorted(t_edges, turn, side="right") - 1
        inside = (si >= 0) & (si < grid.shape[0]) & (ti >= 0) & (ti < grid.shape[1])
        np.add.at(grid, (si[inside], ti[inside]), 1.0 / fps)
    totals["usable_seconds"] = totals["seconds"] - totals["excluded_seconds"]

    moves = []
    card_keys = set()
    for m in (dance_card.moves if dance_card is not None else []):
        key = m.name.lower()
        card_keys.add(key)
        _, frames, seconds, where = per_tag.get(key, (m.name, 0, 0.0, []))
        expected = m.duration_s
        if frames == 0:
            status = "missing"
        elif expected is not None and seconds < expected:
            status = "short"
        else:
            status = "ok"
        moves.append(dict(name=m.name, description=m.description, seconds=float(seconds),
                          frames=int(frames), expected_s=expected,
                          ratio=None if expected is None else float(seconds / expected),
                          status=status, clips=list(where)))
    extra = [dict(name=v[0], seconds=float(v[2]), frames=int(v[1]), clips=list(v[3]))
             for k, v in sorted(per_tag.items())
             if k not in card_keys and k not in excl_names]

    s_labels = _bin_labels(s_edges, "m/s", 1)
    t_labels = _bin_labels(t_edges, "deg/s", 0)
    s_names = [speed_name(a, b) for a, b in zip(s_edges[:-1], s_edges[1:])]
    t_phrases = [turn_phrase(a, b) for a, b in zip(t_edges[:-1], t_edges[1:])]
    gaps = []
    for a in range(grid.shape[0]):
        for b in range(grid.shape[1]):
            sec = float(grid[a, b])
            if sec >= thin_s:
                continue
            amount = "nothing" if sec == 0 else f"only {sec:.{1 if sec >= 0.1 else 2}f} s"
            gaps.append(dict(speed=s_labels[a], turn=t_labels[b], seconds=sec,
                             kind="empty" if sec == 0 else "thin",
                             speed_name=s_names[a], turn_phrase=t_phrases[b],
                             sentence=f"{s_names[a]} {t_phrases[b]} ({s_labels[a]}, "
                                      f"{t_labels[b]}): {amount}."))

    def edges_out(e):
        return [None if math.isinf(x) else x for x in e]

    return dict(
        title=dance_card.title if dance_card is not None else None,
        moves=moves,
        extra_tags=extra,
        totals=totals,
        capability=dict(speed_edges=edges_out(s_edges), turn_edges=edges_out(t_edges),
                        speed_labels=s_labels, speed_names=s_names,
                        turn_labels=t_labels, turn_phrases=t_phrases,
                        seconds=grid.tolist()),
        thin_s=float(thin_s),
        gaps=gaps,
    )


def format_report_text(report):
    """Plain-text summary of :func:`coverage_report` for a Blender text datablock."""
    lines = []
    title = report.get("title")
    lines.append(f"Dance card coverage: {title}" if title else "Coverage of the clips")
    t = report["totals"]
    lines.append(f"{t['clips']} clip{'' if t['clips'] == 1 else 's'}, {t['seconds']:.1f} s ({t['frames']} frames); "
                 f"{t['excluded_seconds']:.1f} s left out; "
                 f"{t['usable_seconds']:.1f} s usable.")
    lines.append("")

    if report["moves"]:
        width = max(4, *(len(m["name"]) for m in report["moves"]))
        lines.append("Moves")
        lines.append(f"  {'move':<{width}}  {'tagged s':>8}  {'wanted s':>8}  "
                     f"{'ratio':>6}  status")
        for m in report["moves"]:
            exp = "-" if m["expected_s"] is None else f"{m['expected_s']:.1f}"
            ratio = "-" if m["ratio"] is None else f"{m['ratio']:.2f}"
            lines.append(f"  {m['name']:<{width}}  {m['seconds']:>8.1f}  {exp:>8}  "
                         f"{ratio:>6}  {m['status']}")
        missing = [m["name"] for m in report["moves"] if m["status"] == "missing"]
        short = [m["name"] for m in report["moves"] if m["status"] == "short"]
        if missing:
            lines.append(f"Missing: {', '.join(missing)}.")
        if short:
            lines.append(f"Shorter than wanted: {', '.join(short)}.")
        lines.append("")
    if report["extra_tags"]:
        label = "Tags not on the card" if report["moves"] or title else "Tags"
        lines.append(f"{label}: " + ", ".join(
            f"{e['name']} ({e['seconds']:.1f} s)" for e in report["extra_tags"]) + ".")
        lines.append("")

    cap = report["capability"]
    lines.append("Capability map: seconds per root speed (rows) and turning rate (columns)")
    row_heads = [f"{n} {lab}" for n, lab in zip(cap["speed_names"], cap["speed_labels"])]
    head_w = max(len(h) for h in row_heads)
    cols = [lab.replace(" deg/s", "") for lab in cap["turn_labels"]]
    col_w = max(6, *(len(c) for c in cols))
    lines.append(f"  {'deg/s':>{head_w}}  " + "  ".join(f"{c:>{col_w}}" for c in cols))
    for head, row in zip(row_heads, cap["seconds"]):
        lines.append(f"  {head:>{head_w}}  " + "  ".join(f"{v:>{col_w}.1f}" for v in row))
    lines.append("")

    gaps = report["gaps"]
    if gaps:
        lines.append(f"Gaps (under {report['thin_s']:g} s): a character asked for these "
                     "will get the nearest motion the clips have.")
        n_turn = len(cap["turn_labels"])
        by_speed = {}
        for g in gaps:
            by_speed.setdefault(g["speed"], []).append(g)
        for s_label, name in zip(cap["speed_labels"], cap["speed_names"]):
            row = by_speed.get(s_label, [])
            if len(row) == n_turn and all(g["kind"] == "empty" for g in row):
                lines.append(f"  - {name} ({s_label}): nothing at any turning rate.")
                continue
            lines += [f"  - {g['sentence']}" for g in row]
    else:
        lines.append(f"Every speed and turning rate has at least {report['thin_s']:g} s.")
    return "\n".join(lines) + "\n"
