"""Stage 2 of the bake: the search. A step's query (the playing row's pose
features and the spring character's trajectory) against the allowed rows:
greedy (nearest row), or with the path's future in view (core.bake.look_ahead)."""

import hashlib

import numpy as np

from ..database import feature_spec
from ..database.search import SearchIndex
from ..maths import springs
from ..maths import transforms as tf
from . import look_ahead as la
from .rows import yaw_of
from ..maths import same_everywhere


def make_matcher(db, traj, allowed, index, settings, sim, sim_yaw, root_positions, root_quats, fps, turn, playable=None,
                 cache=None):
    """Stage 2's search: greedy, or with the future in view when ``settings.look_ahead.on``
    (``turn()`` gives each row's body facing off its root's, see :func:`body_turn`).
    ``cache(key, make)`` (optional): the look-ahead's tables, which depend on the
    database and the rows allowed only, made once through it."""
    if settings.look_ahead.on and root_positions is not None and root_quats is not None:
        # The look-ahead's dead ends are where the rows it can play through run out.
        ends = allowed if playable is None else np.asarray(playable, dtype=bool) | allowed

        def tables():
            rows = np.flatnonzero(allowed)
            return (la.look_ahead_tables(db, root_positions, root_quats, ends, fps, settings.look_ahead.seconds,
                                         turn()),
                    np.ascontiguousarray(np.asarray(db.features[rows], dtype=np.float64).T), la.tie_order(db))
        key = "look_ahead_%s_%r_%r" % (hashlib.sha1(np.asarray(allowed, dtype=bool).tobytes()
                                                    + np.asarray(ends, dtype=bool).tobytes()).hexdigest(),
                                       settings.look_ahead.seconds, float(fps))
        return LookAheadMatcher(db, traj, allowed, index, settings, np.asarray(sim.positions, dtype=np.float64),
                                 sim_yaw, root_positions, root_quats, fps, None, playable,
                                 tables() if cache is None else cache(key, tables))
    return Matcher(db, traj, allowed, index or SearchIndex(db.features), settings, playable)


def body_turn(skeleton, pose_locations, pose_rotations, root_quats):
    """(N,) radians each row's body (the line of its hip joints, turned to face
    forward) is turned from its root's yaw; zeros when the skeleton has no legs.
    Forward kinematics of the hip joints' ancestors only."""
    n = len(root_quats)
    if not skeleton.legs:
        return np.zeros(n)
    chain = set()
    for leg in skeleton.legs:
        j = leg[0]
        while j >= 0:
            chain.add(j)
            j = int(skeleton.parents[j])
    bones = sorted(chain)                  # parents come before children
    remap = {b: i for i, b in enumerate(bones)}
    parents = np.array([remap.get(int(skeleton.parents[b]), -1) for b in bones])
    basis = tf.compose(np.asarray(pose_locations[:, bones], dtype=np.float64),
                       tf.quat_to_matrix(np.asarray(pose_rotations[:, bones], dtype=np.float64)))
    pose = tf.pose_fk(parents, None, basis, skeleton.offsets[bones])
    left, right = (pose[:, remap[leg[0]], :3, 3] for leg in skeleton.legs)
    lr = left - right                      # facing = (left - right) x Z, as core.measure.path_metrics
    body = same_everywhere.arctan2(lr[:, 1], lr[:, 0])  # the yaw whose facing (sin, -cos) is along that
    return springs.wrap_angle(body - yaw_of(np.asarray(root_quats, dtype=np.float64)))


class Matcher:
    """Stage 2's search: the query of a step (the playing row's pose features and
    the spring character's trajectory ``traj`` (S, D), raw) against the allowed rows."""

    def __init__(self, db, traj, allowed, index, settings, playable=None):
        self.db, self.traj, self.allowed, self.index = db, traj, allowed, index
        self.playable = allowed if playable is None else np.asarray(playable, dtype=bool) | allowed
        self.margin = settings.search.jump_cost_margin
        self.bone_cols = np.zeros(db.spec.dim, dtype=bool)
        slices = feature_spec.group_slices(db.spec)
        for g in db.spec.groups:
            if not g.is_trajectory:
                self.bone_cols[slices[g.name]] = True
        self.weights = feature_spec.feature_weights(db.spec)
        self.query = np.empty(db.spec.dim)

    def normalized_query(self, s, cur):
        """The weighted, normalised query of step ``s`` while row ``cur`` plays."""
        db, query, bone_cols = self.db, self.query, self.bone_cols
        query[:] = self.traj[s]
        # Before anything plays, the pose part is neutral (the mean pose).
        query[bone_cols] = db.raw[cur, bone_cols] if cur is not None else db.norm.mean[bone_cols]
        return ((query - db.norm.mean) / db.norm.scale) * self.weights

    def played(self, row, root, rate=1.0, moved_on=None):
        """Note the row played on a step and the root (x, y, yaw) (the greedy search needs no history)."""

    def state(self):
        """What the search remembers of the steps played (to go on from; None: nothing)."""
        return None

    def restore(self, state):
        """Go back to a :meth:`state`."""

    def search(self, s, cur, can_continue, root=None):
        """(best row, its cost) for step ``s`` while row ``cur`` plays (None: nothing
        yet); ``root`` (x, y, yaw) where the character stands (unused here)."""
        db = self.db
        qn = self.normalized_query(s, cur)
        best, best_cost = self.index.search(qn, self.allowed)
        if can_continue and self.margin > 0:
            # Play on unless the best row beats the playing one by the margin.
            own = float(np.sum((qn - db.features[cur]) ** 2))
            if own <= best_cost + self.margin:
                return cur, own
        return best, best_cost


