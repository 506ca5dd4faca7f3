"""The sample take exported with Blender's FBX and glTF exporters and imported
back with their importers' defaults builds the same database rows as the same
take imported from BVH, mirror images included: features within 1 mm
(positions) or 1% of their column's spread. The FBX file's rest is the take's
first frame, 2 m from the origin: the virtual root's rest goes under the hips'
rest head, so the mirror pairs the sides as it does for the BVH. The FBX is
written with the exporter's key simplification off: at its default it moves
joints by up to 18 mm."""

import os

import bpy
import numpy as np
import pytest

from core.io import bvh_parse
from sample_paths import SAMPLE_TAKE
from tools.bvh_writer import write_bvh, sample_layout
from tools import take_file
import bl_helpers as H

FRAMES = 1200     # 20 s of the sample at 60 fps


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("actions"))
    bvh = bvh_parse.read_bvh(SAMPLE_TAKE)
    names, parents, offsets, channels, ends = sample_layout(bvh)
    cut = write_bvh(os.path.join(out, "take.bvh"), names, parents, offsets, channels, bvh.motion[:FRAMES],
                    bvh.frame_time, end_sites=ends)
    return {"bvh": cut,
            "fbx": take_file.write("fbx", cut, 0.01, os.path.join(out, "take.fbx")),
            "glb": take_file.write("glb", cut, 0.01, os.path.join(out, "take.glb"))}


def _imported(fmt, path):
    before = {o.name for o in bpy.data.objects}
    if fmt == "fbx":
        assert bpy.ops.import_scene.fbx(filepath=path) == {"FINISHED"}
    else:
        assert bpy.ops.import_scene.gltf(filepath=path) == {"FINISHED"}
    arms = [o for o in H.new_objects(before) if o.type == "ARMATURE"]
    assert len(arms) == 1
    return arms[0]


def _database(obj):
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    if not obj.data.motion_matching.root_bone:
        assert bpy.ops.motion_matching.add_virtual_root() == {"FINISHED"}
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}     # the defaults: Mirror Takes Automatic
    assert bpy.context.scene.motion_matching.database_note == ""          # ... and the mirror images were made
    return H.addon_module("bridge.database.store").load(bpy.context.scene)


@pytest.mark.parametrize("fmt", ["fbx", "glb"])
def test_round_trip_builds_the_same_rows(files, fmt):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    reference = _database(H.import_ours(files["bvh"], global_scale=0.01, add_virtual_root=True))
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    obj = _imported(fmt, files[fmt])
    got = _database(obj)
    a, b = reference.matching.raw, got.matching.raw
    assert a.shape == b.shape and len(a) == 2 * FRAMES      # the take and its mirror image
    spec = reference.matching.spec
    spread = a.std(axis=0)
    diff = np.abs(a - b)
    limit = np.maximum(0.01 * spread, 1e-3)
    worst = np.argmax((diff / limit).max(axis=0))
    assert np.all(diff <= limit), "column %d: %.4g (limit %.4g)" % (worst, diff[:, worst].max(), limit[worst])
    assert np.array_equal(reference.matching.valid, got.matching.valid)
