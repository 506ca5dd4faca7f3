"""File-name rules of the dance card: which clips get which tag, and bad rules."""

import json

import pytest

from core.database import dance_card as dc
from core.database.file_rules import FileRule, tags_for_file
from core.database.tags import TagError

CARD = """title = "Locomotion"

[[move]]
name = "walk"

[[move]]
name = "turn_left"

[[move]]
name = "turn_right"

"""


def _card(tmp_path, rules, name="card.toml"):
    path = tmp_path / name
    path.write_text(CARD + rules, encoding="utf-8")
    return dc.load_dance_card(path)


def test_rules_tag_files_by_name_ignoring_case_and_folder(tmp_path):
    card = _card(tmp_path, '[[rule]]\nfiles = "*walk-turn-left*"\ntag = "turn_left"\n\n'
                           '[[rule]]\nfiles = "*walk*"\ntag = "WALK"\n\n'
                           '[[rule]]\nfiles = "*-turn-right_??.bvh"\ntag = "turn_right"\n')
    # The rule's tag takes the move's own spelling.
    assert card.rules == [FileRule("*walk-turn-left*", "turn_left"), FileRule("*walk*", "walk"),
                          FileRule("*-turn-right_??.bvh", "turn_right")]
    assert tags_for_file(card.rules, "/data/dataset-1_Walk-Turn-Left_happy_001.bvh") == ["turn_left", "walk"]
    assert tags_for_file(card.rules, "walk-turn-right_03.bvh") == ["walk", "turn_right"]
    assert tags_for_file(card.rules, "walk-turn-right_003.bvh") == ["walk"]
    assert tags_for_file(card.rules, "run_01.bvh") == []
    # A folder name that matches does not count: only the file's name.
    assert tags_for_file(card.rules, "/walk/run_01.bvh") == []


def test_rules_round_trip_through_toml_and_json(tmp_path):
    card = _card(tmp_path, '[[rule]]\nfiles = "*walk*"\ntag = "walk"\n')
    for ext in (".toml", ".json"):
        path = tmp_path / ("again" + ext)
        dc.save_dance_card(card, path)
        again = dc.load_dance_card(path)
        assert again.rules == card.rules and [m.name for m in again.moves] == ["walk", "turn_left", "turn_right"]
    assert json.loads(card.to_json())["rules"] == [{"files": "*walk*", "tag": "walk"}]
    assert dc.dance_card_from_dict(json.loads(card.to_json())).rules == card.rules


def test_a_card_without_rules_has_none(tmp_path):
    assert _card(tmp_path, "").rules == []


@pytest.mark.parametrize("rules, words", [
    ('[[rule]]\nfiles = "*walk*"\ntag = "wlak"\n', ["Rule 1 ('*walk*' -> wlak)", "no move of the card"]),
    ('[[rule]]\nfiles = "*walk*"\ntag = "walk"\n\n[[rule]]\nfiles = "*run*"\ntag = "run"\n',
     ["Rule 2 ('*run*' -> run)", "'run'"]),
    ('[[rule]]\ntag = "walk"\n', ["Rule 1", "no 'files' pattern"]),
    ('[[rule]]\nfiles = "*walk*"\n', ["Rule 1 ('*walk*')", "no 'tag'"]),
    ('[[rule]]\nfiles = "*walk*"\ntag = "walk"\nweight = 2\n', ["Rule 1", "unknown keys: 'weight'"]),
    ('[[rule]]\nfiles = "takes/*walk*"\ntag = "walk"\n', ["Rule 1", "folder"]),
    ('[[rule]]\nfiles = "*walk*"\ntag = "left turn"\n', ["Rule 1", "not a valid tag name"]),
])
def test_a_bad_rule_is_named_in_one_sentence(tmp_path, rules, words):
    with pytest.raises(TagError) as err:
        _card(tmp_path, rules)
    text = str(err.value)
    assert "card.toml" in text and text.endswith(".") and "\n" not in text
    for w in words:
        assert w in text, text


def test_json_rules_are_checked_the_same_way():
    with pytest.raises(TagError, match=r"Rule 1 \('\*walk\*' -> jog\).*no move"):
        dc.dance_card_from_dict({"moves": [{"name": "walk"}], "rules": [{"files": "*walk*", "tag": "jog"}]})


def test_rules_that_are_not_a_list_are_refused():
    with pytest.raises(TagError, match="rules of the dance card are not a list"):
        dc.dance_card_from_dict({"moves": [{"name": "walk"}], "rules": "*walk*"})
