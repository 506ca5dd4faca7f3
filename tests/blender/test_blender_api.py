"""The parts of Blender's Python API the add-on and its tools lean on, checked
on every Blender version CI runs (4.2 LTS to 5.3): actions with slots and
channelbags (through the compat layer), extension and resource paths, the
viewport overlay's GPU drawing, and the demo's video output settings. Each test
fails if Blender changes that API under us."""

import os
import warnings

import numpy as np
import pytest

import bl_helpers as H
from tools import addon_session


def _probe(name="Probe"):
    import bpy

    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    return obj


CHANNELS = [("location", 0, "Object Transforms"), ("location", 1, "Object Transforms"),
            ("rotation_euler", 2, None)]


def _keys():
    frames = np.array([1.0, 4.0, 9.0, 10.0])
    values = np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 0.25], [3.5, 0.0, -1.0], [3.0, 0.5, 0.0]])
    return frames, values


def _assert_round_trip(compat, action, obj, frames, values):
    got = compat.read_channels(action, obj)
    assert sorted(got) == sorted((path, index) for path, index, _group in CHANNELS)
    for k, (path, index, _group) in enumerate(CHANNELS):
        co = got[(path, index)]["co"]
        np.testing.assert_array_equal(co[:, 0], frames.astype(np.float32))
        np.testing.assert_array_equal(co[:, 1], values[:, k].astype(np.float32))


def test_compat_round_trips_curves_and_blender_plays_them():
    import bpy

    compat = H.addon_module("bridge.blender.compat")
    obj = _probe()
    action = compat.new_action(obj, "ProbeAction")
    frames, values = _keys()
    compat.write_curves(action, obj, CHANNELS, frames, values)
    _assert_round_trip(compat, action, obj, frames, values)
    # The curves are where Blender looks for them: a key frame plays the keyed values.
    bpy.context.scene.frame_set(9)
    np.testing.assert_allclose([obj.location[0], obj.location[1], obj.rotation_euler[2]], values[2], atol=1e-6)
    if compat.is_layered(action):
        # Layered actions (4.4+): one layer, one keyframe strip, the channelbag of the object's slot.
        slot = obj.animation_data.action_slot
        assert slot is not None and slot.target_id_type == "OBJECT"
        assert len(action.layers) == 1 and len(action.layers[0].strips) == 1
        bag = action.layers[0].strips[0].channelbag(slot)
        assert bag is not None and len(bag.fcurves) == len(CHANNELS)
        assert [g.name for g in bag.groups] == ["Object Transforms"]
        assert bag.fcurves.find("rotation_euler", index=2).group is None
        from bpy_extras import anim_utils

        assert anim_utils.action_get_channelbag_for_slot(action, slot) == bag
    else:
        # Blender 4.2: curves and groups belong to the action itself.
        assert len(action.fcurves) == len(CHANNELS)
        assert [g.name for g in action.groups] == ["Object Transforms"]


def test_compat_uses_the_slot_the_object_plays_not_the_first():
    import bpy

    compat = H.addon_module("bridge.blender.compat")
    action = bpy.data.actions.new("Shared")
    if not compat.is_layered(action):
        pytest.skip("Blender 4.2 actions have no slots")
    other = action.slots.new(id_type="OBJECT", name="Other")
    mine = action.slots.new(id_type="OBJECT", name="Probe")
    obj = _probe()
    obj.animation_data_create()
    obj.animation_data.action = action
    obj.animation_data.action_slot = mine
    frames, values = _keys()
    compat.write_curves(action, obj, CHANNELS, frames, values)
    _assert_round_trip(compat, action, obj, frames, values)
    strip = action.layers[0].strips[0]
    assert len(strip.channelbag(mine).fcurves) == len(CHANNELS)
    other_bag = strip.channelbag(other)
    assert other_bag is None or len(other_bag.fcurves) == 0
    # Reading with no object falls back to the first slot, which has no curves.
    assert compat.fcurves(action, None) == []
    bpy.context.scene.frame_set(4)
    np.testing.assert_allclose(obj.location[:2], values[1, :2], atol=1e-6)


def test_saved_assignment_restores_action_and_slot():
    compat = H.addon_module("bridge.blender.compat")
    obj = _probe()
    first = compat.new_action(obj, "First")
    saved = compat.saved_assignment(obj)
    second = compat.new_action(obj, "Second")
    assert obj.animation_data.action == second
    compat.restore_assignment(obj, saved)
    assert obj.animation_data.action == first
    if compat.is_layered(first):
        assert obj.animation_data.action_slot == first.slots[0]


