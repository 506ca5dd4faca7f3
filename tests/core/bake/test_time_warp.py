"""Time warping (core.bake.time_warp, BakeSettings.time_warp) on a synthetic
database: one straight walk at 1 m/s whose hips bone carries the frame number
in its location (1 cm a frame) and its rotation (0.05 rad about Z a frame),
so the baked pose says where in the take playback stands."""

import numpy as np
import pytest

from core.bake import pipeline as bake
from core.database.clip_features import clip_valid_rows
from core.database.feature_database import Database
from core.database.feature_spec import FeatureGroup, FeatureSpec, feature_weights
from core.database.normalization import compute_normalization, normalize
from core.bake import pose, time_warp as twp
from core.maths import transforms as tf

FPS = 60.0
SPEED = 1.0            # m/s of the data
TURN_PER_ROW = 0.05    # rad of the hips' rotation per row
LOC_PER_ROW = 0.01     # m of the hips' location per row


def _database(seconds=30.0, varied=False):
    """The walk; ``varied``: its speed and heading wander (no two rows alike, so
    the search's choices do not hang on rounding)."""
    n = int(seconds * FPS)
    t = np.arange(n) / FPS
    speed = SPEED + (0.5 * np.sin(0.7 * t) if varied else 0.0)
    yaw = 0.4 * np.sin(0.3 * t) if varied else np.zeros(n)
    step = speed / FPS
    pos = np.column_stack([np.concatenate([[0.0], np.cumsum(np.sin(yaw) * step)[:-1]]),
                           np.concatenate([[0.0], np.cumsum(-np.cos(yaw) * step)[:-1]]), np.zeros(n)])
    times = [1.0 / 3.0, 2.0 / 3.0, 1.0]
    spec = FeatureSpec(groups=[FeatureGroup("trajectory_positions", "trajectory_position", times_s=times),
                                  FeatureGroup("trajectory_directions", "trajectory_direction", times_s=times)])
    raw = bake.trajectory_queries(spec, pos, yaw, FPS)
    norm = compute_normalization(raw, None, spec)
    contacts = np.zeros((n, 2), dtype=bool)
    contacts[(np.arange(n) // 30) % 2 == 0, 0] = True
    contacts[:, 1] = ~contacts[:, 0]
    db = Database(spec=spec, norm=norm, features=normalize(raw, norm, feature_weights(spec)).astype(np.float32),
                     raw=raw, clip_index=np.zeros(n, dtype=np.int32), frame_index=np.arange(n, dtype=np.int32),
                     valid=clip_valid_rows(spec, n, FPS), excluded=np.zeros(n, dtype=bool), clip_names=["walk"],
                     clip_fps=np.array([FPS]), clip_offsets=np.array([0, n], dtype=np.int64), contacts=contacts)
    quats = np.column_stack([np.cos(yaw / 2), np.zeros((n, 2)), np.sin(yaw / 2)])
    skeleton = bake.BakeSkeleton(names=["root", "hips"], parents=np.array([-1, 0]),
                                 offsets=np.tile(np.eye(4), (2, 1, 1)), root=0, hips=1, legs=[])
    locs = np.zeros((n, 2, 3), dtype=np.float32)
    locs[:, 1, 0] = LOC_PER_ROW * np.arange(n)
    rots = np.tile(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), (n, 2, 1))
    rots[:, 1] = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), TURN_PER_ROW * np.arange(n))
    return db, skeleton, locs, rots, pos, quats


@pytest.fixture(scope="module")
def walk():
    return _database()


def _bake(data, path, **settings):
    db, skeleton, locs, rots, pos, quats = data
    return bake.bake(db, locs, rots, skeleton, path, None, settings=bake.BakeSettings.of(**settings),
                     root_positions=pos, root_quats=quats)


