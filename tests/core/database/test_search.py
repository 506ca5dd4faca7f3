"""Tests of core.database.search: exact nearest allowed row, by brute force and by SearchIndex."""

import math

import numpy as np
import pytest

from core.database import search
from core.errors import MotionMatchingError


# ---------------------------------------------------------------------- helpers


def smooth_walk(rng, n_rows, dim, dtype=np.float32):
    """Consecutive rows close together, like frames of motion capture."""
    X = np.cumsum(rng.normal(0.0, 0.1, size=(n_rows, dim)), axis=0)
    return X.astype(dtype)


def noisy_rows(rng, X, count, sigma=0.1):
    """Queries made of random rows of X plus gaussian noise."""
    rows = rng.integers(0, X.shape[0], size=count)
    return X[rows].astype(np.float64) + rng.normal(0.0, sigma, size=(count, X.shape[1]))


def naive_nearest(X, q, allowed=None):
    """Reference: plain Python loop, exactly rounded sums, first row wins ties."""
    best_row, best_cost = -1, math.inf
    for i, row in enumerate(np.asarray(X, dtype=np.float64).tolist()):
        if allowed is not None and not allowed[i]:
            continue
        cost = math.fsum((x - v) ** 2 for x, v in zip(row, q.tolist()))
        if cost < best_cost:
            best_row, best_cost = i, cost
    return best_row, best_cost


def assert_index_matches_brute(X, queries, allowed=None, **index_args):
    """SearchIndex.search gives brute_force's row and bit-identical cost for each query."""
    index = search.SearchIndex(X, **index_args)
    for q in queries:
        expected = search.brute_force(X, q, allowed)
        got = index.search(q, allowed)
        assert got == expected, (q, got, expected)
        assert isinstance(got[0], int) and isinstance(got[1], float)


@pytest.fixture(params=["row-major", "column-major"])
def group_layout(request, monkeypatch):
    """Run a test with group bounds computed both ways (normally chosen by size)."""
    threshold = 1 if request.param == "column-major" else 10**9
    monkeypatch.setattr(search, "_COLUMN_MAJOR_GROUPS", threshold)
    return request.param


@pytest.fixture
def mask_path(monkeypatch):
    """Force the index through its box-skipping path even for few allowed rows."""
    monkeypatch.setattr(search, "_FEW_ALLOWED_ROWS", 0)


# ------------------------------------------------------------------ brute force


@pytest.mark.parametrize("dim", [1, 3, 27])
def test_brute_force_matches_naive_reference(dim):
    rng = np.random.default_rng(dim)
    X = rng.normal(size=(300, dim))
    for q in rng.normal(size=(20, dim)):
        allowed = rng.random(300) < 0.4
        row, cost = search.brute_force(X, q, allowed)
        ref_row, ref_cost = naive_nearest(X, q, allowed)
        assert row == ref_row
        assert allowed[row]
        assert cost == pytest.approx(ref_cost, rel=1e-12, abs=1e-300)


def test_brute_force_float32_cost_is_computed_in_float64():
    X = np.array([[0.1, 0.2], [3.0, 4.0]], dtype=np.float32)
    q = np.array([0.0, 0.0])
    row, cost = search.brute_force(X, q)
    exact = float(np.float64(np.float32(0.1)) ** 2 + np.float64(np.float32(0.2)) ** 2)
    assert row == 0
    assert cost == pytest.approx(exact, rel=1e-15)
    assert cost != pytest.approx(0.05, rel=1e-12)  # not the float32-free value


def test_brute_force_ties_pick_lowest_row():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    X[[37, 200, 480]] = X[480]  # three identical rows, far apart
    q = X[480] + 0.01
    assert search.brute_force(X, q)[0] == 37
    allowed = np.ones(500, dtype=bool)
    allowed[37] = False
    assert search.brute_force(X, q, allowed)[0] == 200


def test_brute_force_ties_across_chunks(monkeypatch):
    monkeypatch.setattr(search, "_BRUTE_CHUNK_ROWS", 7)
    X = np.zeros((50, 2))
    X[:, 0] = np.arange(50)
    X[[3, 10, 45]] = [100.0, 100.0]  # duplicates in different chunks
    row, cost = search.brute_force(X, np.array([100.0, 100.0]))
    assert (row, cost) == (3, 0.0)


