"""Moves along the timeline in a bake: the rows each simulation step may
search (core.bake.moves_search.StepRows), every move checked before anything
runs, and what the report says of each move.

Each distinct query's rows are made once (core.database.selection.QueryRows).
A move is refused, with a sentence naming it, its frame and its query, when its
query names a tag no clip has, or leaves no row to search, or fewer than the
look-ahead ranks (core.bake.look_ahead.CANDIDATES) when the look-ahead is on.
"""

import numpy as np

from ..bake import look_ahead
from ..bake.moves_search import StepRows
from ..bake.pipeline import step_index
from ..bake.settings import BakeError
from ..database import selection
from ..database.tags import TagError


class MoveError(BakeError):
    """A move along the timeline the bake cannot use."""


def _fewest(settings):
    """Rows a move must leave to search: the look-ahead's candidates when it is on, else one."""
    return look_ahead.CANDIDATES if settings.look_ahead.on else 1


def checked_rows(database, moves, base_query, settings):
    """The :class:`core.database.selection.QueryRows` of the bake, every move's
    rows made (so checked) in order; raises :class:`MoveError` naming the first
    move that cannot be baked. The scene's own query is refused as it always was
    (TagError), before any move."""
    rows = selection.QueryRows(database, settings)
    rows(base_query)
    fewest = _fewest(settings)
    for i, query in enumerate(moves.queries):
        if not query:
            continue
        try:
            allowed, _playable = rows(query)
        except TagError as ex:
            raise MoveError("%s cannot be baked: %s" % (moves.describe(i), _lower_first(str(ex)))) from None
        count = int(np.count_nonzero(allowed))
        if count < fewest:
            raise MoveError("%s cannot be baked: it leaves %d frame%s to search, and the look-ahead ranks %d; "
                            "tag more frames or widen the query." % (moves.describe(i), count,
                                                                      "" if count == 1 else "s", fewest))
    return rows


def _lower_first(text):
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def step_rows(database, moves, base_query, settings, steps):
    """(allowed, playable, StepRows or None) of a bake whose simulation steps lie
    on the scene frames ``steps`` (S,): with one query in force on every step,
    its rows and None (the bake of that one query, bit for bit); else the first
    step's rows and the :class:`StepRows`."""
    rows = checked_rows(database, moves, base_query, settings)
    which, texts = moves.in_force(steps, base_query)
    made = [rows(t) for t in texts]
    per_step = StepRows(which=which, rows=made, texts=texts)
    first = made[int(which[0])]
    if per_step.single():
        return first[0], first[1], None
    return first[0], first[1], per_step


def moves_report(database, moves, base_query, result, frames, times):
    """Per move: its frame, its query (the scene's when it clears), the first
    and last frames of the bake it holds for and how many, and the share of
    those frames whose played row carries its query (None when it holds for no
    frame), and the first of them that does (``on_tags_from``: its transition
    ends there; None when none does). ``frames`` (F,) the scene frames keyed, ``times`` their seconds."""
    rows = selection.QueryRows(database, None)
    played = np.asarray(result.rows)[step_index(result, times)]
    whole = np.rint(np.asarray(frames)).astype(np.int64)
    out = []
    for i, lo, hi in moves.stretches(int(whole[0]), int(whole[-1])):
        query = moves.queries[i] or (base_query or "").strip()
        entry = {"frame": float(moves.frames[i]), "query": query, "first_frame": lo, "last_frame": hi,
                 "frames": 0, "share": None}
        if lo is not None:
            on = (whole >= lo) & (whole <= hi)
            carries = rows.selected(query)[played[on]]
            entry.update(frames=int(on.sum()), share=float(np.mean(carries)),
                         on_tags_from=int(whole[on][np.argmax(carries)]) if carries.any() else None)
        out.append(entry)
    return out
