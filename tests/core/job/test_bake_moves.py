"""The bake with moves along the timeline: the query in force at each search,
refusals before any work, one set of rows per distinct query, the report."""

import numpy as np
import pytest

from core.bake.settings import BakeSettings
from core.database import selection
from core.job import moves as job_moves
from core.job import run
from core.paths.moves import Moves
from walk_database import walk_database

SCENE_FPS = 24.0


@pytest.fixture(scope="module")
def database():
    return walk_database()


def _straight(database, frame_end=145, speed=0.9):
    frames = run.frames_to_key(1, frame_end)
    steps = run.step_frames(database, frames, SCENE_FPS)
    world = np.column_stack([np.zeros(len(steps)), -speed * (steps - 1) / SCENE_FPS, np.zeros(len(steps))])
    return run.ControllerPath.from_world(world, None, frames, SCENE_FPS, armature_world=np.eye(4))


def test_each_stretch_plays_the_clip_its_query_selects(database):
    moves = Moves.of([(1, "slow"), (73, "fast")])
    out = run.run(database, _straight(database), BakeSettings(), moves=moves)
    clip = database.matching.clip_index[out.result.rows]
    steps = run.step_frames(database, out.frames, SCENE_FPS)
    assert set(clip[steps < 73]) == {1}
    # Past a short transition (the playing row is left at once: it is not playable under the new query).
    assert set(clip[steps >= 74]) == {0}
    first, second = out.report.moves
    assert (first["query"], first["first_frame"], first["last_frame"], first["frames"]) == ("slow", 1, 72, 72)
    assert (second["first_frame"], second["last_frame"], second["frames"]) == (73, 145, 73)
    assert first["share"] == 1.0 and second["share"] > 0.95
    assert "moves" in out.report.to_json() and "move at 73" in out.report.to_text()


def test_one_query_in_force_throughout_bakes_as_that_tag_query(database):
    path = _straight(database)
    asked = run.run(database, path, BakeSettings(), tag_query="fast")
    moved = run.run(database, path, BakeSettings(), moves=Moves.of([(-10, "fast"), (500, "slow")]))
    np.testing.assert_array_equal(asked.locations, moved.locations)
    np.testing.assert_array_equal(asked.rotations, moved.rotations)
    plain = run.run(database, path, BakeSettings())
    assert "moves" not in plain.report.to_json() and plain.report.moves is None


@pytest.mark.parametrize("query, why", [("limp", "limp"), ("fast and slow", "no frame carries")])
def test_a_move_that_cannot_be_baked_is_refused_naming_it(database, query, why):
    moves = Moves.of([(20, "slow"), (60, query)])
    with pytest.raises(job_moves.MoveError) as error:
        next(run.bake(database, _straight(database), BakeSettings(), moves=moves))
    text = str(error.value)
    assert text.startswith("Move 2 (frame 60, tag query '%s') cannot be baked: " % query) and why in text
    assert text.endswith(".")


def test_a_move_with_fewer_rows_than_the_look_ahead_ranks_is_refused(database):
    settings = BakeSettings.of(tag_query_ahead=0.0)
    # Rows of 'slow' whose trajectory future lies in the clip: cut the tag to a few frames.
    small = walk_database(tags=(("fast", 0, 119), ("slow", 80, 90)))
    with pytest.raises(job_moves.MoveError, match=r"Move 1 \(frame 30, tag query 'slow'\).*leaves \d+ frames? to "
                                                   r"search, and the look-ahead ranks 24"):
        job_moves.checked_rows(small, Moves.of([(30, "slow")]), "", settings)
    assert job_moves.checked_rows(database, Moves.of([(30, "slow")]), "", settings) is not None


def test_each_distinct_query_makes_its_rows_once(database, monkeypatch):
    made = []
    real = selection.bake_rows
    monkeypatch.setattr(selection, "bake_rows", lambda db, q, s: made.append(q) or real(db, q, s))
    moves = Moves.of([(10, "slow"), (40, "fast"), (70, "slow"), (100, ""), (120, "fast")])
    allowed, playable, per_step = job_moves.step_rows(database, moves, "", BakeSettings(),
                                                     np.linspace(1, 145, 200))
    assert sorted(made) == ["", "fast", "slow"]
    assert per_step.texts == ["", "slow", "fast"] and len(per_step.rows) == 3
    assert per_step.rows[per_step.which[-1]] is per_step.rows[2]
    np.testing.assert_array_equal(allowed, per_step.rows[0][0])


# One clip tagged 'a' then 'b' at frame 60 (the other all 'a'), walked at its own speed at the
# database's rate: a move to 'b' at frame 108 can be met by playing on into the clip's 'b' frames.
def _lead_in_bake(monkeypatch, anticipate, move=108):
    from core.bake import moves_search
    if not anticipate:
        monkeypatch.setattr(moves_search, "lead_steps", lambda which, horizon: np.full(len(which), -1))
    database = walk_database(tags=(("a", 0, 119), [("a", 0, 59), ("b", 60, 119)]))
    frames = run.frames_to_key(1, 181)
    steps = run.step_frames(database, frames, 30.0)
    world = np.column_stack([np.zeros(len(steps)), -0.6 * (steps - 1) / 30.0, np.zeros(len(steps))])
    path = run.ControllerPath.from_world(world, None, frames, 30.0, armature_world=np.eye(4))
    return database, run.run(database, path, BakeSettings(), moves=Moves.of([(1, "a"), (move, "b")]))


