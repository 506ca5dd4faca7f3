"""The bake's look-ahead search (core.bake.look_ahead, BakeSettings.look_ahead) on a
synthetic database: two clips whose first second is the same straight walk, one
turning away after it. The greedy search cannot tell them apart and takes the
one that turns, and has to jump back each time the turn comes into view; with
the path's next two seconds in view the bake plays the straight clip."""

import dataclasses

import numpy as np
import pytest

from core.bake import matching, pipeline as bake
from core.database.clip_features import clip_valid_rows
from core.database.feature_database import Database
from core.database.feature_spec import FeatureGroup, FeatureSpec, feature_weights
from core.database.normalization import compute_normalization, normalize
from core.bake import look_ahead as la

FPS = 60.0
SPEED = 1.0   # m/s


def _clip(seconds, turn_at=None, turn_rate=2.0):
    """Root positions (F, 3) and yaws (F,) of a walk toward -Y at SPEED that turns
    right at ``turn_rate`` rad/s from ``turn_at`` seconds on."""
    n = int(seconds * FPS)
    t = np.arange(n) / FPS
    yaw = np.zeros(n) if turn_at is None else -turn_rate * np.clip(t - turn_at, 0.0, None)
    step = SPEED / FPS
    vx, vy = np.sin(yaw) * step, -np.cos(yaw) * step
    pos = np.column_stack([np.concatenate([[0.0], np.cumsum(vx[:-1])]),
                           np.concatenate([[0.0], np.cumsum(vy[:-1])]), np.zeros(n)])
    return pos, yaw


def _database(clips, contacts=None):
    """A trajectory-only database of ``clips`` [(positions, yaws)], its root
    arrays, and pose channels of a two-bone skeleton (root and hips, no legs)."""
    times = [1.0 / 3.0, 2.0 / 3.0, 1.0]
    spec = FeatureSpec(groups=[FeatureGroup("trajectory_positions", "trajectory_position", times_s=times),
                                  FeatureGroup("trajectory_directions", "trajectory_direction", times_s=times)])
    pos = np.concatenate([p for p, _ in clips])
    yaw = np.concatenate([y for _, y in clips])
    lengths = [len(p) for p, _ in clips]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    clip_index = np.repeat(np.arange(len(clips), dtype=np.int32), lengths)
    raws, valid = [], []
    for (p, y) in clips:
        raws.append(bake.trajectory_queries(spec, p, y, FPS))
        valid.append(clip_valid_rows(spec, len(p), FPS))
    raw = np.concatenate(raws)
    norm = compute_normalization(raw, None, spec)
    n = len(pos)
    db = Database(spec=spec, norm=norm, features=normalize(raw, norm, feature_weights(spec)).astype(np.float32),
                     raw=raw, clip_index=clip_index, frame_index=(np.arange(n) - offsets[clip_index]).astype(np.int32),
                     valid=np.concatenate(valid), excluded=np.zeros(n, dtype=bool),
                     clip_names=["clip%d" % i for i in range(len(clips))], clip_fps=np.full(len(clips), FPS),
                     clip_offsets=offsets, contacts=contacts)
    quats = np.column_stack([np.cos(yaw / 2), np.zeros(n), np.zeros(n), np.sin(yaw / 2)])
    skeleton = bake.BakeSkeleton(names=["root", "hips"], parents=np.array([-1, 0]),
                                 offsets=np.tile(np.eye(4), (2, 1, 1)), root=0, hips=1, legs=[])
    locs = np.zeros((n, 2, 3), dtype=np.float32)
    rots = np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (n, 2, 1))
    return db, skeleton, locs, rots, pos, quats


def _straight_path(seconds=4.0):
    n = int(seconds * FPS)
    return np.column_stack([np.zeros(n), -SPEED * np.arange(n) / FPS, np.zeros(n)])


def _bake(data, path, **settings):
    db, skeleton, locs, rots, pos, quats = data
    return bake.bake(db, locs, rots, skeleton, path, None, settings=bake.BakeSettings.of(**settings),
                     root_positions=pos, root_quats=quats)


@pytest.fixture(scope="module")
def turn_or_straight():
    # Clip 0 walks straight for 1.5 s, then turns right; clip 1 walks straight for 8 s.
    return _database([_clip(4.0, turn_at=1.5), _clip(8.0)])


def test_greedy_walks_into_the_turn_and_the_look_ahead_does_not(turn_or_straight):
    path = _straight_path()
    greedy = _bake(turn_or_straight, path, look_ahead=0.0)
    ahead = _bake(turn_or_straight, path, look_ahead=2.0)
    db = turn_or_straight[0]
    # Greedy: the turning clip first (same features, lower row), jumping back to its
    # start each time the turn comes into view.
    assert db.clip_index[greedy.rows[0]] == 0
    assert greedy.jumped.sum() >= 4
    # Look-ahead: the straight clip from the start, never the turn while the
    # path's next two seconds are a straight walk; it jumps only to stay away
    # from the straight clip's end (its rows are alike, so it may start anywhere
    # in it). Once the path's dead stop comes into view, circling on the turn
    # overshoots the stop less than walking on, so there either clip may win.
    walking = len(path) - int(2.0 * FPS)
    assert np.all(db.clip_index[ahead.rows[:walking]] == 1)
    assert ahead.jumped[:walking].sum() <= greedy.jumped[:walking].sum() // 2
    assert ahead.jumped.sum() <= greedy.jumped.sum()
    err = np.linalg.norm(ahead.root_pos[:, :2] - path[:, :2], axis=1)
    assert err[:int(3 * FPS)].max() < 0.02      # (the path stops dead at its end)


