"""Tests of core.database.tags, core.database.query and core.database.dance_card: tag names and
ranges, masks, the query language, the end-of-range rule and dance cards."""

import itertools
import json
from types import SimpleNamespace

import numpy as np
import pytest

from core.database import dance_card as D
from core.database import query as Q
from core.database import tags as T
from core.errors import MotionMatchingError
from core.database.feature_spec import default_spec
from core.database.tags import Tag, TagError


# ------------------------------------------------------------------------ tag names


@pytest.mark.parametrize("name", ["walk", "t-pose", "turn.90", "Idle_2", "Gehen", "café", "9"])
def test_valid_names(name):
    assert T.tag_name_problem(name) is None
    assert T.check_tag_name(name) == name


@pytest.mark.parametrize("name, words", [
    ("turn left", "a space"),
    ("a/b", "'/'"),
    ("walk(2)", "'('"),
    ("", "empty"),
    ("AND", "'and' is a word of the tag query language"),
    ("all", "'all'"),
    (3, "must be text"),
])
def test_invalid_names(name, words):
    with pytest.raises(TagError) as e:
        T.check_tag_name(name)
    assert words in str(e.value)
    assert issubclass(TagError, MotionMatchingError)


def test_validate_tags_accepts_tuples_and_numpy_ints():
    out = T.validate_tags([("walk", np.int64(0), 9), Tag("Run", 5, 5)], 10)
    assert out == [Tag("walk", 0, 9), Tag("Run", 5, 5)]
    assert out[1].key == "run" and out[1].name == "Run" and out[1].n_frames == 1


@pytest.mark.parametrize("tag, words", [
    (Tag("walk", 5, 4), ["'walk'", "clip 'take1'", "starts at frame 5", "ends at frame 4"]),
    (Tag("walk", -1, 4), ["'walk'", "clip 'take1'", "frames -1-4", "0-9"]),
    (Tag("walk", 3, 10), ["'walk'", "frames 3-10", "only has frames 0-9"]),
    (Tag("walk", 1.5, 4), ["'walk'", "whole numbers"]),
    (Tag("walk fast", 0, 4), ["'walk fast'", "a space", "clip 'take1'"]),
])
def test_validate_tags_errors(tag, words):
    with pytest.raises(TagError) as e:
        T.validate_tags([Tag("ok", 0, 9), tag], 10, "take1")
    for w in words:
        assert w in str(e.value)


def test_range_mask_overlaps_and_bounds():
    m = T.range_mask([(2, 4), (3, 6), (9, 9)], 10)
    assert m.tolist() == [False, False, True, True, True, True, True, False, False, True]
    assert not T.range_mask([], 4).any()


def test_excluded_rows_default_custom_and_case():
    tags = [Tag("TPose", 0, 2), Tag("walk", 0, 9), Tag("Mistake", 7, 8), Tag("t-pose", 4, 4)]
    got = T.excluded_rows(tags, 10)
    assert np.flatnonzero(got).tolist() == [0, 1, 2, 4, 7, 8]
    got = T.excluded_rows(tags, 10, ["WALK"])
    assert got.all()
    assert not T.excluded_rows(tags, 10, []).any()
    with pytest.raises(TagError, match="'walk'.*clip 'c'"):
        T.excluded_rows([Tag("walk", 0, 10)], 10, clip_name="c")


def test_tag_masks_merge_case_and_place_clips():
    offsets = np.array([0, 5, 12])
    masks = T.tag_masks([[Tag("Walk", 1, 2), Tag("idle", 4, 4)],
                         [Tag("walk", 0, 1), Tag("WALK", 6, 6)]], offsets)
    assert sorted(masks) == ["idle", "walk"]
    assert np.flatnonzero(masks["walk"]).tolist() == [1, 2, 5, 6, 11]
    assert np.flatnonzero(masks["idle"]).tolist() == [4]
    assert all(m.shape == (12,) and m.dtype == bool for m in masks.values())


def test_tag_masks_errors():
    with pytest.raises(TagError, match="tags for 1 clips but the database has 2"):
        T.tag_masks([[]], [0, 5, 12])
    with pytest.raises(TagError, match="'run' on clip 'b'.*0-6"):
        T.tag_masks([[], [Tag("run", 0, 7)]], [0, 5, 12], clip_names=["a", "b"])


# -------------------------------------------------------------------------- queries


def _truth_masks():
    """Masks a, b, c over 8 rows holding every combination of three booleans."""
    combos = list(itertools.product([False, True], repeat=3))
    return combos, {k: np.array([c[i] for c in combos]) for i, k in enumerate("abc")}


