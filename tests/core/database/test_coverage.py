"""Tests of core.database.coverage.coverage_report and format_report_text."""

import json
import math

import numpy as np
import pytest

from core.database import coverage as C
from core.database import dance_card as D
from core.database import tags as T
from core.database.coverage import CoverageError
from core.database.tags import Tag

FPS = 30.0


def walk_then_turn(straight_s=10.0, turn_s=4.0, speed=1.2, rate_deg=90.0, fps=FPS, dims=3):
    """Root moving at ``speed`` along its facing: straight, then turning at ``rate_deg``.

    Frame k has yaw 0 up to the last straight frame and ``rate * (k - last) / fps``
    after it; each step moves ``speed / fps`` along the mean of the two facings.
    """
    n_straight = int(round(straight_s * fps))
    n = n_straight + int(round(turn_s * fps))
    k = np.arange(n)
    yaw = np.radians(rate_deg) / fps * np.maximum(k - (n_straight - 1), 0)
    facing = np.stack([np.sin(yaw), -np.cos(yaw), np.zeros(n)], axis=1)[:, :dims]
    mid = 0.5 * (yaw[1:] + yaw[:-1])
    step = speed / fps * np.stack([np.sin(mid), -np.cos(mid)], axis=1)
    pos = np.zeros((n, 3))
    pos[1:, :2] = np.cumsum(step, axis=0)
    pos[:, 2] = 0.9  # height is ignored
    return n, pos, facing


def clip(name, tags, n=None, pos=None, facing=None, fps=FPS, excluded=None):
    if pos is None:
        n = n or 60
        pos = np.zeros((n, 3))
        facing = np.tile([0.0, -1.0], (n, 1))
    out = (name, fps, n, tags, pos, facing)
    return out + (excluded,) if excluded is not None else out


def test_speed_and_turn_of_the_synthetic_root():
    n, pos, facing = walk_then_turn()
    speed, rate = C.root_speed_and_turn(pos, facing, FPS)
    assert speed[:299] == pytest.approx(1.2, abs=1e-9)
    # Central differences cut the curve's chord; the one-sided last frame does not.
    assert speed[300:-1] == pytest.approx(1.2 * math.cos(math.radians(1.5)), abs=1e-9)
    assert speed[-1] == pytest.approx(1.2)
    assert rate[:299] == pytest.approx(0.0, abs=1e-9)
    assert rate[299] == pytest.approx(45.0)
    assert rate[300:] == pytest.approx(90.0)


@pytest.mark.parametrize("dims", [2, 3])
def test_walk_then_turn_lands_in_the_right_bins(dims):
    n, pos, facing = walk_then_turn(dims=dims)
    rep = C.coverage_report(None, [clip("take", [], n, pos, facing)])
    grid = np.array(rep["capability"]["seconds"])
    assert grid.shape == (9, 5)
    walk = rep["capability"]["speed_labels"].index("1.0-1.5 m/s")
    assert rep["capability"]["turn_labels"] == [
        "0-15 deg/s", "15-45 deg/s", "45-90 deg/s", "90-180 deg/s", "180+ deg/s"]
    assert grid[walk, 0] == pytest.approx(299 / FPS)   # straight frames
    assert grid[walk, 2] == pytest.approx(1 / FPS)     # the frame where the turn starts
    assert grid[walk, 3] == pytest.approx(4.0)         # exactly 90 deg/s: 90-180
    assert grid.sum() == pytest.approx(14.0)
    assert np.count_nonzero(grid) == 3
    assert rep["totals"] == {"clips": 1, "frames": 420, "seconds": pytest.approx(14.0),
                             "excluded_frames": 0, "excluded_seconds": 0.0,
                             "usable_seconds": pytest.approx(14.0)}