class LookAheadMatcher(Matcher):
    """Stage 2's search with the future in view (core.bake.look_ahead): the rows nearest
    the query (feature cost plus a jump's contact-phase cost) and the row playing
    on are ranked again by what playing each would do over the next
    ``settings.look_ahead.seconds`` of the path."""

    def __init__(self, db, traj, allowed, index, settings, sim_pos, sim_yaw, root_positions, root_quats, fps, turn,
                 playable=None, tables=None):
        super().__init__(db, traj, allowed, index, settings, playable)
        self.window = settings.search.keep_window
        self.sim_pos, self.sim_yaw = sim_pos, sim_yaw
        self.rows = np.flatnonzero(allowed)
        if tables is None:      # (look-ahead tables, features of the allowed rows transposed, tie order)
            tables = (None, np.ascontiguousarray(np.asarray(db.features[self.rows], dtype=np.float64).T),
                      la.tie_order(db))
        # Dead ends: where the rows it can play through run out (the clip's end or the selection's).
        self.ahead = la.LookAhead(db, root_positions, root_quats, self.playable, fps, settings.look_ahead.seconds,
                                  turn, tables[0])
        # One row per feature: the search's sums run across the rows (same_everywhere.column_sums).
        self.features_t = tables[1]
        self.squares = np.empty_like(self.features_t)
        self.row_clips = db.clip_index[self.rows]
        self.tie = tables[2]     # ties: lowest frame, then lowest clip
        self.tie_rows = self.tie[self.rows]
        # The filter (:meth:`_approximate`, :meth:`_within`): each row's squared length, the bound's factor.
        self.norms = same_everywhere.column_sums(self.features_t * self.features_t)
        self.err_scale = 4.0 * (2 * db.spec.dim + 4) * np.finfo(np.float64).eps
        self.norm_max = float(self.norms.max(initial=0.0))
        self.approx = np.empty(len(self.rows))
        self.lead = None        # core.bake.moves_search.LeadIn on the steps before a move

    def played(self, row, root, rate=1.0, moved_on=None):
        self.ahead.played(row, root, rate, moved_on)

    def state(self):
        return self.ahead.state()

    def restore(self, state):
        self.ahead.restore(state)

    def search(self, s, cur, can_continue, root=None):
        qn = self.normalized_query(s, cur)
        near = self._near(cur) if cur is not None and can_continue else None
        # A lead-in prices every row (the rows it offers may lie past the pruned ones).
        found, few = (None, None) if cur is None or self.lead is not None else self._pruned_jump_costs(qn, cur, near)
        if found is None:       # every row's feature cost
            rows, cost, order = self.rows, self._feature_costs(qn), self.tie_rows
            if near is not None:
                cost[near[0]:near[1]][near[2]] = np.inf
            if cur is not None and self.lead is not None:
                cost = cost + self.ahead.jump_cost(rows, cur) + self.margin * la.MARGIN_SCALE
            elif cur is not None:     # on from the round the filtered pricing reached
                rows, cost, order = self._with_jump_costs(rows, cost, cur, few)
        else:
            rows, cost, order = found
        pick = la.rank(cost, la.CANDIDATES, order)
        pick = pick[np.isfinite(cost[pick])]
        if self.lead is not None:       # rows that arrive in the coming query on its step
            pick = np.union1d(pick, self.lead.offered(rows, cost, s))
            pick = pick[np.isfinite(cost[pick])]
        cand, base = rows[pick], cost[pick]
        if cur is not None and can_continue:
            own = float(np.add.reduce((qn - self.db.features[cur]) ** 2))     # np.sum's sum, without its overhead
            cand, base = np.append(cur, cand), np.append(own, base)     # first: a tie plays on
        total = base + self.ahead.future_cost(cand, root, self.sim_pos, self.sim_yaw, s)
        if self.lead is not None:
            total = total + self.lead.cost(cand, s)
        # Among equal totals: the row playing on, then the lowest frame, then the lowest clip.
        tied = np.flatnonzero(total == total.min())
        plays_on = cur is not None and can_continue and tied[0] == 0
        k = 0 if plays_on else tied[np.argmin(self.tie[cand[tied]])]
        return int(cand[k]), float(base[k])

    def _near(self, cur):
        """(lo, hi, mask): the allowed rows ``rows[lo:hi][mask]`` near the one playing (not jumps:
        the row playing on stands for them)."""
        lo, hi = np.searchsorted(self.rows, (cur - self.window, cur + self.window + 1))
        return lo, hi, self.row_clips[lo:hi] == self.db.clip_index[cur]

    def _feature_costs(self, qn):
        """(N,) the feature cost of every allowed row."""
        # Into one buffer kept for every search (a new one each time costs the memory's first touch).
        d = np.subtract(self.features_t, qn[:, None], out=self.squares)
        np.multiply(d, d, out=d)
        # np.add.reduce's summation order over each row's features (einsum's depends on the SIMD code).
        return same_everywhere.column_sums(d)

    def _costs_of(self, qn, keep):
        """(K,) :meth:`_feature_costs` of the allowed rows at ``keep`` (the same bits: the sum
        column_sums stands for, row by row; few rows, so fewer numpy calls)."""
        d = np.subtract(self.db.features[self.rows[keep]], qn)     # float64, as the features' copy
        np.multiply(d, d, out=d)
        return np.add.reduce(d, axis=1)

    def _pruned_jump_costs(self, qn, cur, near):
        """What :meth:`_with_jump_costs` returns while it prices fewer than all rows (the same
        arrays), the feature costs worked out only for the rows :meth:`_within` keeps for each
        round, and the round's number of rows priced; None for the arrays when the rows kept
        cannot show the candidates (too few rows, or every row would be priced), with the
        round to go on from on every row's cost (the rounds before it gave nothing)."""
        few = la.CANDIDATES * PRUNE_FACTOR
        approx = self._approximate(qn, near) if len(self.rows) > few else None
        while approx is not None and len(self.rows) > few:
            keep = self._within(approx, qn, few + 1)
            if keep is None:
                return None, few
            found = self._jump_round(self.rows[keep], self._costs_of(qn, keep), self.tie_rows[keep], cur, few)
            if found is not None:
                return found, few
            few *= PRUNE_FACTOR
        return None, few

    def _approximate(self, qn, near):
        """(N,) ||x||^2 - 2 x.q of each allowed row x (BLAS: a filter only), inf for the rows near."""
        approx = np.dot(qn * -2.0, self.features_t, out=self.approx)    # -2 x.q (the scaling is exact)
        approx += self.norms
        if near is not None:
            approx[near[0]:near[1]][near[2]] = np.inf
        return approx

    def _within(self, approx, qn, m):
        """Sorted positions in ``rows`` of a set of rows that holds every row (not near) whose
        feature cost is at most the ``m``-th smallest, by :meth:`_approximate` (its last bits may
        differ between machines, never the set's sufficiency). With x a row, q the query, S = ||x||^2
        + ||q||^2 and D features, a = ||x||^2 - 2 x.q in floats plus ||q||^2 is within (D + 2) eps S of
        the real ||x - q||^2, and so is the cost worked out exactly (:meth:`_feature_costs`) (the
        usual bounds for dot products and sums, |x.q| <= S / 2, ||x - q||^2 <= 2 S). With E four times
        their sum at the largest ||x||: the m-th smallest cost is at most a's m-th smallest + ||q||^2
        + E, and a row whose a is past a's m-th smallest + 2 E costs more than that. None when
        fewer than ``m`` rows are not near."""
        limit = np.partition(approx, m - 1)[m - 1]
        if not limit < np.inf:
            return None
        return np.flatnonzero(approx <= limit + 2.0 * self.err_scale * (self.norm_max + float(np.dot(qn, qn))))

    def _jump_round(self, rows, cost, order, cur, few):
        """One round of :meth:`_with_jump_costs` (at most ``few`` rows priced): (the rows, their
        total costs, their tie order), or None when it cannot show the candidates."""
        extra = self.margin * la.MARGIN_SCALE
        # The few-th and next smallest costs from one partition (values: the same on every machine).
        cut, after = np.partition(cost, (few - 1, few))[few - 1:few + 1]
        sub = la.smallest(cost, few, order, cut)    # in row order; ties kept as among all rows
        total = cost[sub] + self.ahead.jump_cost(rows[sub], cur) + extra
        kth = np.partition(total, la.CANDIDATES - 1)[la.CANDIDATES - 1]
        if after + la.JUMP_COST + extra > kth:
            return rows[sub], total, order[sub]
        return None

    def _with_jump_costs(self, rows, cost, cur, few=None):
        """(rows, their feature cost plus the cost of jumping there, their tie order): only for the
        rows that can still be among the candidates when there are many (a jump
        costs at least JUMP_COST, so a row whose feature cost alone is past the
        candidates' worst total cannot be one); the same candidates as costing all.
        When the few nearest cannot show that, PRUNE_FACTOR times as many are tried.
        ``few``: the round to start from (default the first)."""
        few = la.CANDIDATES * PRUNE_FACTOR if few is None else few
        while len(rows) > few:
            found = self._jump_round(rows, cost, self.tie_rows, cur, few)
            if found is not None:
                return found
            few *= PRUNE_FACTOR
        return rows, cost + self.ahead.jump_cost(rows, cur) + self.margin * la.MARGIN_SCALE, self.tie_rows


PRUNE_FACTOR = 8    # the look-ahead prices jumps to this many times its candidates (more when that is not enough)
