"""File-name rules: tag whole clips by the names of the files they came from.

A rule pairs a glob pattern with a tag, e.g. ``*walk-turn-left*`` -> ``turn_left``.
Patterns are matched against the file's name alone (no folder), ignoring case,
with :mod:`fnmatch` wildcards: ``*`` any text, ``?`` one character, ``[abc]`` one
of the characters. A clip gets the tag of every rule its file name matches, in
the order of the rules, each tag once.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from .tags import TagError, tag_name_problem
from ..io.text_input import short_repr

RULE_KEYS = ("files", "tag")
MAX_RULES = 10000


@dataclass(frozen=True)
class FileRule:
    """Files whose name matches ``files`` (a glob) get the tag ``tag`` on every frame."""

    files: str
    tag: str

    def matches(self, file_name):
        return fnmatch.fnmatchcase(os.path.basename(file_name).lower(), self.files.lower())


def _describe(i, raw):
    """'Rule 2 ('*walk*' -> turn_left)': how a sentence names a rule."""
    if isinstance(raw, dict) and isinstance(raw.get("files"), str):
        shown = "'%s'" % raw["files"]
        if isinstance(raw.get("tag"), str):
            shown += " -> %s" % raw["tag"]
        return "Rule %d (%s)" % (i, shown)
    return "Rule %d" % i


def check_rule(i, raw, ref, moves):
    """The :class:`FileRule` of the ``i``-th (1-based) rule table ``raw`` of the
    dance card ``ref`` whose move names are ``moves``; raises TagError naming
    the rule when it cannot be used."""
    where = "%s of %s" % (_describe(i, raw), ref)
    if not isinstance(raw, dict):
        raise TagError(f"{where} is not a table of 'files' and 'tag'.")
    unknown = [k for k in raw if k not in RULE_KEYS]
    if unknown:
        raise TagError(f"{where} has unknown keys: {', '.join(repr(k) for k in unknown)}; "
                       "a rule has only 'files' and 'tag'.")
    files = raw.get("files")
    if not isinstance(files, str) or not files.strip():
        raise TagError(f"{where} has no 'files' pattern; write one, e.g. files = \"*walk-turn-left*\".")
    if "/" in files or "\\" in files:
        raise TagError(f"{where} has a folder in its pattern {short_repr(files)}; rules match file names only.")
    tag = raw.get("tag")
    if tag is None:
        raise TagError(f"{where} has no 'tag'; write the move it stands for, e.g. tag = \"turn_left\".")
    problem = tag_name_problem(tag)
    if problem is not None:
        raise TagError(f"{where} has the tag {short_repr(tag)}, which is not a valid tag name: {problem}.")
    known = {m.lower(): m for m in moves}
    if tag.lower() not in known:
        raise TagError(f"{where} tags files '{tag}', which is no move of the card; add a move named "
                       f"'{tag}' or correct the rule (moves: {', '.join(moves) or 'none'}).")
    return FileRule(files.strip(), known[tag.lower()])


def rules_from_list(raw_rules, ref, moves):
    """The rules of a dance card (a list of tables, or None for none)."""
    if raw_rules is None:
        return []
    if not isinstance(raw_rules, list):
        raise TagError(f"The rules of {ref} are not a list; write each rule as a table of 'files' and 'tag'.")
    if len(raw_rules) > MAX_RULES:
        raise TagError(f"{ref} has {len(raw_rules)} rules; a dance card has at most {MAX_RULES}.")
    return [check_rule(i, r, ref, moves) for i, r in enumerate(raw_rules, 1)]


def tags_for_file(rules, file_name):
    """The tags the rules give the file ``file_name`` (rule order, each once)."""
    out, seen = [], set()
    for rule in rules:
        if rule.matches(file_name) and rule.tag.lower() not in seen:
            seen.add(rule.tag.lower())
            out.append(rule.tag)
    return out
