"""docs/user/settings.md is the rendering of the bake's stage knobs (no Blender)."""

from core.bake import settings
from tools import settings_table


def test_the_settings_reference_is_the_rendering_of_the_knobs():
    with open(settings_table.PATH, encoding="utf-8") as fh:
        assert fh.read() == settings_table.render(), "run python -m tools.settings_table"


def test_every_knob_has_a_row_with_its_stage_and_default():
    text = settings_table.render()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == len(settings.knobs())
    for k, row in zip(settings.knobs(), rows):
        assert "`%s`" % k.name in row and k.description in row
        assert settings.stage_classes()[k.stage].LABEL in row
    by_name = dict(zip((k.name for k in settings.knobs()), rows))
    assert "| 45° |" in by_name["force_search_angle"] and "| 0.1 m |" in by_name["clamp_distance"]
    assert "| on |" in by_name["use_foot_lock"] and "(*switch*)" in by_name["use_foot_lock"]
    assert "(*Advanced*)" in by_name["keep_window"] and "| 20 |" in by_name["keep_window"]