@pytest.mark.parametrize("text, fn", [
    ("a or b and c", lambda a, b, c: a or (b and c)),
    ("a and b or c", lambda a, b, c: (a and b) or c),
    ("not a and b", lambda a, b, c: (not a) and b),
    ("not a or b", lambda a, b, c: (not a) or b),
    ("not (a or b) and c", lambda a, b, c: (not (a or b)) and c),
    ("(a or b) and c", lambda a, b, c: (a or b) and c),
    ("a and (b or not c)", lambda a, b, c: a and (b or not c)),
    ("not not a", lambda a, b, c: a),
    ("a or not b and not c", lambda a, b, c: a or ((not b) and (not c))),
    ("((a))", lambda a, b, c: a),
])
def test_precedence_and_parentheses(text, fn):
    combos, masks = _truth_masks()
    got = Q.parse_query(text).evaluate(masks, 8)
    assert got.tolist() == [bool(fn(*c)) for c in combos]


def test_canonical_form_shows_precedence():
    assert str(Q.parse_query("a or b and c")) == "a or b and c"
    assert str(Q.parse_query("(a or b) and c")) == "(a or b) and c"
    assert str(Q.parse_query("not (a and b)")) == "not (a and b)"
    q = Q.parse_query("x and (y or (z and not w))")
    assert Q.parse_query(str(q)).root == q.root


def test_keywords_and_names_ignore_case():
    masks = {"walk": np.array([1, 1, 0, 0], bool), "run": np.array([0, 1, 1, 0], bool)}
    q = Q.parse_query("WALK AnD Not Run")
    assert q.evaluate(masks, 4).tolist() == [True, False, False, False]
    assert q.names() == ["walk", "run"]
    assert Q.parse_query("ALL").evaluate(masks, 4).all()
    assert Q.parse_query("all and not walk").evaluate(masks, 4).tolist() == [0, 0, 1, 1]


def test_names_with_punctuation_and_repeats():
    q = Q.parse_query("t-pose or turn.90 or T-Pose or (not idle_2)")
    assert q.names() == ["t-pose", "turn.90", "idle_2"]
    assert Q.parse_query("all").names() == []


@pytest.mark.parametrize("text, words", [
    ("walk and", ["Tag query 'walk and': expected a tag name after 'and' at position 8"]),
    ("walk or", ["after 'or' at position 7"]),
    ("not", ["after 'not' at position 3"]),
    ("walk and or run", ["after 'and' at position 9", "found 'or'"]),
    ("(walk or run", ["expected ')' at position 12", "'(' at position 0"]),
    ("(walk or run stop)", ["expected ')' at position 13", "found 'stop'"]),
    ("walk)", ["the ')' at position 4 has no '('"]),
    ("walk run", ["expected 'and', 'or' or the end of the query at position 5", "found 'run'"]),
    ("()", ["after '(' at position 1", "found ')'"]),
    ("walk & run", ["unexpected character '&' at position 5"]),
    ("walk and not", ["after 'not' at position 12"]),
    ("", ["empty"]),
    ("   ", ["empty"]),
])
def test_parse_errors(text, words):
    with pytest.raises(TagError) as e:
        Q.parse_query(text)
    for w in words:
        assert w in str(e.value)


def test_unknown_tag_lists_existing_tags():
    masks = {"walk": np.zeros(3, bool), "idle": np.zeros(3, bool)}
    with pytest.raises(TagError) as e:
        Q.parse_query("walk or jump").evaluate(masks, 3)
    msg = str(e.value)
    assert "'jump'" in msg and "idle, walk" in msg and "'walk'" not in msg.split("uses")[1].split(",")[0]
    with pytest.raises(TagError, match="no clip has any tag yet"):
        Q.parse_query("walk").evaluate({}, 3)
    with pytest.raises(TagError, match="shape"):
        Q.parse_query("walk").evaluate({"walk": np.zeros(4, bool)}, 3)


# -------------------------------------------------------------- the end-of-range rule


def _runs(mask):
    """(start, end) inclusive of each run of True."""
    m = np.concatenate(([0], mask.astype(int), [0]))
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1))


# The strict rule (every row of a row's trajectory future selected) was the only
# rule before Tag Query Lead: the sample take's walks are 0.5-1.2 s pieces, so it left
# 0.6 s of a 16.4 s walking selection and walk-only bakes froze. It is now the
# bake's Strict Tag Query (``selected_ahead`` = the future); the default offers
# every selected row whose future exists in its clip, with a shorter lead.


