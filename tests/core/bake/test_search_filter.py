"""The look-ahead search prices only the rows a fast filter keeps (LookAheadMatcher._within):
it must choose exactly what costing every row chose, with the same cost bits. Here against
the search as it was (kept below) on random databases: rows repeated (exact ties, also at the
cuts), rows not allowed, the rows near the one playing masked, and few rows."""

import numpy as np
import pytest

from core.bake import look_ahead as la, matching
from core.bake.settings import BakeSettings
from core.database.feature_database import Database
from core.database.feature_spec import FeatureGroup, FeatureSpec
from core.database.normalization import compute_normalization
from core.maths import same_everywhere

FPS = 30.0


def old_search(self, s, cur, can_continue, root=None):
    """LookAheadMatcher.search before the filter: every allowed row's feature cost."""
    qn = self.normalized_query(s, cur)
    d = self.features_t - qn[:, None]
    np.multiply(d, d, out=d)
    cost = same_everywhere.column_sums(d)
    rows, order = self.rows, self.tie_rows
    if cur is not None:
        if can_continue:
            lo, hi = np.searchsorted(rows, (cur - self.window, cur + self.window + 1))
            near = self.row_clips[lo:hi] == self.db.clip_index[cur]
            cost[lo:hi][near] = np.inf
        rows, cost, order = old_with_jump_costs(self, rows, cost, cur)
    pick = la.rank(cost, la.CANDIDATES, order)
    pick = pick[np.isfinite(cost[pick])]
    cand, base = rows[pick], cost[pick]
    if cur is not None and can_continue:
        own = float(np.add.reduce((qn - self.db.features[cur]) ** 2))
        cand, base = np.append(cur, cand), np.append(own, base)
    total = base + self.ahead.future_cost(cand, root, self.sim_pos, self.sim_yaw, s)
    tied = np.flatnonzero(total == total.min())
    plays_on = cur is not None and can_continue and tied[0] == 0
    k = 0 if plays_on else tied[np.argmin(self.tie[cand[tied]])]
    return int(cand[k]), float(base[k])


def old_with_jump_costs(self, rows, cost, cur):
    extra = self.margin * la.MARGIN_SCALE
    few = la.CANDIDATES * matching.PRUNE_FACTOR
    while len(rows) > few:
        cut, after = np.partition(cost, (few - 1, few))[few - 1:few + 1]
        sub = la.smallest(cost, few, self.tie_rows, cut)
        total = cost[sub] + self.ahead.jump_cost(rows[sub], cur) + extra
        kth = np.partition(total, la.CANDIDATES - 1)[la.CANDIDATES - 1]
        if after + la.JUMP_COST + extra > kth:
            return rows[sub], total, self.tie_rows[sub]
        few *= matching.PRUNE_FACTOR
    return rows, cost + self.ahead.jump_cost(rows, cur) + extra, self.tie_rows


def _database(rng, clips, kinds):
    """Clips of random lengths whose feature rows are drawn from ``kinds`` distinct rows (so many
    rows cost exactly the same), with random root motion and foot contacts."""
    spec = FeatureSpec(groups=[FeatureGroup("trajectory_positions", "trajectory_position", times_s=[0.5, 1.0]),
                               FeatureGroup("trajectory_directions", "trajectory_direction", times_s=[0.5, 1.0])])
    lengths = rng.integers(40, 400, clips)
    n = int(lengths.sum())
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    clip_index = np.repeat(np.arange(clips, dtype=np.int32), lengths)
    pool = rng.normal(size=(kinds, spec.dim)) * rng.uniform(0.2, 3.0)
    raw = pool[rng.integers(0, kinds, n)]
    norm = compute_normalization(raw, None, spec)
    db = Database(spec=spec, norm=norm, features=raw.astype(np.float32), raw=raw, clip_index=clip_index,
                  frame_index=(np.arange(n) - offsets[clip_index]).astype(np.int32), valid=np.ones(n, dtype=bool),
                  excluded=np.zeros(n, dtype=bool), clip_names=["c%d" % i for i in range(clips)],
                  clip_fps=np.full(clips, FPS), clip_offsets=offsets, contacts=_steps(rng, n))
    yaw = np.cumsum(rng.normal(0.0, 0.05, n))
    pos = np.column_stack([np.cumsum(rng.normal(0.0, 0.03, n)), np.cumsum(rng.normal(0.0, 0.03, n)), np.zeros(n)])
    quats = np.column_stack([np.cos(yaw / 2), np.zeros(n), np.zeros(n), np.sin(yaw / 2)])
    return db, pos, quats, pool


def _steps(rng, n):
    """(n, 2) foot contacts: stances and swings of 10 to 20 rows, one foot planted while the other swings."""
    left = np.repeat(np.arange(n) % 2 == 0, rng.integers(10, 20, n))[:n]
    return np.column_stack([left, ~left])