def test_gaps_are_named_in_words():
    n, pos, facing = walk_then_turn()
    rep = C.coverage_report(None, [clip("take", [], n, pos, facing)])
    gaps = {(g["speed"], g["turn"]): g for g in rep["gaps"]}
    assert len(gaps) == 45 - 2   # every cell but the two with 10 s and 4 s
    run_sharp = gaps[("2.0-2.5 m/s", "90-180 deg/s")]
    assert run_sharp["seconds"] == 0.0 and run_sharp["kind"] == "empty"
    assert run_sharp["sentence"].startswith("run with sharp turns") and "nothing" in run_sharp["sentence"]
    thin = gaps[("1.0-1.5 m/s", "45-90 deg/s")]
    assert thin["kind"] == "thin" and thin["seconds"] == pytest.approx(1 / FPS)
    assert "walk with turns" in thin["sentence"] and "only 0.03 s" in thin["sentence"]
    assert ("1.0-1.5 m/s", "90-180 deg/s") not in gaps


def test_speed_bin_names():
    rep = C.coverage_report(None, [clip("still", [])])
    assert rep["capability"]["speed_names"] == [
        "idle", "idle to walk", "walk", "walk", "walk to run", "run", "run", "run", "run"]
    assert rep["capability"]["speed_labels"][0] == "0.0-0.2 m/s"
    assert rep["capability"]["speed_labels"][-1] == "3.5+ m/s"
    assert rep["capability"]["speed_edges"][-1] is None
    assert C.speed_name(0.0, 1.0) == "idle .. walk"
    assert C.turn_phrase(0, 15) == "going straight"


def test_moves_status_overlap_and_extra_tags():
    card = D.DanceCard("Card", [D.Move("Walk", 5.0, "straight"), D.Move("idle", 1.0),
                                D.Move("jump", 2.0), D.Move("run")])
    clips = [
        # walk 0-99 and 50-149 overlap: 150 frames = 5 s, counted once
        clip("a", [Tag("walk", 0, 99), Tag("WALK", 50, 149), Tag("idle", 150, 164),
                   Tag("wave", 0, 9)], n=200),
        clip("b", [Tag("walk", 0, 29), Tag("run", 0, 0)], n=60, fps=60.0),
    ]
    rep = C.coverage_report(card, clips)
    moves = {m["name"]: m for m in rep["moves"]}
    assert [m["name"] for m in rep["moves"]] == ["Walk", "idle", "jump", "run"]
    assert moves["Walk"]["seconds"] == pytest.approx(5.0 + 0.5)
    assert moves["Walk"]["frames"] == 180
    assert moves["Walk"]["status"] == "ok" and moves["Walk"]["ratio"] == pytest.approx(1.1)
    assert moves["Walk"]["clips"] == ["a", "b"]
    assert moves["idle"]["seconds"] == pytest.approx(0.5) and moves["idle"]["status"] == "short"
    assert moves["jump"] == {"name": "jump", "description": "", "seconds": 0.0, "frames": 0,
                             "expected_s": 2.0, "ratio": 0.0, "status": "missing", "clips": []}
    assert moves["run"]["status"] == "ok" and moves["run"]["ratio"] is None
    assert rep["extra_tags"] == [{"name": "wave", "seconds": pytest.approx(1 / 3),
                                  "frames": 10, "clips": ["a"]}]
    assert rep["totals"]["seconds"] == pytest.approx(200 / 30 + 1.0)
    json.dumps(rep, allow_nan=False)


def test_excluded_frames_leave_moves_and_map():
    card = D.DanceCard("C", [D.Move("walk", 1.0)])
    explicit = np.zeros(60, bool)
    explicit[50:] = True
    c = clip("a", [Tag("T-Pose", 0, 29), Tag("walk", 20, 59), Tag("mistake", 40, 44)],
             n=60, excluded=explicit)
    rep = C.coverage_report(card, [c])
    assert rep["totals"]["excluded_frames"] == 30 + 5 + 10
    assert rep["totals"]["usable_seconds"] == pytest.approx(0.5)
    assert rep["moves"][0]["frames"] == 10 + 5   # 30-39 and 45-49
    assert rep["extra_tags"] == []               # exclusion tags are not moves
    assert np.array(rep["capability"]["seconds"]).sum() == pytest.approx(0.5)
    rep = C.coverage_report(card, [clip("a", [Tag("T-Pose", 0, 29)], n=60)], exclude_names=[])
    assert np.array(rep["capability"]["seconds"]).sum() == pytest.approx(2.0)
    assert rep["extra_tags"][0]["name"] == "T-Pose"


