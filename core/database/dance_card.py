"""Dance cards: the list of moves a capture session should record.

A dance card lists the moves to capture. TOML (``.toml``)::

    title = "Locomotion"          # optional

    [[move]]
    name = "walk"                 # required, a valid tag name, unique ignoring case
    duration = 30                 # optional, seconds, > 0
    description = "Straight, any pace"   # optional

JSON (``.json``)::

    {"title": "Locomotion",
     "moves": [{"name": "walk", "duration": 30, "description": "Straight"}]}

File-name rules tag whole clips by the names of their files (see
:mod:`.file_rules`); in TOML ``[[rule]]`` tables, in JSON a ``"rules"`` list::

    [[rule]]
    files = "*walk-turn-left*"    # glob on the file name, ignoring case
    tag = "turn_left"             # a move of the card

Any other key is an error. Without a title, :func:`load_dance_card` uses the file name
without its extension. Files are UTF-8.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

from ..io import text_input
from ..errors import MotionMatchingError
from .file_rules import rules_from_list
from .tags import TagError, tag_name_problem
from ..io.text_input import short_repr

__all__ = [
    "Move",
    "DanceCard",
    "MAX_MOVES",
    "dance_card_from_dict",
    "load_dance_card",
    "save_dance_card",
]


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
    rules: list = field(default_factory=list)   # file_rules.FileRule

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
        out = {"title": self.title, "moves": moves}
        if self.rules:
            out["rules"] = [{"files": r.files, "tag": r.tag} for r in self.rules]
        return out

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
        for r in self.rules:
            lines += ["", "[[rule]]", f"files = {_toml_str(r.files)}", f"tag = {_toml_str(r.tag)}"]
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
    rules_key = "rule" if moves_key == "move" else "rules"
    card = _moves_from_mapping(d, moves_key, rules_key, source, default_title)
    ref = f"dance card {source}" if source else "the dance card"
    card.rules = rules_from_list(d.get(rules_key), ref, [m.name for m in card.moves])
    return card


def _moves_from_mapping(d, moves_key, rules_key, source, default_title):
    ref = f"dance card {source}" if source else "dance card"
    card = "The " + ref
    if not isinstance(d, dict):
        raise TagError(f"{card} must be a table of 'title' and '{moves_key}', not "
                       f"{type(d).__name__}.")
    allowed = _CARD_KEYS + (moves_key, rules_key)
    unknown = [k for k in d if k not in allowed]
    if unknown:
        raise TagError(f"{card} has unknown keys: {_quoted(unknown)}; a dance card has "
                       f"only {_quoted(allowed)}.")
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


