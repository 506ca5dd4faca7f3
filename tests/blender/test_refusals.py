"""A refused operator changes nothing, flags included, and writes nothing:
Bake and Start Preview when the database's actions were deleted or its list
emptied, Coverage Report given a folder as its file."""

import hashlib

import bpy
import pytest

import bl_helpers as H


def _state():
    """Everything a refusal must leave as it was: the database and its flags,
    text blocks (with their text), actions, objects."""
    scene = bpy.context.scene
    mm = scene.motion_matching
    store = H.addon_module("bridge.database.store")
    return {
        "flags": (mm.database_built, mm.database_stale, mm.database_summary, mm.preview_active,
                  mm.last_bake_report),
        "database": hashlib.sha1(store.raw_bytes(scene)).hexdigest() if store.has_database(scene) else None,
        "texts": {t.name: t.as_string() for t in bpy.data.texts},
        "actions": sorted(a.name for a in bpy.data.actions),
        "objects": sorted(o.name for o in bpy.data.objects),
        "entries": len(mm.entries),
    }


def _delete_actions(take):
    for entry in bpy.context.scene.motion_matching.entries:
        if entry.action is not None:
            bpy.data.actions.remove(entry.action)
    assert take.animation_data.action is None


def _empty_list(_take):
    bpy.context.scene.motion_matching.entries.clear()


OPERATORS = {
    "bake": lambda: bpy.ops.motion_matching.bake(),
    "start preview": lambda: bpy.ops.motion_matching.toggle_preview(),
}


@pytest.mark.parametrize("change", [_delete_actions, _empty_list], ids=["actions deleted", "list emptied"])
@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_a_refused_bake_or_preview_changes_nothing(take_on_path, operator, change):
    take, _ctrl = take_on_path(fps=24)
    change(take)
    before = _state()
    assert before["flags"][1] is False   # the database is not marked stale yet
    with pytest.raises(RuntimeError, match="out of date"):
        OPERATORS[operator]()
    assert _state() == before


def test_a_refused_coverage_report_leaves_no_text_block(take_on_path, tmp_path):
    take_on_path(fps=24)
    before = _state()
    with pytest.raises(RuntimeError, match="Cannot write"):
        bpy.ops.motion_matching.database_report(filepath=str(tmp_path))   # a folder, not a file
    assert _state() == before
    assert "Motion Matching Coverage" not in bpy.data.texts
    # Given a file, it writes the file and then the text block.
    path = tmp_path / "coverage.json"
    assert bpy.ops.motion_matching.database_report(filepath=str(path)) == {"FINISHED"}
    assert path.is_file() and "Motion Matching Coverage" in bpy.data.texts
