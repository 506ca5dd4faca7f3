"""Exact nearest-row search over a motion-matching feature database.

The database is an ``(N, D)`` array of feature rows that are already normalised and
weighted, so the cost of a row is the plain squared Euclidean distance to the query.
Rows are consecutive frames of clips. The caller may pass a boolean ``allowed`` mask of
shape ``(N,)`` (tag query combined with end-of-clip validity); rows where it is False
are never returned.

Two ways to search, which always give the same answer:

- :func:`brute_force` scans every row. It is the reference.
- :class:`SearchIndex` is built once from the features and answers the same question
  much faster on large databases, by skipping runs of rows that provably cannot hold
  the answer (see the class docstring for how).

The answer is ``(row, cost)``: the allowed row with the smallest cost; among rows with
the same cost, the one with the lowest index. The cost is computed in float64 in one
fixed way (:func:`_row_costs`), so both searches return bit-identical costs.

long file: the index and its brute-force reference share the input checks and the
one cost function they must agree on bit for bit; they stay side by side.
"""

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "SearchError",
    "NoAllowedRowError",
    "brute_force",
    "SearchIndex",
    "keep_playing",
]

# Rows per chunk in the brute-force scan: keeps the float64 scratch small and in cache.
_BRUTE_CHUNK_ROWS = 2048
# With at most this many allowed rows, the index scans them directly.
_FEW_ALLOWED_ROWS = 4096
# How many of the most promising groups the index scans first to get a good best cost.
_SEED_GROUPS = 4
# From this many groups on, group bounds are computed one column at a time.
_COLUMN_MAJOR_GROUPS = 1024
# Leaves in the first chunk of the index scan; each following chunk is twice as big.
_FIRST_CHUNK_LEAVES = 8
# Largest magnitude the index accepts in features and queries: far beyond normalised
# data, and small enough that no squared distance can overflow float64.
_MAX_MAGNITUDE = 1e100


class SearchError(MotionMatchingError):
    """The search could not run: bad database, bad query or bad mask."""


class NoAllowedRowError(SearchError):
    """The mask allows no row at all, so there is nothing to jump to."""


# --------------------------------------------------------------------------- checks


def _as_features(features):
    """Return the feature database as a 2-D float32 or float64 array, or raise."""
    X = np.asarray(features)
    if X.dtype.kind not in "fiu":
        raise SearchError(
            f"The feature database must hold numbers, not values of type {X.dtype}."
        )
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.ndim != 2:
        raise SearchError(
            f"The feature database must be a table of rows (2 dimensions), "
            f"but it has {X.ndim} dimension(s)."
        )
    if X.shape[0] == 0:
        raise SearchError("The feature database is empty: there is no row to search.")
    if X.shape[1] == 0:
        raise SearchError("The feature database has no columns: there is nothing to compare.")
    return X


def _as_query(query, dim):
    """Return one query as a float64 vector of length ``dim``, or raise."""
    q = np.asarray(query)
    if q.dtype.kind not in "fiu":
        raise SearchError(f"The query must hold numbers, not values of type {q.dtype}.")
    q = q.astype(np.float64)
    if q.ndim != 1 or q.shape[0] != dim:
        raise SearchError(
            f"The query has shape {q.shape} but the feature database has {dim} columns; "
            f"the query must be a single row of {dim} values."
        )
    _check_query_values(q)
    return q


def _check_query_values(q):
    """Raise unless every query value is finite and of sane magnitude."""
    if not np.isfinite(q).all():
        raise SearchError(
            "The query contains NaN or infinite values; check the pose and trajectory "
            "it was built from."
        )
    if q.size and np.abs(q).max() > _MAX_MAGNITUDE:
        raise SearchError("The query contains absurdly large values; check its normalisation.")


def _check_feature_values(X):
    """Raise unless every feature value is finite and of sane magnitude (no big copies)."""
    low, high = X.min(), X.max()  # NaN and infinities show up in these
    if not (np.isfinite(low) and np.isfinite(high)):
        bad = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0])
        raise SearchError(
            f"Feature row {bad} contains NaN or infinite values; rebuild the feature database."
        )
    if max(-float(low), float(high)) > _MAX_MAGNITUDE:
        raise SearchError(
            "The feature database contains absurdly large values; check its normalisation."
        )