def _bake_on(data, path, **settings):
    """A bake that starts near the clip's start and plays on without a jump (the
    rows of the uniform walk are all alike: only the first may be searched, and a
    jump must beat playing on by a wide margin)."""
    db, skeleton, locs, rots, pos, quats = data
    allowed = np.zeros(db.num_rows, dtype=bool)
    allowed[:30] = True
    settings = bake.BakeSettings.of(look_ahead=0.0, jump_cost_margin=5.0, **settings)
    result = bake.bake(db, locs, rots, skeleton, path, None, settings=settings, root_positions=pos,
                       root_quats=quats, allowed=allowed, playable=np.ones(db.num_rows, dtype=bool))
    assert not result.jumped.any()
    return result


def _path(speed, seconds=4.0, weave=0.0):
    t = np.arange(int(seconds * FPS)) / FPS
    return np.column_stack([weave * np.sin(t), -speed * t, np.zeros(len(t))])


def _played_position(result):
    """Playback position (rows) of each step, read from the hips' location."""
    return result.locations[:, 1, 0] / LOC_PER_ROW


SPAN = slice(90, 180)       # after the rate has eased in, before the path's end slows it


def _advance_and_pull(result):
    """(rows advanced per step, root speed over the played data's speed) over SPAN."""
    pos = _played_position(result)[SPAN]
    rows_per_step = (pos[-1] - pos[0]) / (len(pos) - 1)
    root = result.root_pos[SPAN, :2]
    root_speed = np.linalg.norm(root[-1] - root[0]) / (len(pos) - 1) * FPS
    return rows_per_step, root_speed / (rows_per_step * SPEED)


def test_a_faster_path_plays_the_rows_faster_and_pulls_the_root_less(walk):
    path = _path(1.2 * SPEED)
    off = _bake_on(walk, path, time_warp=0.0)
    on = _bake_on(walk, path, time_warp=0.25)
    rows_off, pull_off = _advance_and_pull(off)
    rows_on, pull_on = _advance_and_pull(on)
    assert rows_off == pytest.approx(1.0, abs=1e-3)
    assert rows_on == pytest.approx(1.2, abs=0.03)
    # Off, the pull toward the path adds a fifth to the data's motion; on, hardly anything.
    assert pull_off == pytest.approx(1.2, abs=0.03)
    assert abs(pull_on - 1.0) < 0.03
    # Both follow the path.
    for r in (off, on):
        assert np.linalg.norm(r.root_pos[SPAN, :2] - r.sim_pos[SPAN, :2], axis=1).max() < 0.1


def test_the_rate_stays_within_the_knob_and_changes_gently(walk):
    on = _bake_on(walk, _path(1.5 * SPEED), time_warp=0.2)
    steps = np.diff(_played_position(on))[SPAN]
    lo, hi = twp.rate_limits(0.2)
    assert steps.max() <= hi + 1e-4 and steps.max() > hi - 0.01
    # The rate's change per step is limited (RATE_SLEW per second): a sudden ask of twice the
    # data's speed takes a third of a second to reach the fastest rate, without overshoot.
    warp = twp.TimeWarp(np.ones(2), np.array([1, 1]), np.full(60, 2.0), 0.2, 1.0 / FPS)
    rates = np.array([warp.step_rate(s, 0) for s in range(60)])
    assert np.all(np.diff(np.concatenate([[1.0], rates])) <= twp.RATE_SLEW / FPS + 1e-12)
    assert rates[int(0.3 * FPS)] < hi - 0.01 and rates.max() <= hi and rates[-1] > hi - 0.01


def test_resampled_poses_lie_between_their_rows(walk):
    on = _bake_on(walk, _path(1.2 * SPEED), time_warp=0.25)
    pos = _played_position(on)[SPAN]
    turn = 2.0 * np.arctan2(on.rotations[SPAN, 1, 3], on.rotations[SPAN, 1, 0])
    # Played between rows (not only whole rows), location and rotation at the same place
    # (within the normalised blend's small deviation from the arc), nearest row as contacts' row.
    frac = pos - np.floor(pos)
    assert np.any((frac > 0.1) & (frac < 0.9))
    off_arc = np.angle(np.exp(1j * (turn - TURN_PER_ROW * pos))) / TURN_PER_ROW
    assert np.abs(off_arc).max() < 0.01
    assert np.all(np.abs(on.rows[SPAN] - pos) <= 0.5 + 1e-6)
    assert np.array_equal(on.contacts[SPAN], walk[0].contacts[on.rows[SPAN]])


