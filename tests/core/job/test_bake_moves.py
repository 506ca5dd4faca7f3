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
