"""Live preview: the previewed pose is the baked pose, in any frame order."""

import json

import bpy
import numpy as np

import bl_helpers as H


def _pose_matrices(obj, names):
    bpy.context.view_layer.update()
    return np.array([np.array(obj.matrix_world @ obj.pose.bones[n].matrix) for n in names])


def test_preview_equals_bake_in_random_order(tmp_path, take_on_path):
    obj, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 200
    take = obj.animation_data.action
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert scene.motion_matching.preview_active and obj.animation_data.action is None
    names = [b.name for b in obj.data.bones]
    rng = np.random.default_rng(7)
    frames = rng.choice(np.arange(scene.frame_start, scene.frame_end + 1), size=20, replace=False)
    previewed = {}
    for f in frames:
        scene.frame_set(int(f))
        previewed[int(f)] = _pose_matrices(obj, names)
    # The overlay's data is there and finite (drawing itself is skipped in background).
    preview = H.addon_module("bridge.preview.preview")
    wanted, matched, toes, locked, contacts = preview.overlay_lines(scene)
    assert len(wanted) > 10 and len(matched) > 2 and np.isfinite(toes).all()
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert obj.animation_data.action == take and not scene.motion_matching.preview_active
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    for f in sorted(previewed, reverse=True):
        scene.frame_set(f)
        baked = _pose_matrices(obj, names)
        assert np.abs(baked - previewed[f]).max() < 1e-5, f


def test_preview_uses_the_scene_bake_settings(tmp_path, take_on_path):
    """Foot lock off and a longer search interval on the scene: the preview shows
    what the bake keys with them, which is not what the defaults key."""
    obj, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 160
    names = [b.name for b in obj.data.bones]
    frames = (1, 37, 80, 121, 160)
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    defaults = {}
    for f in frames:
        scene.frame_set(f)
        defaults[f] = _pose_matrices(obj, names)
    knobs = scene.motion_matching.bake_settings
    knobs.use_foot_lock = False
    knobs.search_interval = 0.3
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    previewed = {}
    for f in reversed(frames):
        scene.frame_set(f)
        previewed[f] = _pose_matrices(obj, names)
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    path = tmp_path / "r.json"
    assert bpy.ops.motion_matching.bake(report_path=str(path)) == {"FINISHED"}
    report = json.loads(path.read_text())
    assert report["foot_locks"] == 0
    for f in frames:
        scene.frame_set(f)
        baked = _pose_matrices(obj, names)
        assert np.abs(baked - previewed[f]).max() < 1e-5, f
    assert max(np.abs(defaults[f] - previewed[f]).max() for f in frames) > 1e-3