def test_extension_lives_in_the_throw_away_user_folder(addon):
    """Blender's extension layout, which the tests, tools and CI rely on."""
    import importlib

    import bpy

    user = os.path.realpath(os.environ["BLENDER_USER_RESOURCES"])
    extensions = os.path.realpath(bpy.utils.user_resource("EXTENSIONS"))
    assert extensions.startswith(user + os.sep)
    package = importlib.import_module(addon)
    assert os.path.realpath(package.__file__).startswith(os.path.join(extensions, "user_default", "motion_matching") + os.sep)
    # Where Blender lets an extension keep files of its own: also inside the throw-away folder.
    own = os.path.realpath(bpy.utils.extension_path_user(addon, create=False))
    assert own.startswith(user + os.sep)
    assert os.path.isfile(addon_session.extension_tool())


def _gpu_or_skip():
    import bpy
    import gpu

    if bpy.app.background:
        if not hasattr(gpu, "init"):
            pytest.skip("GPU drawing needs a window before Blender 5.2 (no gpu.init for background use)")
        try:
            gpu.init()
        except SystemError as exc:
            pytest.skip("gpu.init() found no GPU context here: %s" % exc)
    return gpu


def test_overlay_draws_with_current_shaders():
    """The preview overlay's lines and points (a move's mark too), drawn off screen: right colours
    in the right places, and no deprecated shader use (warnings are errors)."""
    import mathutils

    gpu = _gpu_or_skip()
    preview = H.addon_module("bridge.preview.overlay")
    size = 64
    wanted = np.array([[-0.8, -0.5, 0.0], [0.8, -0.5, 0.0]])      # row 16 of 64
    matched = np.array([[-0.8, 0.5, 0.0], [0.8, 0.5, 0.0]])       # row 48
    toes = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]])          # (16, 32) and (48, 32)
    offscreen = gpu.types.GPUOffScreen(size, size)
    try:
        with offscreen.bind():
            fb = gpu.state.active_framebuffer_get()
            fb.clear(color=(0.0, 0.0, 0.0, 0.0))
            with gpu.matrix.push_pop(), gpu.matrix.push_pop_projection():
                gpu.matrix.load_identity()
                gpu.matrix.load_projection_matrix(mathutils.Matrix.Identity(4))
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    preview.draw_overlay((wanted, matched, toes, [True, False], [True, True]),
                                         [(np.zeros(3), "121: run")])          # a move's mark at (32, 32)
            pixels = np.array(fb.read_color(0, 0, size, size, 4, 0, "UBYTE").to_list(), dtype=np.float64)
    finally:
        offscreen.free()
    pixels = pixels.reshape(size, size, 4) / 255.0

    def painted(color, rows, cols):
        rgb = pixels[rows, cols, :3]
        return np.all(np.abs(rgb - np.asarray(color[:3])) < 0.1, axis=-1)

    assert painted(preview.WANTED_COLOR, slice(14, 19), slice(10, 54)).any(axis=0).all()
    assert painted(preview.MATCHED_COLOR, slice(46, 51), slice(10, 54)).any(axis=0).all()
    # Both paths are wider than one pixel (the 2-pixel polyline).
    assert painted(preview.WANTED_COLOR, slice(0, size), 32).sum() >= 2
    assert painted(preview.LOCKED_COLOR, slice(28, 37), slice(12, 21)).sum() >= 16   # 8-pixel point
    assert painted(preview.CONTACT_COLOR, slice(28, 37), slice(44, 53)).sum() >= 16
    assert not painted(preview.LOCKED_COLOR, slice(28, 37), slice(44, 53)).any()
    assert painted(preview.MOVE_COLOR, slice(24, 41), slice(24, 41)).sum() >= 64      # 12-pixel point


def test_demo_video_settings_are_accepted(tmp_path):
    import bpy

    from tools import demo

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 6
    scene.render.filepath = str(tmp_path / "demo_")
    assert scene.render.frame_path(frame=1).endswith("demo_0001.png")
    demo.use_mp4(scene)
    settings = scene.render.image_settings
    assert settings.file_format == "FFMPEG"
    if hasattr(settings, "media_type"):   # Blender 5.0+
        assert settings.media_type == "VIDEO"
    assert scene.render.ffmpeg.format == "MPEG4" and scene.render.ffmpeg.codec == "H264"
    # One movie file for the range, named as the demo test expects.
    assert scene.render.is_movie_format
    assert scene.render.frame_path(frame=1).endswith("demo_0001-0006.mp4")
