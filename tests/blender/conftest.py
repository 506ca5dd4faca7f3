"""Blender tests: the add-on is built with Blender's extension tool, installed
into a throw-away user directory and enabled, once per session; every test then
starts from an empty scene. The add-on is disabled at the end so that the bpy
process can exit cleanly."""

import os

import pytest

from tools import addon_session


@pytest.fixture(scope="session")
def addon(tmp_path_factory):
    import bpy  # noqa: F401

    zip_path = addon_session.build_zip(str(tmp_path_factory.mktemp("dist")))
    module = addon_session.install(zip_path)
    yield module
    addon_session.disable()


@pytest.fixture(autouse=True)
def empty_scene(addon):
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    yield bpy.context.scene


@pytest.fixture
def workdir(tmp_path):
    return str(tmp_path)
