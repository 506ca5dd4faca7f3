"""Live preview survives saving, renaming the scene and reopening the file:
stopping it (or opening the file) always gives the armature its action back,
and the armature plays it again."""

import bpy
import numpy as np
import pytest

FRAMES = (30, 90, 150)


def _poses(obj):
    out = []
    for f in FRAMES:
        bpy.context.scene.frame_set(f)
        bpy.context.view_layer.update()
        out.append(np.array([np.array(pb.matrix) for pb in obj.pose.bones]))
    return np.array(out)


@pytest.fixture
def start_preview(take_on_path):
    return lambda: _started(take_on_path)


def _started(take_on_path):
    obj, _ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 160
    take = obj.animation_data.action
    fake_user = take.use_fake_user
    playing = _poses(obj)
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert obj.animation_data.action is None and scene.motion_matching.preview_active
    previewed = _poses(obj)
    assert np.abs(previewed - playing).max() > 1e-3   # the preview poses differently from the take
    return obj, take, playing, fake_user


def _plays_take_again(obj, take, playing):
    scene = bpy.context.scene
    assert not scene.motion_matching.preview_active
    assert obj.animation_data.action is not None and obj.animation_data.action.name == take
    assert np.abs(_poses(obj) - playing).max() < 1e-6


def test_save_while_previewing_then_stop(tmp_path, start_preview):
    obj, take, playing, fake_user = start_preview()
    take_name = take.name
    assert bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "previewing.blend")) == {"FINISHED"}
    assert bpy.context.scene.motion_matching.preview_active
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    _plays_take_again(obj, take_name, playing)
    assert bpy.data.actions[take_name].use_fake_user == fake_user   # no fake user left on the action


def test_rename_scene_while_previewing_then_stop(tmp_path, start_preview):
    obj, take, playing, _fake_user = start_preview()
    bpy.context.scene.name = "Renamed"
    assert bpy.context.scene.motion_matching.preview_active
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}   # stops (does not start again)
    _plays_take_again(obj, take.name, playing)
    # Renaming the armature and the action while previewing works too.
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    obj.name, take.name = "Walker", "TakeRenamed"
    bpy.context.scene.name = "Again"
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    _plays_take_again(bpy.data.objects["Walker"], "TakeRenamed", playing)


def test_save_and_reopen_while_previewing(tmp_path, start_preview):
    obj, take, playing, _fake_user = start_preview()
    path = str(tmp_path / "previewing.blend")
    take_name, obj_name = take.name, obj.name
    assert bpy.ops.wm.save_as_mainfile(filepath=path) == {"FINISHED"}
    assert bpy.ops.wm.open_mainfile(filepath=path) == {"FINISHED"}
    # The simulation cannot come back with the file: opening it ends the preview
    # and gives the armature its action.
    _plays_take_again(bpy.data.objects[obj_name], take_name, playing)
    # Stop after reopening (as the panel would still offer it): nothing else changes.
    assert bpy.ops.motion_matching.toggle_preview.poll()
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}   # starts a fresh preview
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    _plays_take_again(bpy.data.objects[obj_name], take_name, playing)
