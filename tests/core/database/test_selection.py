"""core.database.selection: the rows a bake's search may return and those it
plays on through, from the tag query and its lead (no Blender)."""

import numpy as np
import pytest

from core.bake.settings import BakeSettings
from core.database import selection
from core.database.tags import TagError
from walk_database import FPS, walk_database


@pytest.fixture(scope="module")
def database():
    # Clip 0 tagged "fast" on frames 0-59 (its first two seconds), clip 1 "slow" on all of it.
    return walk_database(tags=(("fast", 0, 59), ("slow", 0, 119)))


def test_no_query_gives_the_valid_rows(database):
    for text in ("", "   "):
        rows = selection.allowed_rows(database, text)
        np.testing.assert_array_equal(rows, database.matching.valid)
        assert rows is not database.matching.valid      # a copy: changing it changes nothing


def test_a_query_keeps_its_frames_and_the_lead_cuts_each_range(database):
    offsets = database.matching.clip_offsets
    fast = selection.allowed_rows(database, "fast")
    assert np.flatnonzero(fast).tolist() == list(range(0, 60))
    lead = selection.allowed_rows(database, "fast", ahead_s=0.5)
    assert np.flatnonzero(lead).tolist() == list(range(0, 60 - int(0.5 * FPS)))
    slow = selection.allowed_rows(database, "slow")
    assert np.flatnonzero(slow).min() == offsets[1] and not slow[:offsets[1]].any()


def test_bake_rows_follow_the_strict_setting(database):
    searchable, playable = selection.bake_rows(database, "fast", BakeSettings.of(tag_query_ahead=0.5))
    np.testing.assert_array_equal(playable, selection.allowed_rows(database, "fast"))
    np.testing.assert_array_equal(searchable, selection.allowed_rows(database, "fast", ahead_s=0.5))
    strict_s, strict_p = selection.bake_rows(database, "fast", BakeSettings.of(strict_tag_query=True))
    np.testing.assert_array_equal(strict_s, strict_p)
    np.testing.assert_array_equal(strict_s, selection.allowed_rows(database, "fast", strict=True))
    assert strict_s.sum() < playable.sum()


def test_an_unknown_tag_is_one_sentence(database):
    with pytest.raises(TagError) as error:
        selection.allowed_rows(database, "fast and limp")
    assert "limp" in str(error.value) and str(error.value).endswith(".")


def test_playable_rows_run_to_each_clips_last_frame(database):
    # A row near a clip's end cannot be searched (its trajectory future is cut) but
    # plays on: the whole clip is playable, so a piece is not ended a second early.
    db = database.matching
    searchable, playable = selection.bake_rows(database, "", BakeSettings.of())
    np.testing.assert_array_equal(searchable, db.valid)
    np.testing.assert_array_equal(playable, ~db.excluded)
    for c in range(len(db.clip_offsets) - 1):
        last = int(db.clip_offsets[c + 1]) - 1
        assert playable[last] and not searchable[last]
    # With a query: its frames to their last, whatever the trajectory's future.
    _, slow = selection.bake_rows(database, "slow", BakeSettings.of())
    assert np.flatnonzero(slow).tolist() == list(range(int(db.clip_offsets[1]), int(db.clip_offsets[2])))