def test_end_of_range_removes_last_future_rows_of_each_range():
    # Clip 0: rows 0..29, clip 1: rows 30..59. Tag ranges of various lengths.
    offsets = np.array([0, 30, 60])
    clips_tags = [[Tag("walk", 2, 11), Tag("walk", 20, 29)],   # second ends at clip end
                  [Tag("walk", 0, 9), Tag("walk", 15, 17)]]    # first starts at clip start
    masks = T.tag_masks(clips_tags, offsets)
    valid = np.ones(60, bool)
    got = Q.query_rows("walk", masks, valid, offsets, 4, selected_ahead=4)
    # The strict rule: each range loses exactly its last 4 rows; the range ending
    # row 29 does not continue into the range starting row 30; the 3-row range vanishes.
    expect = np.zeros(60, bool)
    for a, b in [(2, 7), (20, 25), (30, 35)]:
        expect[a:b + 1] = True
    assert got.tolist() == expect.tolist()
    # The default: every selected row whose 4-row future stays in its clip (the
    # rows after it may be untagged); only the clip ends lose rows.
    got = Q.query_rows("walk", masks, valid, offsets, 4)
    expect = np.zeros(60, bool)
    for a, b in [(2, 11), (20, 25), (30, 39), (45, 47)]:
        expect[a:b + 1] = True
    assert got.tolist() == expect.tolist()
    # A lead of 1 row: the last selected row of each range drops out too.
    got = Q.query_rows("walk", masks, valid, offsets, 4, selected_ahead=1)
    expect = np.zeros(60, bool)
    for a, b in [(2, 10), (20, 25), (30, 38), (45, 46)]:
        expect[a:b + 1] = True
    assert got.tolist() == expect.tolist()


def test_end_of_range_never_crosses_clips_even_when_all_selected():
    offsets = np.array([0, 10, 25, 27])
    for ahead in (0, 3):
        got = Q.query_rows("all", {}, np.ones(27, bool), offsets, 3, selected_ahead=ahead)
        expect = np.zeros(27, bool)
        expect[0:7] = True
        expect[10:22] = True  # clip 2 (2 rows) is shorter than the future: nothing
        assert got.tolist() == expect.tolist()


def test_end_of_range_per_row_future_and_validity():
    offsets = np.array([0, 20, 40])
    masks = {"run": np.ones(40, bool)}
    masks["run"][15:25] = False
    fut = Q.future_frames_per_row([30.0, 60.0], offsets, 0.1)  # 3 frames, then 6
    assert fut.tolist() == [3] * 20 + [6] * 20
    valid = np.ones(40, bool)
    valid[0] = False
    got = Q.query_rows(Q.parse_query("run"), masks, valid, offsets, fut, selected_ahead=fut)
    expect = np.zeros(40, bool)
    expect[1:12] = True     # 0..14 selected, 3 ahead, row 0 invalid
    expect[25:34] = True    # 25..39 selected, 6 ahead
    assert got.tolist() == expect.tolist()
    got = Q.query_rows(Q.parse_query("run"), masks, valid, offsets, fut)
    expect[12:15] = True    # default: rows 12..14 play until the selection ends
    assert got.tolist() == expect.tolist()


def test_end_of_range_zero_future_is_selection_and_validity():
    rng = np.random.default_rng(1)
    sel = rng.random(50) < 0.5
    valid = rng.random(50) < 0.8
    got = Q.query_rows("x", {"x": sel}, valid, [0, 20, 50], 0)
    assert got.tolist() == (sel & valid).tolist()


@pytest.mark.parametrize("strict", [False, True])
def test_end_of_range_matches_a_plain_loop(strict):
    rng = np.random.default_rng(7)
    offsets = np.array([0, 37, 38, 90, 200])
    n = offsets[-1]
    sel = rng.random(n) < 0.8
    valid = rng.random(n) < 0.9
    fut = rng.integers(0, 6, size=n)
    ahead = fut if strict else rng.integers(0, 4, size=n)
    clip = np.searchsorted(offsets, np.arange(n), side="right") - 1
    expect = [bool(sel[i] and valid[i] and i + max(fut[i], ahead[i]) < offsets[clip[i] + 1]
                   and sel[i:i + ahead[i] + 1].all()) for i in range(n)]
    got = Q.query_rows("x", {"x": sel}, valid, offsets, fut, selected_ahead=ahead)
    assert got.tolist() == expect


