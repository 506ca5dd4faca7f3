"""Moves along the timeline: which tag query is in force on each frame."""

import numpy as np
import pytest

from core.paths.moves import Moves, MovesError, moves_of_times


def test_before_the_first_move_the_scenes_query_holds_then_each_move_until_the_next():
    moves = Moves.of([(40, "run"), (10, "walk"), (70, "")])
    assert moves.frames == (10.0, 40.0, 70.0)
    which, texts = moves.in_force([1, 9.5, 10, 39.9, 40, 69, 70, 100], base="all")
    assert texts == ["all", "walk", "run"]
    assert [texts[k] for k in which] == ["all", "all", "walk", "walk", "run", "run", "all", "all"]
    assert moves.query_at(55, base="idle") == "run"


def test_a_query_used_twice_is_one_entry():
    which, texts = Moves.of([(5, "walk"), (10, "run"), (15, " walk ")]).in_force([6, 11, 16])
    assert texts == ["", "walk", "run"] and list(which) == [1, 2, 1]


def test_the_stretches_are_the_whole_frames_each_move_holds_for():
    moves = Moves.of([(10, "walk"), (20.5, "run"), (200, "walk")])
    assert moves.stretches(1, 100) == [(0, 10, 20), (1, 21, 100), (2, None, None)]


def test_bad_moves_are_one_sentence_naming_the_move():
    with pytest.raises(MovesError, match=r"Move 2 \(frame 20, tag query 'walk and'\)"):
        Moves((10, 20), ("run", "walk and"))
    with pytest.raises(MovesError, match="cannot start on one frame"):
        Moves((10, 10), ("run", "walk"))
    with pytest.raises(MovesError, match="one query per frame"):
        Moves((10,), ())


def test_scenario_times_become_frames_from_the_controllers_first():
    moves = moves_of_times([0.0, 2.0], ["walk", "run"], fps=24, frame_start=1)
    assert moves.frames == (1.0, 49.0) and moves.queries == ("walk", "run")
    assert not Moves() and len(moves) == 2
    np.testing.assert_array_equal(Moves().in_force([1, 2])[0], [0, 0])