def _matcher(rng, db, pos, quats, allowed_share, margin):
    allowed = rng.random(db.num_rows) < allowed_share
    S = 400
    sim = np.column_stack([np.cumsum(rng.normal(0.0, 0.03, S)), np.cumsum(rng.normal(0.0, 0.03, S)), np.zeros(S)])
    settings = BakeSettings.of(look_ahead=1.0, jump_cost_margin=margin)
    return matching.LookAheadMatcher(db, None, allowed, None, settings, sim, np.cumsum(rng.normal(0.0, 0.05, S)),
                                     pos, quats, FPS, None)


def _query(rng, pool, m):
    """A query: a pool row (costs of exactly 0 and many exact ties), or near or far from one."""
    q = pool[rng.integers(0, len(pool))] * m.weights
    kind = rng.integers(0, 3)
    return q if kind == 0 else q + rng.normal(size=q.shape) * (0.01 if kind == 1 else 2.0)


@pytest.mark.parametrize("seed, prune, share, kinds", [(0, 8, 0.9, 40), (1, 8, 0.6, 15), (2, 8, 1.0, 400), (3, 3, 0.3, 5), (4, 8, 0.12, 60), (5, 8, 1.0, 3000),
    (6, 2, 1.0, 200)])
def test_the_filtered_search_chooses_as_costing_every_row(seed, prune, share, kinds, monkeypatch):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(matching, "PRUNE_FACTOR", prune)
    db, pos, quats, pool = _database(rng, int(rng.integers(3, 12)), kinds)
    m = _matcher(rng, db, pos, quats, share, float(rng.choice([0.0, 0.02, 0.3])))
    allowed = np.flatnonzero(m.allowed)
    filtered = []
    pruned = m._pruned_jump_costs
    monkeypatch.setattr(m, "_pruned_jump_costs", lambda *a: filtered.append(pruned(*a)) or filtered[-1])
    cur = None
    for step in range(150):
        for _ in range(int(rng.integers(1, 12))):       # rows played on between searches
            cur = int(rng.choice(allowed)) if cur is None else min(cur + 1, db.num_rows - 1)
            m.played(cur, (float(rng.normal()), float(rng.normal()), float(rng.normal())))
        if step == 0 or rng.random() < 0.1:
            cur = None if step == 0 else int(rng.choice(allowed if rng.random() < 0.8 else np.arange(db.num_rows)))
        qn = _query(rng, pool, m)
        m.normalized_query = lambda s, c: qn
        args = (int(rng.integers(0, 400)), cur, cur is not None and rng.random() < 0.8,
                (float(rng.normal()), float(rng.normal()), float(rng.normal())))
        want = old_search(m, *args)
        got = m.search(*args)
        assert got[0] == want[0] and np.float64(got[1]).tobytes() == np.float64(want[1]).tobytes(), step
    if len(allowed) > la.CANDIDATES * prune:
        assert sum(f[0] is not None for f in filtered) >= 20     # the filter was used, not only costing all


def test_the_filter_keeps_every_row_up_to_the_mth_cost():
    # _within's set holds every row costing at most the m-th smallest cost, ties included.
    rng = np.random.default_rng(7)
    db, pos, quats, pool = _database(rng, 6, 30)
    m = _matcher(rng, db, pos, quats, 1.0, 0.0)
    for _ in range(50):
        qn = _query(rng, pool, m)
        exact = m._feature_costs(qn)
        k = int(rng.integers(1, 300))
        keep = m._within(m._approximate(qn, None), qn, k)
        assert np.all(np.diff(keep) > 0)
        assert set(np.flatnonzero(exact <= np.sort(exact)[k - 1])) <= set(keep.tolist())


def old_smallest(costs, k, order=None, cut=None):
    """look_ahead.smallest before its shortcut (no ties past the cut)."""
    costs = np.asarray(costs)
    if k >= len(costs):
        return np.arange(len(costs))
    if cut is None:
        cut = np.partition(costs, k - 1)[k - 1]
    upto = np.flatnonzero(costs <= cut)
    below, tied = upto[costs[upto] < cut], upto[costs[upto] == cut]
    if order is not None:
        tied = tied[np.argsort(order[tied], kind="stable")]
    return np.sort(np.concatenate([below, tied[:k - len(below)]]))


def test_smallest_picks_as_before_with_and_without_ties():
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        costs = rng.integers(0, int(rng.integers(1, 3 * n + 2)), n).astype(np.float64)
        k = int(rng.integers(1, n + 2))
        order = rng.permutation(n) if rng.random() < 0.5 else None
        cut = None if rng.random() < 0.5 or k >= n else np.partition(costs, k - 1)[k - 1]
        want = old_smallest(costs, k, order, cut)
        got = la.smallest(costs, k, order, cut)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
