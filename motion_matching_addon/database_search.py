"""Which database rows a search may return: validity, tag query, end of ranges."""

import json

from ..core import tag_query as core_tag_query
from ..core import tags as core_tags


def clip_tags(arrays):
    """The stored tags of every clip, as core Tags (0-based clip frames)."""
    return [[core_tags.Tag(t["name"], t["start"], t["end"]) for t in clip]
            for clip in json.loads(str(arrays["tags_json"]))]


def allowed_rows(db, arrays, query_text):
    """Boolean (N,) mask: the valid rows, restricted by the tag query if any.
    Raises TagError with a plain sentence when the query is malformed, names an
    unknown tag or selects nothing playable."""
    if not query_text or not query_text.strip():
        return db.valid.copy()
    query = core_tag_query.parse_query(query_text)
    return core_tag_query.database_query_rows(db, clip_tags(arrays), query)