def _as_mask(allowed, n_rows):
    """Return the allowed mask as a bool vector of length ``n_rows`` (or None), or raise."""
    if allowed is None:
        return None
    mask = np.asarray(allowed)
    if mask.dtype != np.bool_:
        raise SearchError(
            f"The allowed mask must be True/False values, not values of type {mask.dtype}."
        )
    if mask.shape != (n_rows,):
        raise SearchError(
            f"The allowed mask has shape {mask.shape} but the feature database has "
            f"{n_rows} rows; it needs one True/False value per row."
        )
    if not mask.any():
        raise NoAllowedRowError(
            "No row of the database is allowed (the tag query and clip ends exclude "
            "every frame), so there is nothing to search."
        )
    return mask


# ---------------------------------------------------------------------------- maths


def _row_costs(rows, q):
    """Squared distances from each row of ``rows`` (m, D) to ``q`` (D,), in float64.

    Every search computes costs through this one function, on a fresh C-contiguous
    float64 array, so a row's cost does not depend on which search computed it.
    float32 -> float64 conversion is exact.
    """
    d = np.asarray(rows, dtype=np.float64) - q
    np.multiply(d, d, out=d)
    return np.add.reduce(d, axis=1)


def _box_lower_bounds(lo, hi, q):
    """Lower bound of the cost of any row inside each box ``[lo, hi]`` (k, D).

    In each column a row's value x lies in [lo, hi], so |x - q| is at least the gap
    between q and the interval: lo - q when q is below it, q - hi when above, else 0.
    Summing the squared gaps gives a lower bound of the squared distance.

    In floating point it stays a bound: rounding is monotonic, so each rounded squared
    gap is <= the rounded squared difference of any row in the box. The two sums may
    round differently (different terms, and in principle a different order): a sum of
    D non-negative terms is off by a relative (D - 1) * 2**-53 at most, so shrinking the
    bound by a relative 4 * (D + 2) * 2**-52 more than covers both sums' errors. The
    slack is far too small to cost any pruning.
    """
    gap = np.subtract(lo, q)
    np.maximum(gap, np.subtract(q, hi), out=gap)
    np.maximum(gap, 0.0, out=gap)
    np.multiply(gap, gap, out=gap)
    bounds = np.add.reduce(gap, axis=1)
    bounds *= _bound_slack(q.shape[0])
    return bounds


def _all_box_lower_bounds(lo_t, hi_t, q):
    """The bounds of :func:`_box_lower_bounds` for boxes stored column-major (D, k).

    Used for the full pass over all groups: working one column at a time on long
    contiguous vectors is about twice as fast as the row-major form. Clamping q into
    [lo, hi] and subtracting q gives 0, lo - q or hi - q exactly as rounded there, so the
    squared gaps are the same numbers; only the summation order differs, which the same
    slack covers.
    """
    bounds = np.zeros(lo_t.shape[1])
    gap = np.empty(lo_t.shape[1])
    for lo, hi, value in zip(lo_t, hi_t, q.tolist()):
        np.maximum(lo, value, out=gap)
        np.minimum(gap, hi, out=gap)
        gap -= value
        gap *= gap
        bounds += gap
    bounds *= _bound_slack(q.shape[0])
    return bounds


def _bound_slack(dim):
    """Factor just below 1 that keeps a rounded bound below any rounded row cost."""
    return 1.0 - 4.0 * (dim + 2) * np.finfo(np.float64).eps


def _best_of(rows, costs):
    """The (cost, row) with the smallest cost, lowest row among ties; (inf, -1) if none.

    ``rows`` need not be sorted; disallowed rows carry an infinite cost.
    """
    cost = costs.min()
    if cost == np.inf:
        return np.inf, -1
    return float(cost), int(rows[costs == cost].min())


# ------------------------------------------------------------------------ brute force