# --------------------------------------------------------------------- the index


@pytest.mark.parametrize("n_rows", [1, 15, 16, 17, 63, 65, 1000, 1037])
@pytest.mark.parametrize("dim", [1, 27])
def test_index_equals_brute_force_on_smooth_data(n_rows, dim, group_layout):
    rng = np.random.default_rng(n_rows * 100 + dim)
    X = smooth_walk(rng, n_rows, dim)
    queries = np.concatenate([
        noisy_rows(rng, X, 15),
        X[rng.integers(0, n_rows, size=3)].astype(np.float64),  # exact rows: cost 0
        rng.normal(0.0, 5.0, size=(2, dim)),  # far from everything
    ])
    assert_index_matches_brute(X, queries)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_index_equals_brute_force_on_unstructured_data(dtype, group_layout):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(2011, 6)).astype(dtype)
    assert_index_matches_brute(X, noisy_rows(rng, X, 30, sigma=0.5))


def test_index_equals_brute_force_with_many_duplicates(mask_path, group_layout):
    rng = np.random.default_rng(3)
    # Values in {0, 1, 2}: most queries have many rows at exactly the best cost.
    X = rng.integers(0, 3, size=(1500, 3)).astype(np.float32)
    queries = rng.integers(0, 3, size=(40, 3)).astype(np.float64)
    queries[20:] += 0.5  # exact ties between different rows, not only copies
    assert_index_matches_brute(X, queries)
    allowed = rng.random(1500) < 0.3
    assert_index_matches_brute(X, queries, allowed)


def test_index_tie_in_a_box_seen_later(monkeypatch):
    """The lower-index copy sits in a box searched after the higher-index copy's box."""
    monkeypatch.setattr(search, "_SEED_GROUPS", 1)
    q = np.array([0.0, 0.0])
    X = np.full((64 * 8, 2), 100.0)  # far groups
    X[0:64] = [1.0, 0.0]  # group 0: a single point at cost 1
    X[64:128] = [[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0], [0.0, -3.0]] * 16  # box around q
    X[100] = [1.0, 0.0]  # same point, higher row, in the box with bound 0
    index = search.SearchIndex(X)
    assert search.brute_force(X, q) == (0, 1.0)
    assert index.search(q) == (0, 1.0)


def test_index_tie_inside_one_scan_chunk():
    X = np.zeros((40, 2))
    X[:, 0] = np.arange(40) + 10.0
    X[[33, 5, 20]] = [0.0, 1.0]  # equal-cost rows
    X[[34, 6]] = [0.0, -1.0]
    index = search.SearchIndex(X)
    assert index.search(np.zeros(2)) == (5, 1.0)


@pytest.mark.parametrize("density", [0.9, 0.3, 0.02])
def test_index_equals_brute_force_with_masks(mask_path, density, group_layout):
    rng = np.random.default_rng(int(density * 100))
    X = smooth_walk(rng, 2500, 27)
    index = search.SearchIndex(X)
    for q in noisy_rows(rng, X, 20):
        allowed = rng.random(2500) < density
        assert index.search(q, allowed) == search.brute_force(X, q, allowed)


@pytest.mark.parametrize("force_boxes", [False, True])
def test_index_with_a_single_allowed_row(monkeypatch, force_boxes):
    if force_boxes:
        monkeypatch.setattr(search, "_FEW_ALLOWED_ROWS", 0)
    rng = np.random.default_rng(11)
    X = smooth_walk(rng, 1000, 5)
    index = search.SearchIndex(X)
    for only in (0, 517, 999):
        allowed = np.zeros(1000, dtype=bool)
        allowed[only] = True
        q = X[3].astype(np.float64)  # nearest overall is row 3, which is not allowed
        row, cost = index.search(q, allowed)
        assert row == only
        assert (row, cost) == search.brute_force(X, q, allowed)