def test_end_of_range_empty_result_and_bad_input():
    masks = {"stop": np.zeros(20, bool)}
    masks["stop"][3:6] = True
    with pytest.raises(TagError) as e:
        Q.query_rows("stop", masks, np.ones(20, bool), [0, 20], 5, selected_ahead=5)
    assert str(e.value).startswith("The tag query 'stop' selects no frame that can be played")
    assert "shorter than the trajectory looks ahead (5 frames)" in str(e.value)
    with pytest.raises(TagError, match="shorter than the lead a frame needs after it \\(3 frames; a lower Tag Query"):
        Q.query_rows("stop", masks, np.ones(20, bool), [0, 20], 5, selected_ahead=3)
    # By default a short range plays as long as it lasts; only the clip's end is out of reach.
    assert np.flatnonzero(Q.query_rows("stop", masks, np.ones(20, bool), [0, 20], 5)).tolist() == [3, 4, 5]
    late = {"stop": np.arange(20) >= 17}
    with pytest.raises(TagError, match="look-ahead \\(5 frames\\) of its clip's end"):
        Q.query_rows("stop", late, np.ones(20, bool), [0, 20], 5)
    with pytest.raises(TagError, match="no frame carries these tags"):
        Q.query_rows("stop and not stop", masks, np.ones(20, bool), [0, 20], 0)
    with pytest.raises(TagError, match="whole numbers of frames"):
        Q.query_rows("stop", masks, np.ones(20, bool), [0, 20], -1)
    with pytest.raises(TagError, match="whole numbers of frames"):
        Q.query_rows("stop", masks, np.ones(20, bool), [0, 20], 0, selected_ahead=1.5)
    with pytest.raises(TagError, match="rise from 0"):
        Q.query_rows("stop", masks, np.ones(20, bool), [0, 19], 0)
    with pytest.raises(TagError, match="'go'"):
        Q.query_rows("go", masks, np.ones(20, bool), [0, 20], 0)


def test_database_query_rows_uses_trajectory_horizon():
    db = SimpleNamespace(spec=default_spec("l", "r", "h"),  # looks 1 s ahead
                         clip_offsets=np.array([0, 100, 250]), clip_fps=np.array([30.0, 60.0]),
                         clip_names=["a", "b"], valid=np.ones(250, bool))
    tags = [[Tag("walk", 0, 49)], [Tag("walk", 10, 149)]]
    strict = Q.database_query_rows(db, tags, "walk", strict=True)
    assert np.flatnonzero(strict[:100]).tolist() == list(range(20))       # 30 rows ahead selected
    assert np.flatnonzero(strict[100:]).tolist() == list(range(10, 90))   # 60 rows ahead in the clip
    # Default: a lead of 0 s; the future must still lie in the clip.
    got = Q.database_query_rows(db, tags, "walk")
    assert np.flatnonzero(got[:100]).tolist() == list(range(50))
    assert np.flatnonzero(got[100:]).tolist() == list(range(10, 90))
    # A lead of 0.2 s: 6 rows at 30 fps, 12 at 60 fps.
    lead = Q.database_query_rows(db, tags, "walk", ahead_s=0.2)
    assert np.flatnonzero(lead[:100]).tolist() == list(range(44))
    assert np.flatnonzero(lead[100:]).tolist() == list(range(10, 90))


# ---------------------------------------------------------------------- dance cards


CARD = D.DanceCard("Locomotion \"basic\"", [
    D.Move("idle", 20.0, "Standing, weight shifts"),
    D.Move("walk", 60.5, ""),
    D.Move("Turn.90-left", None, "tab\there, ünïcode"),
])


@pytest.mark.parametrize("ext", [".toml", ".json", ".TOML"])
def test_dance_card_round_trip(tmp_path, ext):
    path = tmp_path / f"card{ext}"
    D.save_dance_card(CARD, path)
    assert D.load_dance_card(path) == CARD
    assert D.load_dance_card(str(path)) == CARD


def test_dance_card_reads_hand_written_files(tmp_path):
    (tmp_path / "loco.toml").write_text(
        '[[move]]\nname = "walk"\nduration = 30\n\n[[move]]\nname = "run"\n', "utf-8")
    card = D.load_dance_card(tmp_path / "loco.toml")
    assert card.title == "loco"  # no title: the file name
    assert card.moves == [D.Move("walk", 30.0, ""), D.Move("run", None, "")]
    assert isinstance(card.moves[0].duration_s, float)
    (tmp_path / "loco.json").write_text(
        '\ufeff{"title": "T", "moves": [{"name": "walk", "description": "d"}]}', "utf-8")
    assert D.load_dance_card(tmp_path / "loco.json") == D.DanceCard("T", [D.Move("walk", None, "d")])
    assert D.dance_card_from_dict(CARD.to_dict()) == CARD


