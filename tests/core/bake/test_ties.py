"""Choices among equal costs follow one rule, whatever numpy's version or the
processor: the search takes the lowest row; the look-ahead keeps and ranks
candidates by cost, then lowest frame, then lowest clip, and among equal totals
plays on first. Databases of exact duplicates (a clip added twice, a pose held
still) make every cost tie."""

import numpy as np
import pytest

from core.bake import look_ahead as la
from core.bake import pipeline as bake
from core.database import search

from test_look_ahead import FPS, _bake, _clip, _database, _straight_path


def _reference(costs, order, k):
    return sorted(range(len(costs)), key=lambda i: (costs[i], order[i]))[:k]


def test_smallest_and_rank_keep_the_lowest_in_order_among_ties():
    costs = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    assert la.smallest(costs, 3).tolist() == [0, 1, 4]
    assert la.smallest(costs, 3, order=np.arange(6)[::-1]).tolist() == [1, 4, 5]
    assert la.rank(costs, 4).tolist() == [1, 4, 0, 2]
    assert la.rank(costs, 9).tolist() == [1, 4, 0, 2, 3, 5]


def test_the_candidates_do_not_depend_on_how_ties_arrive():
    rng = np.random.default_rng(7)
    costs = rng.integers(0, 4, 300).astype(np.float64)     # every cost tied with ~75 others
    order = rng.permutation(300)
    want = [(costs[i], order[i]) for i in _reference(costs, order, 24)]
    for _ in range(20):
        p = rng.permutation(300)        # the same rows handed over in another order
        got = p[la.rank(costs[p], 24, order[p])]
        assert [(costs[i], order[i]) for i in got] == want


def test_tie_order_is_lowest_frame_then_lowest_clip():
    db = _database([_clip(0.1), _clip(0.1)])[0]     # 6 frames each
    place = la.tie_order(db)
    ranked = np.argsort(place)
    assert list(zip(db.frame_index[ranked], db.clip_index[ranked]))[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_search_of_a_clip_added_twice_and_a_held_pose_takes_the_lowest_row():
    rng = np.random.default_rng(2)
    clip = rng.normal(size=(300, 12))
    clip[40:200] = clip[40]                     # a pose held still for 160 frames
    features = np.concatenate([clip, clip])     # the clip added twice
    index = search.SearchIndex(features)
    for row in (5, 40, 120, 250):
        q = features[row]
        want = 40 if 40 <= row < 200 else row
        assert search.brute_force(features, q) == (want, 0.0)
        assert index.search(q) == (want, 0.0)
    allowed = np.ones(600, dtype=bool)
    allowed[:100] = False                       # the held pose's first frames may not play
    assert index.search(features[120], allowed)[0] == 100
    allowed[:300] = False                       # nor the first copy
    assert index.search(features[120], allowed)[0] == 340


@pytest.fixture(scope="module")
def clip_twice():
    walk = _clip(6.0)
    return _database([walk, walk])


def test_the_greedy_bake_of_a_clip_added_twice_plays_the_first_copy(clip_twice):
    path = _straight_path()
    path[:, 0] += 0.3 * np.sin(np.arange(len(path)) / FPS)     # a weave: searches jump
    result = _bake(clip_twice, path, look_ahead=0.0)
    assert result.jumped.sum() > 0
    assert np.all(clip_twice[0].clip_index[result.rows] == 0)


def test_the_look_ahead_of_a_clip_added_twice_prefers_the_first_copy(clip_twice):
    # Every row of the second copy ties with the same frame of the first: the
    # look-ahead may pick the second copy only where the first copy's frame was
    # no jump (within the keep window of the frame playing, in the same clip).
    db = clip_twice[0]
    path = _straight_path()
    path[:, 0] += 0.3 * np.sin(np.arange(len(path)) / FPS)
    result = _bake(clip_twice, path, look_ahead=1.0)
    window = bake.BakeSettings().search.keep_window
    rows, n = result.rows, db.clip_offsets[1]
    assert db.clip_index[rows[0]] == 0
    for s in np.flatnonzero(result.jumped):
        if db.clip_index[rows[s]] == 1:
            before = rows[s - 1]
            assert db.clip_index[before] == 0 and abs(int(rows[s] - n) - int(before)) <= window + 1
    # And the same bake again gives the same rows.
    assert np.array_equal(_bake(clip_twice, path, look_ahead=1.0).rows, rows)
