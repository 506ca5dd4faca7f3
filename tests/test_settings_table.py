"""docs/user/settings.md is the rendering of the bake's stage knobs (no Blender)."""

from core.bake import settings
from tools import settings_table


def test_the_settings_reference_is_the_rendering_of_the_knobs():
    with open(settings_table.PATH, encoding="utf-8") as fh:
        assert fh.read() == settings_table.render(), "run python -m tools.settings_table"


def test_every_knob_has_a_row_with_its_stage_and_default():
    text = settings_table.render().split("Scene inputs")[0]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == len(settings.knobs())
    for k, row in zip(settings.knobs(), rows):
        assert "`%s`" % k.name in row and k.description in row
        assert settings.stage_classes()[k.stage].LABEL in row
    by_name = dict(zip((k.name for k in settings.knobs()), rows))
    assert "| 45° |" in by_name["force_search_angle"] and "| 0.1 m |" in by_name["clamp_distance"]
    assert "| on |" in by_name["use_foot_lock"] and "(*switch*)" in by_name["use_foot_lock"]
    assert "(*Advanced*)" in by_name["keep_window"] and "| 20 |" in by_name["keep_window"]


def test_the_ground_has_its_row_after_the_knobs_with_a_short_tooltip():
    knobs, inputs = settings_table.render().split("Scene inputs")
    assert "`ground`" not in knobs
    row = [line for line in inputs.splitlines() if "`ground`" in line]
    assert len(row) == 1 and "| Bake | Ground |" in row[0] and settings.GROUND_TOOLTIP in row[0]
    assert len(settings.GROUND_TOOLTIP.split()) <= 20