def test_look_ahead_bakes_are_deterministic(turn_or_straight):
    path = _straight_path()
    path[:, 0] += 0.3 * np.sin(np.arange(len(path)) / FPS)     # a gentle weave: searches jump
    a = _bake(turn_or_straight, path, look_ahead=1.0)
    b = _bake(turn_or_straight, path, look_ahead=1.0)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.rotations, b.rotations)
    assert np.array_equal(a.root_pos, b.root_pos)


def test_jumps_keep_the_contact_phase():
    # One clip, left foot planted in rows 0-29 and 60-89, lifted in 30-59 and 90-119.
    n = 120
    contacts = np.zeros((n, 2), dtype=bool)
    contacts[(np.arange(n) // 30) % 2 == 0, 0] = True
    contacts[:, 1] = ~contacts[:, 0]
    data = _database([(_clip(2.0)[0], _clip(2.0)[1])], contacts=contacts)
    db, _, _, _, pos, quats = data
    ahead = la.LookAhead(db, pos, quats, db.valid, FPS, 1.0)
    for row in range(0, 10):        # the bake has played 10 rows of a stance
        ahead.played(row, (0.0, -row / FPS, 0.0))
    cost = ahead.jump_cost(np.array([10, 40, 70, 85]), 10)
    # Same phase of another stance: nothing; the swing: both feet flip; a stance's end: its timing.
    assert cost[2] == pytest.approx(la.TUNING.jump_cost, abs=0.05)
    assert cost[1] == pytest.approx(la.TUNING.jump_cost + 2 * la.TUNING.contact_flip_cost)
    assert 0.0 < cost[3] < cost[1]


def test_a_look_ahead_out_of_range_is_refused():
    for bad in (-1.0, float("nan"), bake.MAX_LOOK_AHEAD + 1.0):
        with pytest.raises(bake.BakeError, match="look-ahead"):
            bake.BakeSettings.of(look_ahead=bad).check()


def test_pricing_jumps_only_where_they_can_matter_chooses_as_pricing_all(turn_or_straight, monkeypatch):
    # The candidates' jump costs are priced for the rows whose feature cost leaves
    # them a chance (matching.PRUNE_FACTOR times the candidates, or that times more
    # when those cannot show it); pricing every row must choose the same rows, step by step.
    path = _straight_path(6.0)
    path[:, 0] += 0.4 * np.sin(2.0 * np.arange(len(path)) / FPS)     # weaving: many searches and jumps
    monkeypatch.setattr(matching, "PRUNE_FACTOR", 2)                     # prune hard (48 of the rows)
    priced = []
    original = matching.LookAheadMatcher._jump_round

    def counted(self, rows, cost, order, cur, few):
        out = original(self, rows, cost, order, cur, few)
        priced.append((few, out is not None))
        return out

    monkeypatch.setattr(matching.LookAheadMatcher, "_jump_round", counted)
    pruned = _bake(turn_or_straight, path, look_ahead=1.0)
    few = la.CANDIDATES * 2
    assert sum(k == few and ok for k, ok in priced) >= 3      # the pruned pricing was used, not only the fallback
    assert any(k > few and ok for k, ok in priced)             # and more rows when the few could not show it
    monkeypatch.setattr(matching, "PRUNE_FACTOR", 10 ** 6)               # price every row
    full = _bake(turn_or_straight, path, look_ahead=1.0)
    assert pruned.jumped.sum() >= 3
    assert np.array_equal(pruned.rows, full.rows) and np.array_equal(pruned.rotations, full.rotations)


def _future_cost_one_sum_at_a_time(ahead, rows, root, sim_pos, sim_yaw, s):
    """LookAhead.future_cost as first written: the stance drifts' costs added one
    term at a time from 0, the path error's changes by np.diff."""
    from core.maths import springs
    from core.maths import transforms as tf

    T = la.TUNING
    px, py, yaw = root
    at = np.minimum(s + ahead.offsets, len(sim_pos) - 1)
    c, sn = np.cos(yaw), np.sin(yaw)
    fx, fy = ahead.fxy[rows][..., 0], ahead.fxy[rows][..., 1]
    wx = px + c * fx - sn * fy - sim_pos[at, 0]
    wy = py + sn * fx + c * fy - sim_pos[at, 1]
    dyaw = springs.wrap_angle(yaw + ahead.fyaw[rows] - sim_yaw[at])
    dead = ahead.offsets[None, :] >= ahead.run[rows][:, None]
    e0 = np.array([px - sim_pos[s, 0], py - sim_pos[s, 1]])
    M = len(ahead.offsets)
    err = np.stack([wx, wy], axis=-1)
    K = len(rows)
    on = ahead.contacts[rows]
    played = np.array(ahead.played_contacts)
    drift = np.where((on & played)[:, :, None], np.asarray(ahead.drift)[None, :, :], 0.0)
    future = ahead.ahead_contacts[rows]
    kept = future & np.concatenate([on[:, None], future[:, :-1]], axis=1)
    steps = np.diff(np.concatenate([np.broadcast_to(e0, (K, 1, 2)), err], axis=1), axis=1)
    drifts = np.empty((M, K, 2, 2))
    for j in range(M):
        drift = drifts[j] = np.where(kept[:, j, :, None], drift + steps[:, j, None, :], 0.0)
    over = np.maximum(tf.row_norm(drifts) - T.stance_drift_free, 0.0) / T.stance_drift_scale
    terms = np.where(future.transpose(1, 0, 2), over * over, 0.0) / M
    stance = np.zeros(K)
    for f in range(2):
        for j in range(M):
            stance += terms[j, :, f]
    return (np.add.reduce(wx * wx + wy * wy, axis=1) / M / T.path_error_scale ** 2
            + np.add.reduce(np.maximum(np.abs(dyaw) - ahead.mend, 0.0) ** 2, axis=1) / M
            / T.heading_error_scale ** 2
            + T.dead_end_cost * (np.add.reduce(dead, axis=1, dtype=np.float64) / M) + stance)


def test_future_cost_is_its_terms_added_one_at_a_time_bit_for_bit():
    rng = np.random.default_rng(41)
    clips = [_clip(6.0), _clip(6.0, turn_at=1.0)]
    n = sum(len(p) for p, _ in clips)
    # Stances and swings of a few tenths of a second, both feet.
    contacts = np.repeat(rng.random((n // 30 + 1, 2)) < 0.8, 30, axis=0)[:n]
    db, _, _, _, pos, quats = _database(clips, contacts)
    ahead = la.LookAhead(db, pos, quats, np.ones(n, dtype=bool), FPS, 1.0)
    sim_pos = np.cumsum(rng.normal(scale=0.05, size=(400, 3)), axis=0)
    sim_yaw = np.cumsum(rng.normal(scale=0.02, size=400))
    for trial in range(20):
        ahead.played_contacts = rng.random(2) < 0.6
        ahead.drift = rng.normal(scale=0.3, size=(2, 2)).tolist()
        rows = rng.choice(n, size=25, replace=False)
        s = int(rng.integers(0, 400))
        root = (float(sim_pos[s, 0]) + rng.normal(scale=0.1), float(sim_pos[s, 1]), float(sim_yaw[s]) + 0.1)
        want = _future_cost_one_sum_at_a_time(ahead, rows, root, sim_pos, sim_yaw, s)
        got = ahead.future_cost(rows, root, sim_pos, sim_yaw, s)
        assert got.tobytes() == want.tobytes()


def _jump_cost_as_before(ahead, rows, on_row):
    """LookAhead.jump_cost as it was before its per-foot tables: every row's terms worked out."""
    T = la.TUNING
    flips = ahead.contacts[rows] != ahead.contacts[on_row]
    gap = (np.asarray(ahead.played_time)[None, :] - ahead.in_state[rows]) / (T.phase_scale * ahead.fps)
    soon = T.rejump_cost * max(0.0, 1.0 - ahead.since_jump / (T.rejump_seconds * ahead.fps))
    return T.jump_cost + soon + np.add.reduce(
        np.where(flips, T.contact_flip_cost, np.minimum(gap * gap, T.contact_flip_cost)), axis=1)


@pytest.mark.parametrize("fps", [FPS, 30.0, 24.0])
def test_jump_cost_from_tables_is_the_old_sum_bit_for_bit(fps):
    rng = np.random.default_rng(43)
    clips = [_clip(6.0), _clip(6.0, turn_at=1.0)]
    n = sum(len(p) for p, _ in clips)
    contacts = np.repeat(rng.random((n // 20 + 1, 2)) < 0.6, 20, axis=0)[:n]
    db, _, _, _, pos, quats = _database(clips, contacts)
    for ahead in (la.LookAhead(db, pos, quats, np.ones(n, dtype=bool), fps, 1.0),
                  la.LookAhead(dataclasses.replace(db, contacts=None), pos, quats, np.ones(n, dtype=bool), fps, 1.0)):
        all_rows = np.arange(n)
        for trial in range(60):
            ahead.played_time = [int(v) for v in rng.integers(0, ahead.cap + 1, size=2)]
            ahead.since_jump = int(rng.choice([0, 3, 10, 10 ** 9]))
            rows = all_rows if trial % 7 == 0 else rng.choice(n, size=int(rng.integers(0, 200)), replace=False)
            on_row = int(rng.integers(0, n))
            for _ in range(2):      # the second time from the rows' kept states
                got = ahead.jump_cost(rows, on_row)
                assert got.tobytes() == _jump_cost_as_before(ahead, rows, on_row).tobytes()