def test_index_skips_most_rows_on_smooth_data(monkeypatch):
    """The boxes must actually prune: far fewer rows get their exact cost computed."""
    rng = np.random.default_rng(5)
    X = smooth_walk(rng, 20000, 27)
    index = search.SearchIndex(X)
    counted = []
    real_row_costs = search._row_costs

    def counting_row_costs(rows, q):
        counted.append(len(rows))
        return real_row_costs(rows, q)

    monkeypatch.setattr(search, "_row_costs", counting_row_costs)
    for q in noisy_rows(rng, X, 10, sigma=0.05):
        index.search(q)
    assert sum(counted) / 10 < 0.1 * X.shape[0]


def test_search_many_equals_loop(mask_path):
    rng = np.random.default_rng(9)
    X = smooth_walk(rng, 3000, 8)
    index = search.SearchIndex(X)
    Q = noisy_rows(rng, X, 25)
    allowed = rng.random(3000) < 0.5
    rows, costs = index.search_many(Q, allowed)
    assert rows.dtype == np.int64 and costs.dtype == np.float64
    assert [index.search(q, allowed) for q in Q] == list(zip(rows.tolist(), costs.tolist()))
    rows, costs = index.search_many(np.empty((0, 8)))
    assert rows.shape == costs.shape == (0,)


# ------------------------------------------------------------------------ errors


def _raises_search_error(call, *words, kind=search.SearchError):
    with pytest.raises(kind) as caught:
        call()
    message = str(caught.value)
    assert isinstance(caught.value, MotionMatchingError)
    assert message[0].isupper() and message.endswith(".")
    for word in words:
        assert word in message, message


def test_errors_are_readable_search_errors():
    X = np.zeros((10, 3))
    index = search.SearchIndex(X)
    q = np.zeros(3)
    nothing = np.zeros(10, dtype=bool)
    for call in (lambda: search.brute_force(X, q, nothing), lambda: index.search(q, nothing),
                 lambda: index.search_many(np.zeros((2, 3)), nothing)):
        _raises_search_error(call, "allowed", kind=search.NoAllowedRowError)
    for call in (lambda: search.brute_force(X, np.zeros(4)), lambda: index.search(np.zeros(2)),
                 lambda: index.search_many(np.zeros((2, 4)))):
        _raises_search_error(call, "3 columns")
    for bad in (np.nan, np.inf):
        q_bad = np.array([0.0, bad, 0.0])
        _raises_search_error(lambda: search.brute_force(X, q_bad), "NaN")
        _raises_search_error(lambda: index.search(q_bad), "NaN")
    for empty in (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.float32)):
        _raises_search_error(lambda: search.brute_force(empty, q), "empty")
        _raises_search_error(lambda: search.SearchIndex(empty), "empty")
    _raises_search_error(lambda: index.search(q, np.ones(9, dtype=bool)), "10 rows")
    _raises_search_error(lambda: index.search(q, np.ones(10, dtype=int)), "True/False")
    _raises_search_error(lambda: search.SearchIndex(np.zeros(5)), "dimension")


def test_non_finite_features_are_rejected():
    X = np.zeros((20, 3))
    X[13, 1] = np.nan
    _raises_search_error(lambda: search.SearchIndex(X), "row 13")
    _raises_search_error(lambda: search.brute_force(X, np.zeros(3)), "row 13")


def test_bad_box_sizes_are_rejected():
    _raises_search_error(lambda: search.SearchIndex(np.zeros((5, 2)), 16, 40), "multiple")
    _raises_search_error(lambda: search.SearchIndex(np.zeros((5, 2)), 0, 64), "leaf size")


# ------------------------------------------------------------------- keep playing


def test_keep_playing():
    assert search.keep_playing(100, 100, True)
    assert search.keep_playing(100, 120, True)
    assert not search.keep_playing(100, 121, True)
    assert search.keep_playing(100, 95, True)  # a few frames back: no jump either
    assert not search.keep_playing(100, 105, False)  # another clip: always jump
    assert search.keep_playing(10, 13, True, window=3)
    assert not search.keep_playing(10, 14, True, window=3)
    assert not search.keep_playing(10, 11, True, window=0)
    assert search.keep_playing(np.int64(7), np.int64(7), np.bool_(True), window=0)
    _raises_search_error(lambda: search.keep_playing(1, 1, True, window=-1), "window")
