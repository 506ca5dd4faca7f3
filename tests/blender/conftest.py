"""Blender tests: the add-on is built with Blender's extension tool, installed
into a throw-away user directory and enabled, once per session; every test then
starts from an empty scene. The add-on is disabled at the end so that the bpy
process can exit cleanly. Processes started by the tests get the zip's path in
the environment (``addon_session.ZIP_ENV``) and install it instead of building."""

import os

import pytest

from tools import addon_session

from bl_helpers import OWN_PROCESS, needs_own_process


def pytest_collection_modifyitems(config, items):
    if not needs_own_process():
        return
    moved = [i for i in items if os.path.basename(str(i.fspath)) in OWN_PROCESS]
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = [i for i in items if i not in moved]


@pytest.fixture(scope="session")
def addon(tmp_path_factory):
    import bpy  # noqa: F401

    zip_path = addon_session.build_zip(str(tmp_path_factory.mktemp("dist")))
    module = addon_session.install(zip_path)
    # The end-to-end tests' own bpy processes (the walkthrough script, demo, command
    # line) install this same zip rather than each building one.
    os.environ[addon_session.ZIP_ENV] = zip_path
    yield module
    os.environ.pop(addon_session.ZIP_ENV, None)
    addon_session.disable()


@pytest.fixture(autouse=True)
def empty_scene(addon):
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    yield bpy.context.scene


@pytest.fixture
def workdir(tmp_path):
    return str(tmp_path)


@pytest.fixture
def take_on_path():
    """``take_on_path(fps=24, scenario="showcase")`` makes the scene ready to
    bake: the sample take imported with its virtual root, its database built, a
    scenario controller over the scene's range, both chosen for the bake.
    Returns (armature, controller)."""
    import bpy

    import bl_helpers as H
    from sample_paths import SAMPLE_TAKE

    def setup(fps=24, scenario="showcase"):
        scene = bpy.context.scene
        scene.render.fps, scene.render.fps_base = fps, 1.0
        obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
        assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
        assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
        assert bpy.ops.motion_matching.add_scenario_controller(scenario=scenario,
                                                               update_scene_range=True) == {"FINISHED"}
        ctrl = bpy.context.active_object
        scene.motion_matching.controller = ctrl
        scene.motion_matching.bake_armature = obj
        return obj, ctrl

    return setup


@pytest.fixture
def bake(tmp_path):
    """``bake(name="report.json", **options)`` runs motion_matching.bake with a
    report file in the test's folder and returns the report."""
    import json

    import bpy

    def run(name="report.json", **options):
        path = str(tmp_path / name)
        assert bpy.ops.motion_matching.bake(report_path=path, **options) == {"FINISHED"}
        with open(path) as fh:
            return json.load(fh)

    return run


@pytest.fixture
def rigify():
    """Blender's Rigify add-on enabled for the test (disabled again if it was off)."""
    import addon_utils
    import bpy

    was = "rigify" in bpy.context.preferences.addons
    addon_utils.enable("rigify", default_set=True)
    yield
    if not was:
        addon_utils.disable("rigify", default_set=True)
