"""Which database rows a search may return: validity, tag query, end of ranges."""

import numpy as np

from . import query as tag_query, tags


def allowed_rows(database, query_text, ahead_s=0.0, strict=False):
    """Boolean (N,) mask of a core MotionDatabase: the valid rows, restricted by
    the tag query if any (``ahead_s``: seconds of selected frames a row needs
    after it, the bake setting Tag Query Lead; ``strict``: its whole trajectory
    future, Strict Tag Query). Raises TagError with a plain sentence when the
    query is malformed, names an unknown tag or selects nothing playable."""
    if not query_text or not query_text.strip():
        return database.matching.valid.copy()
    query = tag_query.parse_query(query_text)
    return tag_query.database_query_rows(database.matching, database.tags, query, ahead_s=ahead_s, strict=strict)


def bake_rows(database, query_text, settings):
    """(searchable, playable) rows of a bake with ``settings`` (core BakeSettings):
    the rows a search may return, and those the bake plays on through once there
    (it searches again as soon as the row playing is not one of them). Under the
    strict rule both are the strict rows; otherwise the query's frames are
    playable and those with the lead searchable."""
    if settings.tags.strict_tag_query:
        rows = allowed_rows(database, query_text, strict=True)
        return rows, rows
    return (allowed_rows(database, query_text, ahead_s=settings.tags.tag_query_ahead),
            playable_rows(database, query_text))


def playable_rows(database, query_text):
    """(N,) the rows the bake plays on through once reached: every frame the query
    selects that is not excluded, up to its clip's last frame. A row near a clip's
    end is not searchable (its trajectory future is cut), but its motion is whole:
    in takes cut in clips of a few seconds, the last second of each is a third of
    the data, and stopping there would end every piece early."""
    db = database.matching
    rows = ~np.asarray(db.excluded, dtype=bool)
    if query_text and query_text.strip():
        masks = tags.tag_masks(database.tags, db.clip_offsets, db.clip_names)
        rows &= tag_query.parse_query(query_text).evaluate(masks, db.num_rows)
    return rows


class QueryRows:
    """:func:`bake_rows` of one database and settings, made once per distinct
    query (its text stripped): a bake whose query changes over time (moves)
    asks for the same query's rows again and again."""

    def __init__(self, database, settings):
        self.database, self.settings = database, settings
        self.made = {}

    def __call__(self, query_text):
        key = (query_text or "").strip()
        if key not in self.made:
            self.made[key] = bake_rows(self.database, key, self.settings)
        return self.made[key]

    def selected(self, query_text):
        """(N,) the rows ``query_text`` selects, exclusions aside (every row for an empty query)."""
        db = self.database.matching
        if not query_text or not query_text.strip():
            return np.ones(db.num_rows, dtype=bool)
        masks = tags.tag_masks(self.database.tags, db.clip_offsets, db.clip_names)
        return tag_query.parse_query(query_text).evaluate(masks, db.num_rows)
