"""Tags: named frame ranges on a clip, and the frame sets they select.

A tag is a named, inclusive frame range on one clip, ``Tag(name, start, end)``, in
the clip's own 0-based frame indices (the Blender side converts from scene frames).
A name uses letters (any alphabet), digits, ``_``, ``-`` and ``.``; spaces and
every other character are refused, so ``t-pose`` and ``turn.90`` are names but
``turn left`` is not. The words ``and``, ``or``, ``not`` and ``all`` are reserved
by the query language and cannot be tag names. Names match case-insensitively
(``Walk`` and ``walk`` are one tag) but keep the spelling they were given.

Ranges tagged with one of the exclusion names (default :data:`DEFAULT_EXCLUDE_NAMES`)
are left out of the database at build time (:func:`excluded_rows`).

The query language over tags is :mod:`core.database.query`, dance cards are
:mod:`core.database.dance_card` and the coverage report is :mod:`core.database.coverage`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "TagError",
    "DEFAULT_EXCLUDE_NAMES",
    "KEYWORDS",
    "Tag",
    "tag_name_problem",
    "check_tag_name",
    "is_int",
    "validate_tags",
    "range_mask",
    "excluded_rows",
    "tag_masks",
]

DEFAULT_EXCLUDE_NAMES = ("exclude", "tpose", "t-pose", "calibration", "mistake")
KEYWORDS = ("and", "or", "not", "all")

_NAME_RE = re.compile(r"[\w.\-]+")  # \w: letters of any alphabet, digits and '_'


class TagError(MotionMatchingError):
    """A tag, a tag query or a dance card cannot be used."""


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


def is_int(x):
    """True for a whole number (Python or numpy), not a bool."""
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
        if not (is_int(t.start) and is_int(t.end)):
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