def test_custom_bins_and_thin_threshold():
    n, pos, facing = walk_then_turn(straight_s=2.0, turn_s=0.5)
    rep = C.coverage_report(None, [clip("t", [], n, pos, facing)], speed_bins=(0, 1, 2),
                            turn_bins_deg_per_s=(0, 60), thin_s=0.0)
    # Closed last edges: rates of 90 deg/s fall outside the map.
    assert np.array(rep["capability"]["seconds"]).sum() == pytest.approx(60 / FPS)
    assert rep["gaps"] == [g for g in rep["gaps"] if g["seconds"] < 0.0] == []


def test_report_text():
    card = D.DanceCard("Loco", [D.Move("walk", 20.0), D.Move("jump", 2.0)])
    n, pos, facing = walk_then_turn()
    rep = C.coverage_report(card, [clip("take", [Tag("walk", 0, 299), Tag("wave", 0, 9)],
                                        n, pos, facing)])
    text = C.format_report_text(rep)
    lines = text.splitlines()
    assert lines[0] == "Dance card coverage: Loco"
    assert lines[1] == "1 clip, 14.0 s (420 frames); 0.0 s left out; 14.0 s usable."
    walk_line = next(line for line in lines if line.strip().startswith("walk "))
    assert walk_line.split() == ["walk", "10.0", "20.0", "0.50", "short"]
    assert any(line.split()[:2] == ["jump", "0.0"] and line.endswith("missing") for line in lines)
    assert "Missing: jump." in text and "wave (0.3 s)" in text
    row = next(line for line in lines if "walk 1.0-1.5 m/s" in line)
    assert row.split()[-5:] == ["10.0", "0.0", "0.0", "4.0", "0.0"]
    assert "  - run (2.0-2.5 m/s): nothing at any turning rate." in lines
    assert any("walk with turns (1.0-1.5 m/s, 45-90 deg/s): only 0.03 s." in line for line in lines)


@pytest.mark.parametrize("bad, words", [
    (("a", 0.0, 2, [], np.zeros((2, 3)), np.tile([0, -1.0], (2, 1))), "frame rate 0.0"),
    (("a", 30.0, 3, [], np.zeros((2, 3)), np.tile([0, -1.0], (2, 1))), "shape (2, 3)"),
    (("a", 30.0, 2, [], np.zeros((2, 3)), np.zeros((2, 4))), "root facings of shape"),
    (("a", 30.0, 2, [], np.zeros((2, 3)), np.zeros((2, 2))), "no horizontal direction"),
    (("a", 30.0, 2, [], np.full((2, 3), np.nan), np.tile([0, -1.0], (2, 1))), "NaN"),
    (("a", 30.0, 2, [], np.zeros((2, 3)), np.tile([0, -1.0], (2, 1)), np.zeros(3, bool)),
     "exclusion mask"),
    (("a", 30.0, 2), "must be (name, fps"),
])
def test_coverage_input_errors(bad, words):
    with pytest.raises(CoverageError) as e:
        C.coverage_report(None, [bad])
    assert words in str(e.value)


def test_coverage_bad_tag_and_bins():
    with pytest.raises(T.TagError, match="'walk' on clip 'a'"):
        C.coverage_report(None, [clip("a", [Tag("walk", 0, 60)], n=60)])
    with pytest.raises(CoverageError, match="speed bins"):
        C.coverage_report(None, [clip("a", [])], speed_bins=(0, 1, 1))
    with pytest.raises(CoverageError, match="turning rate bins"):
        C.coverage_report(None, [clip("a", [])], turn_bins_deg_per_s=(5,))