def test_blended_rotations_lie_on_the_arc_between_the_rows():
    rng = np.random.default_rng(3)
    q = tf.quat_normalize(rng.normal(size=(2, 5, 4)))
    rots = q.astype(np.float32)
    locs = rng.normal(size=(2, 5, 3))
    nxt = np.array([1, 1])
    for a in (0.0, 0.25, 0.5, 0.9):
        bl, bq = twp.blend_poses(locs, rots, np.array([0]), np.array([a]), nxt)
        assert np.allclose(bl[0], locs[0] * (1 - a) + locs[1] * a)

        def angle(x, y):
            return 2.0 * np.arccos(np.clip(np.abs(np.sum(x * y, axis=-1)), 0.0, 1.0))
        whole, part0, part1 = angle(rots[0], rots[1]), angle(rots[0], bq[0]), angle(bq[0], rots[1])
        assert np.allclose(part0 + part1, whole, atol=1e-5)       # on the shorter arc between the two
        assert np.all(part0 <= whole + 1e-6)


def test_playback_holds_at_a_clip_end_and_restarts_at_a_jump():
    nxt = np.array([1, 2, 2, 4, 4])      # clips [0, 1, 2] and [3, 4]
    warp = twp.TimeWarp(np.full(5, 1.0), nxt, np.full(10, 1.25), 0.2, 1.0 / FPS)
    warp.rate = 1.25
    row = warp.advance(0)
    assert (row, warp.phase) == (1, pytest.approx(0.25))
    assert warp.advance(row) == 2 and warp.phase == 0.0          # the clip's last row holds
    r, ph = twp.offset_positions(np.array([0, 3]), np.array([0.5, 0.5]), np.array([1.75, 1.0]), nxt)
    assert list(r) == [2, 4] and list(ph) == [0.0, 0.0]
    warp.phase = 0.6
    warp.restart()
    assert warp.phase == 0.0


def test_no_warp_where_the_data_stands_still():
    warp = twp.TimeWarp(np.array([0.05, 1.0]), np.array([1, 1]), np.array([1.2]), 0.2, 1.0 / FPS)
    assert warp.target(0, 0) == 1.0
    assert warp.target(0, 1) == pytest.approx(1.2)


def test_the_knob_off_gives_the_bake_before_time_warping(monkeypatch):
    # The bake of a weaving path at 1.2x over a walk whose speed and heading wander (no ties:
    # the same on numpy 1.26 and 2.x), as the code before the time warp
    # baked it (main before the time warp merged, after the rotation-spike fixes):
    # figures taken from that code on numpy 1.26 and 2.x.
    monkeypatch.setattr(twp, "TimeWarp", None)      # off: the warp is never made
    # The fade limit of large jump offsets came later (tests/core/bake/test_rotation_spikes.py).
    monkeypatch.setattr(pose, "fade_rates", lambda x, y, _speeds: np.full(len(x), y))
    off = _bake(_database(20.0, varied=True), _path(1.2 * SPEED, weave=0.3), time_warp=0.0)
    assert (int(off.rows.sum()), int(off.jumped.sum()), int(off.searched.sum())) == OLD_ROWS
    assert float(np.abs(off.root_pos).sum()) == pytest.approx(OLD_ROOT, abs=1e-9)
    assert float(np.abs(off.rotations).sum()) == pytest.approx(OLD_ROTATIONS, abs=1e-9)


OLD_ROWS = (143090, 10, 24)              # sum of rows played, jumps, searches
OLD_ROOT = 611.42743505735
OLD_ROTATIONS = 547.3835794204842


def test_a_time_warp_out_of_range_is_refused():
    for bad in (-0.1, float("nan"), twp.MAX_TIME_WARP + 0.1):
        with pytest.raises(bake.BakeError, match="time warp"):
            bake.BakeSettings.of(time_warp=bad).check()