def brute_force(features, query, allowed=None):
    """Exact nearest allowed row by scanning every row.

    Args:
        features: ``(N, D)`` float array, normalised and weighted.
        query: ``(D,)`` float array.
        allowed: optional ``(N,)`` bool array; only rows where it is True can be returned.

    Returns:
        ``(row, cost)``: the allowed row with the smallest squared Euclidean distance to
        the query (lowest index among equal distances) and that distance as a float,
        computed in float64.

    Raises:
        NoAllowedRowError: when the mask allows no row.
        SearchError: on an empty database, a query of the wrong length, a NaN or infinite
            query, a non-boolean or wrongly sized mask, or a non-finite feature row.
    """
    X = _as_features(features)
    n_rows, dim = X.shape
    q = _as_query(query, dim)
    mask = _as_mask(allowed, n_rows)

    best_cost, best_row = np.inf, -1
    for start in range(0, n_rows, _BRUTE_CHUNK_ROWS):
        stop = min(start + _BRUTE_CHUNK_ROWS, n_rows)
        costs = _row_costs(X[start:stop], q)
        finite = np.isfinite(costs)
        if not finite.all():
            bad = start + int(np.argmin(finite))
            raise SearchError(
                f"Feature row {bad} is not finite (NaN, infinite or absurdly large "
                f"values); rebuild the feature database."
            )
        if mask is not None:
            costs[~mask[start:stop]] = np.inf
        i = int(np.argmin(costs))  # first occurrence: lowest row among ties
        # Strictly smaller only: an equal cost in a later chunk has a higher row.
        if costs[i] < best_cost:
            best_cost, best_row = float(costs[i]), start + i
    return best_row, best_cost


# ----------------------------------------------------------------------------- index


def _run_bounds(values, size):
    """Per-column min and max over runs of ``size`` consecutive rows (last run may be short)."""
    starts = np.arange(0, values.shape[0], size)
    lo = np.minimum.reduceat(values, starts, axis=0)
    hi = np.maximum.reduceat(values, starts, axis=0)
    return np.ascontiguousarray(lo, dtype=np.float64), np.ascontiguousarray(hi, dtype=np.float64)


def _run_bounds_of_boxes(lo, hi, boxes_per_run):
    """Per-column min of ``lo`` and max of ``hi`` over runs of ``boxes_per_run`` boxes."""
    starts = np.arange(0, lo.shape[0], boxes_per_run)
    return (np.ascontiguousarray(np.minimum.reduceat(lo, starts, axis=0)),
            np.ascontiguousarray(np.maximum.reduceat(hi, starts, axis=0)))


