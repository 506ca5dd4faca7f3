"""A database brought in with Import Database is what the bake uses, in any
file: one holding the take's armature but no database list, or only a rigged
character (tools/rigs.py) and a controller. The keys are those of the same bake
in the file the database was built in."""

import bpy
import numpy as np

import bl_helpers as H
from sample_paths import SAMPLE_TAKE, SAMPLE_TPOSE
from tools import key_digest, rigs

FPS = 24
FRAMES = dict(frame_start=1, frame_end=48)


def _controller():
    scene = bpy.context.scene
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="showcase", frame_start=1,
                                                           update_scene_range=True) == {"FINISHED"}
    scene.motion_matching.controller = bpy.context.active_object
    return bpy.context.active_object


def _new_file():
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    return scene


def _baked_keys(armature):
    assert bpy.ops.motion_matching.bake(armature=armature.name, **FRAMES) == {"FINISHED"}
    return key_digest.action_keys(armature.animation_data.action)


def _assert_same_keys(got, want):
    assert sorted(got) == sorted(want)
    for name in want:
        assert np.array_equal(got[name], want[name]), name


def _built_here(tmp_path, tpose=False):
    """The sample take with its database built here (and exported); returns (take, the .npz)."""
    _new_file()
    take = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    if tpose:
        assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    bpy.context.view_layer.objects.active = take
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    path = str(tmp_path / "db.npz")
    assert bpy.ops.motion_matching.export_database(filepath=path) == {"FINISHED"}
    return take, path


def test_an_imported_database_bakes_the_take_in_a_file_without_the_list(tmp_path):
    take, path = _built_here(tmp_path)
    _controller()
    want = _baked_keys(take)
    # Another file: the same take and controller, no database list.
    scene = _new_file()
    take = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    _controller()
    assert bpy.ops.motion_matching.import_database(filepath=path) == {"FINISHED"}
    settings = scene.motion_matching
    assert len(settings.entries) == 0 and not settings.database_stale
    _assert_same_keys(_baked_keys(take), want)
    assert "rebuilt" not in bpy.data.texts["Motion Matching Bake"].as_string()
    # Settings of the list it was not built from do not make it stale.
    settings.responsiveness = 2.0
    handlers = H.addon_module("bridge.database.handlers")
    assert not handlers.check_stale(scene) and not settings.database_stale
    # Building from a list here replaces it, and staleness concerns that one again.
    bpy.context.view_layer.objects.active = take
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    settings.responsiveness = 1.0
    assert settings.database_stale


def test_an_imported_database_bakes_onto_a_character_in_a_file_holding_only_it(tmp_path):
    take, path = _built_here(tmp_path, tpose=True)
    rig, _mesh = rigs.build("Character")
    _controller()
    want = _baked_keys(rig)
    assert take.name in bpy.data.objects
    # Another file: only the character and a controller.
    scene = _new_file()
    rig, _mesh = rigs.build("Character")
    _controller()
    assert not any(o.type == "ARMATURE" and o is not rig for o in bpy.data.objects)
    assert bpy.ops.motion_matching.import_database(filepath=path) == {"FINISHED"}
    scene.motion_matching.bake_armature = rig
    _assert_same_keys(_baked_keys(rig), want)
    report = bpy.data.texts["Motion Matching Bake"].as_string()
    assert rig.name in report
