"""Fuzz: generated malformed BVH files thrown at import_bvh and load_tpose.

Each call either finishes with finite keys (or a finite stored T-pose) or is
cancelled with a sentence; never a traceback, and a cancelled call leaves the
datablocks, the scene's settings and the armature's T-pose as they were.
"""

import bpy
import numpy as np
import pytest

from bvh_fuzz import TEXT, malformed
import bl_helpers as H

COUNT = 240


def _scene_state():
    s = bpy.context.scene
    return (s.render.fps, s.render.fps_base, s.frame_start, s.frame_end)


def _sentence(message):
    assert "Traceback" not in message and "Error:" in message, message
    text = message.split("Error:", 1)[1].strip()
    assert text and text[-1] in ".)" and len(text) < 600, message
    return text


def _finite_keys(obj):
    compat = H.addon_module("bridge.blender.compat")
    curves = compat.fcurves(obj.animation_data.action, obj)
    assert curves
    for fc in curves:
        n = len(fc.keyframe_points)
        co = np.empty(2 * n, dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        assert n and np.isfinite(co).all(), fc.data_path


def _remove(obj):
    action = obj.animation_data.action if obj.animation_data else None
    arm = obj.data
    bpy.data.objects.remove(obj)
    if action is not None:
        bpy.data.actions.remove(action)
    bpy.data.armatures.remove(arm)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    paths = []
    for i, raw in enumerate(malformed(20240611, COUNT)):
        path = folder / ("case%03d.bvh" % i)
        path.write_bytes(raw)
        paths.append(str(path))
    return paths


def test_import_bvh_fuzz(files):
    rng = np.random.default_rng(7)
    outcomes = {"FINISHED": 0, "CANCELLED": 0}
    for path in files:
        options = dict(global_scale=float(rng.choice([1.0, 0.01])),
                       add_virtual_root=bool(rng.integers(4) == 0),
                       update_scene_fps=bool(rng.integers(3) == 0),
                       update_scene_duration=bool(rng.integers(3) == 0),
                       use_fps_scale=bool(rng.integers(3) == 0))
        before = H.datablock_counts()
        names = set(o.name for o in bpy.data.objects)
        scene = _scene_state()
        try:
            result = bpy.ops.motion_matching.import_bvh(filepath=path, **options)
        except RuntimeError as ex:
            _sentence(str(ex))
            assert H.datablock_counts() == before, (path, options)
            assert _scene_state() == scene, (path, options)
            outcomes["CANCELLED"] += 1
            continue
        assert result == {"FINISHED"}
        new = [o for o in bpy.data.objects if o.name not in names]
        assert len(new) == 1 and new[0].type == "ARMATURE", path
        _finite_keys(new[0])
        _remove(new[0])
        outcomes["FINISHED"] += 1
    assert outcomes["CANCELLED"] > COUNT // 2 and outcomes["FINISHED"] > 5, outcomes


def _tpose(obj):
    return [(t.name, tuple(t.rotation), tuple(t.head)) for t in obj.data.motion_matching.tpose]


def test_load_tpose_fuzz(files, tmp_path):
    # Besides the shared files, numbers changed in the joints the armature has.
    for i, raw in enumerate(malformed(99, 120, texts=(TEXT,), kinds=(1, 6, 9, 9))):
        path = tmp_path / ("numbers%03d.bvh" % i)
        path.write_bytes(raw)
        files = files + [str(path)]
    base = tmp_path / "base.bvh"
    base.write_text(TEXT)
    obj = H.import_ours(str(base))
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.motion_matching.load_tpose(filepath=str(base)) == {"FINISHED"}
    rng = np.random.default_rng(8)
    outcomes = {"FINISHED": 0, "CANCELLED": 0}
    for path in files:
        before = H.datablock_counts()
        stored, source = _tpose(obj), obj.data.motion_matching.tpose_source
        try:
            result = bpy.ops.motion_matching.load_tpose(filepath=path, global_scale=float(rng.choice([1.0, 0.01])),
                                                        frame=int(rng.integers(0, 3)))
        except RuntimeError as ex:
            _sentence(str(ex))
            assert _tpose(obj) == stored and obj.data.motion_matching.tpose_source == source, path
            outcomes["CANCELLED"] += 1
        else:
            assert result == {"FINISHED"}
            values = np.array([r + h for _n, r, h in _tpose(obj)])
            assert len(values) and np.isfinite(values).all(), path
            # Heads within the bounds (each offset and position within 1e6 m; the
            # joints are two deep): not values clamped to float32's largest.
            assert np.abs(values[:, 4:]).max() < 1e7, (path, values)
            outcomes["FINISHED"] += 1
        assert H.datablock_counts() == before, path
    assert outcomes["CANCELLED"] > COUNT // 2 and outcomes["FINISHED"] > 5, outcomes