def _any_per_run(mask, size):
    """For each run of ``size`` consecutive entries, whether any entry is True."""
    n_runs = -(-mask.shape[0] // size)
    padded = np.zeros(n_runs * size, dtype=np.bool_)
    padded[: mask.shape[0]] = mask
    return padded.reshape(n_runs, size).any(axis=1)


class _PreparedMask:
    """What a search needs from an allowed mask, computed once per mask.

    Exactly one of two modes:
    - ``few_rows`` is the sorted array of allowed rows when there are few of them
      (the search then scans them directly);
    - otherwise ``rows`` is the mask itself (or None when every row is allowed), and
      ``leaf_any`` / ``group_any`` say which leaves / groups hold an allowed row
      (None when every row is allowed).
    """

    __slots__ = ("few_rows", "rows", "leaf_any", "group_any")

    def __init__(self, few_rows=None, rows=None, leaf_any=None, group_any=None):
        self.few_rows = few_rows
        self.rows = rows
        self.leaf_any = leaf_any
        self.group_any = group_any


class SearchIndex:
    """Exact nearest-row search, accelerated with bounding boxes over runs of frames.

    Consecutive frames have similar features, so the rows of a short run fit in a small
    axis-aligned box. The index stores the per-column min/max of every run of
    ``leaf_size`` rows (leaves, default 16) and of every run of ``group_size`` rows
    (groups, default 64). The distance from the query to a box is a lower bound of the
    cost of every row inside it, so a box whose bound exceeds the best cost found so far
    can be skipped without looking at its rows.

    A search:

    1. bounds every group in one vectorised pass, one numpy operation per column
       (groups without an allowed row get an infinite bound);
    2. scans the rows of the few groups with the smallest bounds, giving a good best cost;
    3. keeps the groups whose bound is <= that best, bounds their leaves, keeps the
       leaves whose bound is <= best and sorts them by bound;
    4. scans those leaves in chunks of growing size, in order of bound, stopping once
       the next bound exceeds the best cost.

    Boxes are skipped only when their bound is strictly greater than the best cost, so a
    row with an equal cost and a lower index is always seen (a bound equal to the best
    cost may hide such a row): the answer, ties included, is exactly that of
    :func:`brute_force`, and the cost is bit-identical since both use :func:`_row_costs`.

    The index keeps a reference to ``features``; do not modify that array afterwards.
    """

    def __init__(self, features, leaf_size=16, group_size=64):
        """Build the index from an ``(N, D)`` float array (vectorised, no loop over rows).

        Raises:
            SearchError: on an empty or non-2-D database, non-finite or absurdly large
                values, or box sizes where ``group_size`` is not a multiple of
                ``leaf_size``.
        """
        X = _as_features(features)
        _check_feature_values(X)
        if not (isinstance(leaf_size, (int, np.integer)) and leaf_size >= 1):
            raise SearchError(f"The leaf size must be a positive whole number, not {leaf_size!r}.")
        if not (isinstance(group_size, (int, np.integer)) and group_size >= leaf_size
                and group_size % leaf_size == 0):
            raise SearchError(
                f"The group size must be a multiple of the leaf size ({leaf_size}), "
                f"not {group_size!r}."
            )
        self._x = X
        self._leaf_size = int(leaf_size)
        self._group_size = int(group_size)
        self._leaves_per_group = self._group_size // self._leaf_size
        self._leaf_lo, self._leaf_hi = _run_bounds(X, leaf_size)
        # A group's box is the union of its leaves' boxes (min/max are exact).
        group_lo, group_hi = _run_bounds_of_boxes(
            self._leaf_lo, self._leaf_hi, self._leaves_per_group
        )
        # Every search bounds all groups: with many groups, one column at a time on a
        # column-major copy is faster; with few, the per-column calls cost more.
        self._group_lo, self._group_hi = group_lo, group_hi
        self._group_lo_t = np.ascontiguousarray(group_lo.T)
        self._group_hi_t = np.ascontiguousarray(group_hi.T)
        self._all_allowed = _PreparedMask()

    @property
    def n_rows(self):
        """Number of rows in the database."""
        return self._x.shape[0]

    @property
    def dim(self):
        """Number of feature columns."""
        return self._x.shape[1]

    # ------------------------------------------------------------------ public API

    def search(self, query, allowed=None):
        """Exact nearest allowed row: the same ``(row, cost)`` as :func:`brute_force`.

        Raises:
            NoAllowedRowError: when the mask allows no row.
            SearchError: on a query of the wrong length, a NaN or infinite query, or a
                non-boolean or wrongly sized mask.
        """
        q = _as_query(query, self.dim)
        prepared = self._prepare_mask(allowed)
        return self._search_one(q, prepared)

    def search_many(self, queries, allowed=None):
        """Search each row of ``queries`` (M, D) with the same mask.

        Returns:
            ``(rows, costs)``: an int64 array and a float64 array of length M, equal to
            calling :meth:`search` on every query in turn.
        """
        Q = np.asarray(queries)
        if Q.dtype.kind not in "fiu":
            raise SearchError(f"The queries must hold numbers, not values of type {Q.dtype}.")
        Q = Q.astype(np.float64)
        if Q.ndim != 2 or Q.shape[1] != self.dim:
            raise SearchError(
                f"The queries have shape {Q.shape} but the feature database has "
                f"{self.dim} columns; they must be a table of rows of {self.dim} values."
            )
        _check_query_values(Q)
        prepared = self._prepare_mask(allowed)
        rows = np.empty(Q.shape[0], dtype=np.int64)
        costs = np.empty(Q.shape[0], dtype=np.float64)
        for i in range(Q.shape[0]):
            rows[i], costs[i] = self._search_one(np.ascontiguousarray(Q[i]), prepared)
        return rows, costs

    # --------------------------------------------------------------------- internals

    def _prepare_mask(self, allowed):
        """Check the mask and derive the per-box flags the search uses."""
        mask = _as_mask(allowed, self.n_rows)
        if mask is None:
            return self._all_allowed
        if np.count_nonzero(mask) <= _FEW_ALLOWED_ROWS:
            return _PreparedMask(few_rows=np.flatnonzero(mask))
        leaf_any = _any_per_run(mask, self._leaf_size)
        group_any = _any_per_run(leaf_any, self._leaves_per_group)
        return _PreparedMask(rows=mask, leaf_any=leaf_any, group_any=group_any)

    def _scan(self, rows, q, mask):
        """Best (cost, row) among ``rows`` (an index array, may repeat), honouring ``mask``."""
        costs = _row_costs(self._x[rows], q)
        if mask is not None:
            costs[~mask[rows]] = np.inf
        return _best_of(rows, costs)

    def _rows_of(self, boxes, size):
        """All row indices of the given runs of ``size`` rows.

        The last run may be short: its missing rows are clipped to the last row, which
        repeats a row already present and so changes no answer.
        """
        rows = (boxes[:, None] * size + np.arange(size)).ravel()
        np.minimum(rows, self.n_rows - 1, out=rows)
        return rows

    def _search_one(self, q, prepared):
        """The search proper, on a checked float64 query and a prepared mask."""
        if prepared.few_rows is not None:
            rows = prepared.few_rows
            best_cost, best_row = _best_of(rows, _row_costs(self._x[rows], q))
            return self._checked(best_row, best_cost)
        mask = prepared.rows

        # 1. Bound every group at once; groups with no allowed row can never win.
        if self._group_lo.shape[0] >= _COLUMN_MAJOR_GROUPS:
            group_bounds = _all_box_lower_bounds(self._group_lo_t, self._group_hi_t, q)
        else:
            group_bounds = _box_lower_bounds(self._group_lo, self._group_hi, q)
        if prepared.group_any is not None:
            group_bounds[~prepared.group_any] = np.inf

        # 2. Scan the few most promising groups to get a good best cost early.
        n_groups = group_bounds.shape[0]
        if n_groups > _SEED_GROUPS:
            # The groups with the lowest bounds, ties to the lowest group (the seeds only
            # change how fast the answer comes, not the answer: steps 3-4).
            seeds = np.argsort(group_bounds, kind="stable")[:_SEED_GROUPS]
        else:
            seeds = np.arange(n_groups)
        best_cost, best_row = self._scan(self._rows_of(seeds, self._group_size), q, mask)
        group_bounds[seeds] = np.inf  # already scanned

        # 3. Keep groups that may hold a row at least as good, then their leaves.
        groups = np.flatnonzero(group_bounds <= best_cost)
        if prepared.group_any is not None:
            groups = groups[prepared.group_any[groups]]
        if groups.size == 0:
            return self._checked(best_row, best_cost)
        leaves = (groups[:, None] * self._leaves_per_group
                  + np.arange(self._leaves_per_group)).ravel()
        leaves = leaves[leaves < self._leaf_lo.shape[0]]
        if prepared.leaf_any is not None:
            leaves = leaves[prepared.leaf_any[leaves]]
        leaf_bounds = _box_lower_bounds(self._leaf_lo[leaves], self._leaf_hi[leaves], q)
        keep = leaf_bounds <= best_cost
        leaves, leaf_bounds = leaves[keep], leaf_bounds[keep]
        order = np.argsort(leaf_bounds, kind="stable")
        leaves, leaf_bounds = leaves[order], leaf_bounds[order]

        # 4. Scan leaves in order of bound, in chunks that double in size, until the
        #    next bound is strictly above the best cost.
        start, chunk = 0, _FIRST_CHUNK_LEAVES
        while start < leaves.shape[0]:
            stop = int(np.searchsorted(leaf_bounds, best_cost, side="right"))
            if stop <= start:
                break
            end = min(start + chunk, stop)
            cost, row = self._scan(self._rows_of(leaves[start:end], self._leaf_size), q, mask)
            if cost < best_cost or (cost == best_cost and 0 <= row < best_row):
                best_cost, best_row = cost, row
            start, chunk = end, chunk * 2

        return self._checked(best_row, best_cost)

    @staticmethod
    def _checked(best_row, best_cost):
        """The answer, after making sure one was found."""
        if best_row < 0:  # unreachable: features and query are finite and bounded
            raise SearchError("No allowed row has a finite distance to the query.")
        return best_row, best_cost


# ----------------------------------------------------------------------- playback


def keep_playing(current_index, best_index, same_clip, window=20):
    """Whether to keep playing the current clip instead of jumping to the best row.

    Jumping to a frame close to the one already playing, in the same clip, gains
    nothing and causes a visible hitch, so the caller should just keep playing.

    Args:
        current_index: row of the frame playing now.
        best_index: row the search returned.
        same_clip: True when both rows belong to the same clip (known to the caller).
        window: how many frames away, before or after, still count as close; >= 0.

    Returns:
        True when ``same_clip`` and ``|best_index - current_index| <= window``.
    """
    if window < 0:
        raise SearchError(f"The keep-playing window must be 0 frames or more, not {window}.")
    return bool(same_clip) and abs(int(best_index) - int(current_index)) <= window
