"""Tags, dance cards and the coverage report, through the operators."""

import json

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE, SAMPLES
import bl_helpers as H

CARD = SAMPLES + "/jl_mm_dance_card.toml"


def _sample_with_db(tags=()):
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    for name, a, b in tags:
        t = obj.animation_data.action.motion_matching.tags.add()
        t.name, t.frame_start, t.frame_end = name, a, b
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}   # the take's rows alone
    return obj


def test_dance_card_and_coverage_report(tmp_path):
    assert bpy.ops.motion_matching.import_dance_card(filepath=CARD) == {"FINISHED"}
    card = bpy.context.scene.motion_matching.dance_card
    assert [m.name for m in card][:3] == ["idle", "walk", "run"] and len(card) == 8
    _sample_with_db(tags=[("idle", 1, 600), ("walk", 900, 2100), ("walk", 2000, 2400), ("run", 3000, 3600)])
    out = tmp_path / "coverage.json"
    assert bpy.ops.motion_matching.database_report(filepath=str(out)) == {"FINISHED"}
    report = json.loads(out.read_text())
    moves = {m["name"]: m for m in report["moves"]}
    assert moves["strafe_left"]["status"] == "missing"
    assert moves["stop"]["status"] == "missing"
    # Overlapping walk ranges count once: frames 900-2400 at 60 fps.
    assert moves["walk"]["seconds"] == pytest.approx(1501 / 60.0, abs=1e-6)
    assert moves["idle"]["status"] == "short" or moves["idle"]["seconds"] >= 10
    # The take itself covers idle, walking and running speeds.
    cap = report["capability"]
    per_speed = np.sum(np.array(cap["seconds"], dtype=float), axis=1)
    names = cap["speed_names"]
    by_name = {}
    for name, secs in zip(names, per_speed):
        by_name[name] = by_name.get(name, 0.0) + secs
    assert by_name["idle"] > 10 and by_name["walk"] > 10 and by_name["run"] > 5
    assert report["totals"]["seconds"] == pytest.approx(5562 / 60.0, abs=0.05)
    text = bpy.data.texts["Motion Matching Coverage"].as_string()
    assert "strafe_left" in text and "missing" in text


def test_malformed_dance_card_keeps_the_old_one(tmp_path):
    assert bpy.ops.motion_matching.import_dance_card(filepath=CARD) == {"FINISHED"}
    bad = tmp_path / "card.toml"
    bad.write_text('title = "x"\n[[move]]\nname = "walk"\nduration = -3\n')
    with pytest.raises(RuntimeError, match="duration"):
        bpy.ops.motion_matching.import_dance_card(filepath=str(bad))
    bad.write_text('[[move]\nname = "walk"\n')
    with pytest.raises(RuntimeError, match="line"):
        bpy.ops.motion_matching.import_dance_card(filepath=str(bad))
    assert len(bpy.context.scene.motion_matching.dance_card) == 8


def test_tag_from_preview_range_and_markers():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    scene = bpy.context.scene
    scene.use_preview_range = True
    scene.frame_preview_start, scene.frame_preview_end = 120, 480
    assert bpy.ops.motion_matching.tag_add("INVOKE_DEFAULT", name="walk") == {"FINISHED"}
    tags = obj.animation_data.action.motion_matching.tags
    assert [(t.name, t.frame_start, t.frame_end) for t in tags] == [("walk", 120, 480)]
    with pytest.raises(RuntimeError, match="not"):
        bpy.ops.motion_matching.tag_add(name="two words", frame_start=1, frame_end=5)
    scene.timeline_markers.new("idle", frame=1)
    scene.timeline_markers.new("run", frame=1000)
    scene.timeline_markers.new("stop", frame=5000)
    assert bpy.ops.motion_matching.tags_from_markers(replace=True) == {"FINISHED"}
    assert [(t.name, t.frame_start, t.frame_end) for t in tags] == [
        ("idle", 1, 999), ("run", 1000, 4999), ("stop", 5000, 5562)]


def test_tag_query_restricts_search():
    obj = _sample_with_db(tags=[("walk", 900, 2100), ("run", 3000, 3600)])
    store = H.addon_module("bridge.database.store")
    search = H.addon_module("core.database.selection")
    database = store.load(bpy.context.scene)
    db = database.matching
    # Rows are 0-based from frame 1. The strict rule (Strict Tag Query; the only
    # rule before Tag Query Lead) cuts the last second of each range.
    allowed = search.allowed_rows(database, "walk or run", strict=True)
    rows = np.flatnonzero(allowed)
    assert rows.min() == 899 and rows.max() == 3599 - 60
    assert not allowed[2100 - 60: 2999].any()
    assert allowed.sum() == (2100 - 900 + 1 - 60) + (3600 - 3000 + 1 - 60)
    # By default every selected frame is offered (its future lies in the take), and
    # the bake's lead (1/3 s: 20 rows) cuts that much of each range's end.
    everything = search.allowed_rows(database, "walk or run")
    assert np.flatnonzero(everything).tolist() == list(range(899, 2100)) + list(range(2999, 3600))
    settings = H.addon_module("bridge.blender.bake_settings").to_core(
        bpy.context.scene.motion_matching.bake_settings)
    searchable, playable = search.bake_rows(database, "walk or run", settings)
    assert np.array_equal(playable, everything)
    assert np.flatnonzero(searchable).tolist() == list(range(899, 2080)) + list(range(2999, 3580))
    assert np.array_equal(search.allowed_rows(database, ""), db.valid)


def test_auto_tag_uses_dance_card_names_and_covers_the_take():
    assert bpy.ops.motion_matching.import_dance_card(filepath=CARD) == {"FINISHED"}
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.auto_tag() == {"FINISHED"}
    tags = obj.animation_data.action.motion_matching.tags
    seconds = {}
    for t in tags:
        assert 1 <= t.frame_start <= t.frame_end <= 5562
        seconds[t.name] = seconds.get(t.name, 0) + (t.frame_end - t.frame_start + 1) / 60.0
    for name in ("idle", "walk", "run"):
        assert seconds[name] > 10, seconds
    assert seconds["start"] > 1 and seconds["stop"] > 1
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    assert bpy.ops.motion_matching.database_report() == {"FINISHED"}
    text = bpy.data.texts["Motion Matching Coverage"].as_string()
    assert "strafe_left" in text