def test_the_search_anticipates_a_move_by_playing_into_its_rows(monkeypatch):
    from core.bake import moves_search
    database, out = _lead_in_bake(monkeypatch, True)
    r, m = out.result, 107                       # the move's step (frame 108 at the database's rate)
    horizon = int(round(BakeSettings().look_ahead.seconds * 30))
    slack = moves_search.lead_slack(horizon)
    b = selection.QueryRows(database, None).selected("b")
    # No jump from a horizon before the move to past it: the 'a' rows played lead into 'b'.
    assert not r.jumped[m - horizon:m + slack + 1].any(), np.flatnonzero(r.jumped)
    first_b = m + int(np.argmax(b[r.rows[m:]]))
    assert m <= first_b <= m + slack and b[r.rows[first_b:]].all()
    assert not b[r.rows[:m]].any()               # and 'b' does not play before its move
    first, second = out.report.moves
    assert first["share"] == 1.0 and second["share"] > 0.95
    assert second["on_tags_from"] == 1 + first_b and first["on_tags_from"] == 1     # scene frames = steps + 1
    # Without the lead-in the same bake reaches 'b' by a jump on the move's step.
    _database, plain = _lead_in_bake(monkeypatch, False)
    assert plain.result.jumped[m] and b[plain.result.rows[m]]


def test_lead_in_steps_and_reach():
    from core.bake import moves_search
    which = np.array([0] * 10 + [1] * 3 + [2] * 10)
    # Within 4 steps before each change, within the stretch the change ends.
    np.testing.assert_array_equal(moves_search.lead_steps(which, 4),
                                  [-1] * 6 + [10] * 4 + [13] * 3 + [-1] * 10)
    database = walk_database(tags=(("a", 0, 119), [("a", 0, 59), ("b", 60, 119)]))
    db = database.matching
    rows = selection.QueryRows(database, None)
    reach = moves_search.reach_rows(db, rows.selected("b"), rows.selected("a"))
    clip1 = db.clip_offsets[1]
    b_first = clip1 + int(np.argmax(rows.selected("b")[clip1:]))
    assert reach[b_first] == 0 and reach[b_first - 5] == 5 and reach[clip1] == b_first - clip1
    assert (reach[:clip1] >= 10 ** 9).all()      # the first clip never plays into 'b'


def _walked_at_its_speed(database):
    frames = run.frames_to_key(1, 181)
    steps = run.step_frames(database, frames, 30.0)
    world = np.column_stack([np.zeros(len(steps)), -0.6 * (steps - 1) / 30.0, np.zeros(len(steps))])
    return run.ControllerPath.from_world(world, None, frames, 30.0, armature_world=np.eye(4))


def test_each_move_reports_its_sliding_and_tracking_and_honoured_moves_warn_of_nothing():
    database = walk_database(tags=(("a", 0, 119), [("a", 0, 59), ("b", 60, 119)]))
    path = _walked_at_its_speed(database)
    # A move holding for every frame measures as the whole bake.
    whole = run.run(database, path, BakeSettings(), moves=Moves.of([(-10, "a"), (500, "b")])).report
    first, never = whole.moves
    assert first["sliding_cm_per_foot_per_moving_s"] == whole.contact_sliding_cm_per_foot_per_moving_s
    assert (first["tracking_mean_m"], first["tracking_max_m"]) == (whole.hips_tracking_mean_m,
                                                                   whole.hips_tracking_max_m)
    assert "tracking_mean_m" not in never
    report = run.run(database, path, BakeSettings(), moves=Moves.of([(1, "a"), (100, "b")])).report
    a, b = report.moves
    assert a["tracking_max_m"] <= whole.hips_tracking_max_m and b["tracking_mean_m"] >= 0.0
    assert a["sliding_cm_per_foot_per_moving_s"] > 0.0 and b["sliding_cm_per_foot_per_moving_s"] > 0.0
    assert a["sliding_cm_per_foot_per_moving_s"] != b["sliding_cm_per_foot_per_moving_s"]
    assert not [w for w in report.warnings if w.startswith("Move ")]
    assert "sliding %.2f cm/foot/s" % b["sliding_cm_per_foot_per_moving_s"] in report.to_text()


def test_a_move_the_data_cannot_honour_is_named_in_a_warning():
    from core.measure import moves_figures
    database = walk_database(tags=(("a", 0, 119), [("a", 0, 59), ("b", 60, 119)]))
    # 'b' for one frame, which the walk playing reaches a step later (within the lead-in's slack):
    # too short for its transition, it plays no row of 'b'.
    report = run.run(database, _walked_at_its_speed(database), BakeSettings(),
                     moves=Moves.of([(1, "a"), (138, "b"), (139, "a")])).report
    assert report.moves[1]["share"] < moves_figures.HONOURED_SHARE
    named = [w for w in report.warnings if w.startswith("Move ")]
    assert len(named) == 1 and named[0].startswith("Move 2 (frame 138, tag query 'b') played rows carrying its "
                                                   "query on only 0% of its frames 138-138 (below 50%)")
    assert report.moves[1]["tracking_mean_m"] is None      # one frame: nothing to measure
    assert named[0] in report.to_text()
