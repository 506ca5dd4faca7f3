"""Dance cards, bone maps and scenario files on hostile input: deep nesting,
other encodings, absurd numbers. Each is a sentence (MotionMatchingError)."""

import json

import pytest

from core.database import dance_card
from core.skeleton import humanoid_json
from core.io import text_input
from core.paths import scenario, scenario_builtins
from core.errors import MotionMatchingError

DEEP_JSON = "[" * 100000 + "]" * 100000
DEEP_TOML = "a = " + "[" * 100000 + "]" * 100000 + "\n"


def _message(fn, *args):
    with pytest.raises(MotionMatchingError) as info:
        fn(*args)
    message = str(info.value)
    assert "Traceback" not in message and len(message) < 600
    return message


# ---------------------------------------------------------------------------
# Finding 5: deep nesting


@pytest.mark.parametrize("name, text", [
    ("card.json", '{"title": "t", "moves": ' + DEEP_JSON + "}"),
    ("card.toml", DEEP_TOML),
    ("card.json", '{"title": ' + "[" * 200 + "]" * 200 + ', "moves": []}'),
])
def test_deeply_nested_dance_card(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert "deep" in _message(dance_card.load_dance_card, path)


def test_deeply_nested_bone_map():
    assert "deep" in _message(humanoid_json.mapping_from_json, '{"joints": ' + DEEP_JSON + "}")
    assert "deep" in _message(humanoid_json.mapping_from_json, ("{\"Hips\": " + "[" * 100 + "]" * 100 + "}").encode())


def test_deeply_nested_scenario(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"points": ' + DEEP_JSON + "}")
    message = _message(scenario.load_scenario, str(path))
    assert "deep.json" in message and "deep" in message


# ---------------------------------------------------------------------------
# Finding 5: encodings of a bone map (and the other JSON files)

MAP = {"format": "humanoid-mapping", "version": 1, "joints": {"Hips": "Hüfte", "Spine": "Rücken"}}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_bone_map_in_json_encodings(encoding):
    raw = json.dumps(MAP, ensure_ascii=False).encode(encoding)
    assert humanoid_json.mapping_from_json(raw) == {"Hips": "Hüfte", "Spine": "Rücken"}


def test_bone_map_in_latin1_is_a_sentence():
    raw = json.dumps(MAP, ensure_ascii=False).encode("latin-1")
    message = _message(humanoid_json.mapping_from_json, raw)
    assert "not UTF-8" in message and "save it as UTF-8" in message


def test_scenario_and_card_in_utf16(tmp_path):
    path = tmp_path / "walk.json"
    path.write_bytes(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 2, "x": 0, "y": -2}]}).encode("utf-16"))
    assert scenario.duration(scenario.load_scenario(str(path))) == 2.0
    card = tmp_path / "card.json"
    card.write_bytes(json.dumps({"title": "T", "moves": [{"name": "walk"}]}).encode("utf-16"))
    assert dance_card.load_dance_card(card).moves[0].name == "walk"
    toml = tmp_path / "card.toml"
    toml.write_bytes('title = "T"\n[[move]]\nname = "walk"\n'.encode("utf-16"))
    assert "UTF-8" in _message(dance_card.load_dance_card, toml)


def test_long_values_are_shortened_in_messages(tmp_path):
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"title": "x" * 100000, "moves": [{"name": "walk", "duration": ["y" * 10**6]}]}))
    assert "duration that is not a number" in _message(dance_card.load_dance_card, path)
    assert "..." in _message(humanoid_json.mapping_from_json, json.dumps({"Hips": ["z" * 10**6]}))


def test_dance_card_move_count_is_bounded(tmp_path):
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"moves": [{"name": "m%d" % i} for i in range(dance_card.MAX_MOVES + 1)]}))
    assert "at most %d" % dance_card.MAX_MOVES in _message(dance_card.load_dance_card, path)


def test_oversized_file_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}] * 20}))
    monkeypatch.setattr(text_input, "MAX_BYTES", 100)
    assert "at most" in _message(scenario.load_scenario, str(path))


# ---------------------------------------------------------------------------
# Findings 4 and 5: scenario numbers


def _scenario_file(tmp_path, points, name="s.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"points": points}))
    return str(path)


@pytest.mark.parametrize("points, words", [
    ([{"t": 0, "x": 0, "y": 0}, {"t": 1e9, "x": 0, "y": 0}], ["Point 1", "t is 1e+09", "3 hours"]),
    ([{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 1e308, "y": 0}], ["Point 1", "x is 1e+308"]),
    ([{"t": 0, "x": 0, "y": -2e6}, {"t": 1, "x": 0, "y": 0}], ["Point 0", "y is -2e+06"]),
    ([{"t": 0, "x": 0, "y": 0}, {"t": 0.001, "x": 5, "y": 0}], ["Point 1", "m/s", "at most 100 m/s"]),
    ([{"t": 0, "x": 0, "y": 0, "facing": 1e300}, {"t": 1, "x": 0, "y": 0}], ["Point 0", "facing"]),
    ([{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": int("9" * 400), "y": 0}], ["Point 1", "finite"]),
])
def test_scenario_numbers_out_of_bounds(tmp_path, points, words):
    message = _message(scenario.load_scenario, _scenario_file(tmp_path, points))
    for w in words + ["s.json"]:
        assert w in message, (w, message)


def test_scenario_point_count_is_bounded(tmp_path):
    points = [{"t": 0.01 * i, "x": 0, "y": 0} for i in range(scenario.MAX_POINTS + 1)]
    assert "at most %d" % scenario.MAX_POINTS in _message(scenario.load_scenario, _scenario_file(tmp_path, points))


def test_longest_scenario_is_accepted(tmp_path):
    sc = scenario.load_scenario(_scenario_file(tmp_path, [{"t": 0, "x": 0, "y": 0},
                                                          {"t": scenario.MAX_DURATION, "x": 1000, "y": 0}]))
    assert scenario.duration(sc) == scenario.MAX_DURATION
    for name, (_label, _desc, _make) in scenario_builtins.BUILTINS.items():
        scenario_builtins.builtin(name)  # the built-in paths stay within the bounds
