"""Blender tests: the add-on is built with Blender's extension tool, installed
into a throw-away user directory and enabled, once per session; every test then
starts from an empty scene. The add-on is disabled at the end so that the bpy
process can exit cleanly. Processes started by the tests get the zip's path in
the environment (``addon_session.ZIP_ENV``) and install it instead of building."""

import os

import pytest

from tools import addon_session


@pytest.fixture(scope="session")
def addon(tmp_path_factory):
    import bpy  # noqa: F401

    zip_path = addon_session.build_zip(str(tmp_path_factory.mktemp("dist")))
    module = addon_session.install(zip_path)
    # The end-to-end tests' own bpy processes (README walkthrough, demo, command
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
