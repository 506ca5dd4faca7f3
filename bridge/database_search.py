"""Which database rows a search may return: validity, tag query, end of ranges."""

import json

from ..core.database import query as core_tag_query
from ..core.database import tags as core_tags


def clip_tags(arrays):
    """The stored tags of every clip, as core Tags (0-based clip frames)."""
    return [[core_tags.Tag(t["name"], t["start"], t["end"]) for t in clip]
            for clip in json.loads(str(arrays["tags_json"]))]


def allowed_rows(db, arrays, query_text, ahead_s=0.0, strict=False):
    """Boolean (N,) mask: the valid rows, restricted by the tag query if any
    (``ahead_s``: seconds of selected frames a row needs after it, the bake setting
    Tag Query Lead; ``strict``: its whole trajectory future, Strict Tag Query).
    Raises TagError with a plain sentence when the query is malformed, names an
    unknown tag or selects nothing playable."""
    if not query_text or not query_text.strip():
        return db.valid.copy()
    query = core_tag_query.parse_query(query_text)
    return core_tag_query.database_query_rows(db, clip_tags(arrays), query, ahead_s=ahead_s, strict=strict)


def bake_rows(db, arrays, query_text, settings):
    """(searchable, playable) rows of a bake with ``settings`` (core BakeSettings):
    the rows a search may return, and those the bake plays on through once there
    (it searches again as soon as the row playing is not one of them). Under the
    strict rule both are the strict rows; otherwise the query's frames are
    playable and those with the lead searchable."""
    if settings.tags.strict_tag_query:
        rows = allowed_rows(db, arrays, query_text, strict=True)
        return rows, rows
    return (allowed_rows(db, arrays, query_text, ahead_s=settings.tags.tag_query_ahead),
            allowed_rows(db, arrays, query_text))