def test_dance_card_file_errors(tmp_path):
    with pytest.raises(TagError, match=r"does not exist"):
        D.load_dance_card(tmp_path / "nope.toml")
    with pytest.raises(TagError, match=r"\.toml or \.json"):
        D.load_dance_card(tmp_path / "card.yaml")
    (tmp_path / "d.json").mkdir()
    with pytest.raises(TagError, match="folder"):
        D.load_dance_card(tmp_path / "d.json")
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "x"\n[[move]]\nname = walk\n', "utf-8")
    with pytest.raises(TagError) as e:
        D.load_dance_card(bad)
    assert "not valid TOML" in str(e.value) and "line 3" in str(e.value)
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": "x",\n "moves": [\n  {"name": "walk",}\n]}', "utf-8")
    with pytest.raises(TagError) as e:
        D.load_dance_card(bad)
    assert "not valid JSON" in str(e.value) and "line 3, column" in str(e.value)
    bad.write_bytes(b'{"title": "\xff"}')
    with pytest.raises(TagError, match="UTF-8"):
        D.load_dance_card(bad)
    with pytest.raises(TagError, match=r"\.toml or \.json"):
        D.save_dance_card(CARD, tmp_path / "card.txt")


@pytest.mark.parametrize("d, words", [
    ({"title": "x", "moves": []}, ["lists no moves"]),
    ({"title": "x"}, ["lists no moves"]),
    ({"moves": "walk"}, ["not a list of moves"]),
    ({"moves": ["walk"]}, ["Move 1", "not a table"]),
    ({"moves": [{"duration": 3}]}, ["Move 1", "has no name"]),
    ({"moves": [{"name": "walk fast"}]}, ["Move 1", "'walk fast'", "a space"]),
    ({"moves": [{"name": "not"}]}, ["'not'", "query language"]),
    ({"moves": [{"name": 5}]}, ["Move 1", "must be text"]),
    ({"moves": [{"name": "walk"}, {"name": "run"}, {"name": "Walk"}]},
     ["Move 3 ('Walk')", "repeats the name of move 1 ('walk')"]),
    ({"moves": [{"name": "walk", "duration": 0}]}, ["duration 0", "greater than 0"]),
    ({"moves": [{"name": "walk", "duration": -2.5}]}, ["duration -2.5"]),
    ({"moves": [{"name": "walk", "duration": float("nan")}]}, ["duration nan"]),
    ({"moves": [{"name": "walk", "duration": "30s"}]}, ["not a number: '30s'"]),
    ({"moves": [{"name": "walk", "duration": True}]}, ["not a number: True"]),
    ({"moves": [{"name": "walk", "description": 3}]}, ["description that is not text"]),
    ({"title": 3, "moves": [{"name": "walk"}]}, ["title that is not text"]),
    ({"titel": "x", "author": "y", "moves": [{"name": "walk"}]},
     ["unknown keys: 'titel', 'author'", "'title', 'moves'"]),
    ({"moves": [{"name": "walk", "durations": 3, "tempo": 1}]},
     ["Move 1 ('walk')", "unknown keys: 'durations', 'tempo'"]),
    ([1, 2], ["must be a table"]),
])
def test_malformed_cards(d, words):
    with pytest.raises(TagError) as e:
        D.dance_card_from_dict(d)
    for w in words:
        assert w in str(e.value)


def test_malformed_toml_card_names_toml_keys(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[[moves]]\nname = "walk"\n', "utf-8")
    with pytest.raises(TagError, match="unknown keys: 'moves'.*'title', 'move'"):
        D.load_dance_card(p)
    p.write_text('title = "t"\n', "utf-8")
    with pytest.raises(TagError, match=r"'c.toml' lists no moves; add at least one \[\[move\]\]"):
        D.load_dance_card(p)
    p.write_text('[[move]]\nname = "walk"\nduration = -inf\n', "utf-8")
    with pytest.raises(TagError, match="Move 1 \\('walk'\\) of dance card 'c.toml'.*-inf"):
        D.load_dance_card(p)


def test_card_json_is_plain_json():
    d = json.loads(CARD.to_json())
    assert d["moves"][2] == {"name": "Turn.90-left", "description": "tab\there, ünïcode"}
