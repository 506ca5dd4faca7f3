"""motion_matching.export_baked: a bake of the showcase written to BVH, FBX and
glTF and read back with Blender's own importers."""

import json
import os
import struct

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H

FS, FE = 1, 120       # the baked range (5 s at 24 fps keeps the tests quick)
MM = 0.001


def _bake():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="showcase", update_scene_range=True) == {"FINISHED"}
    scene.motion_matching.controller = bpy.context.active_object
    scene.motion_matching.bake_armature = obj
    assert bpy.ops.motion_matching.bake(frame_start=FS, frame_end=FE) == {"FINISHED"}
    assert obj.animation_data.action.name == "MM_Bake"
    return obj


def _export(path, fmt, **kw):
    assert bpy.ops.motion_matching.export_baked(filepath=str(path), format=fmt, **kw) == {"FINISHED"}
    written = str(path) + {"BVH": ".bvh", "FBX": ".fbx", "GLTF": ".glb"}[fmt]
    assert os.path.isfile(written)
    return written


def _import(op, path, **kw):
    """Run one of Blender's importers (options it lacks in this version are dropped);
    returns the new armature and the actions it created."""
    names = {p.identifier for p in op.get_rna_type().properties}
    objects, actions = set(bpy.data.objects), set(bpy.data.actions)
    assert op(filepath=path, **{k: v for k, v in kw.items() if k in names}) == {"FINISHED"}
    arms = [o for o in bpy.data.objects if o not in objects and o.type == "ARMATURE"]
    assert len(arms) == 1
    return arms[0], [a for a in bpy.data.actions if a not in actions]


def _frames(action):
    first, last = action.frame_range
    return int(round(first)), int(round(last))


def _errors(baked, arm, first, frames, names):
    """Per frame and bone: distance between the baked and the re-imported bone heads
    (file frame k is scene frame ``first + k``)."""
    got = H.pose_heads(arm, [first + (f - frames[0]) for f in frames], names)
    return np.linalg.norm(got - baked, axis=2)


def _glb_json(path):
    with open(path, "rb") as fh:
        magic, _version, _length = struct.unpack("<4sII", fh.read(12))
        chunk_length, chunk_type = struct.unpack("<I4s", fh.read(8))
        assert magic == b"glTF" and chunk_type == b"JSON"
        return json.loads(fh.read(chunk_length))


def _scene_state(obj=None):
    scene, vl = bpy.context.scene, bpy.context.view_layer
    ad = obj.animation_data if obj is not None else None
    return {
        "counts": H.datablock_counts(), "frame": scene.frame_current, "range": (scene.frame_start, scene.frame_end),
        "active": vl.objects.active.name if vl.objects.active else None,
        "mode": bpy.context.mode, "selected": sorted(o.name for o in bpy.context.selected_objects),
        "action": ad.action.name if ad and ad.action else None, "use_nla": ad.use_nla if ad else None,
        "armatures": len(bpy.data.armatures),
        "action_users": sorted((a.name, a.users, len(getattr(a, "slots", ()))) for a in bpy.data.actions),
        "nla": [(t.name, [(st.name, st.action.name) for st in t.strips]) for t in ad.nla_tracks] if ad else None,
        "pose_position": obj.data.pose_position if obj is not None else None,
        "hidden": obj.hide_get() if obj is not None else None,
    }


@pytest.mark.parametrize("scale, fs, fe", [(1.0, FS, FE), (100.0, 30, 90)])
def test_bvh_round_trip(tmp_path, scale, fs, fe):
    obj = _bake()
    names = [b.name for b in obj.data.bones]
    frames = list(range(fs, fe + 1))
    baked = H.pose_heads(obj, frames, names)
    kw = {"frame_start": fs, "frame_end": fe} if (fs, fe) != (FS, FE) else {}
    path = _export(tmp_path / "baked", "BVH", global_scale=scale, **kw)
    with open(path) as fh:
        text = fh.read()
    assert "Frames: %d\n" % len(frames) in text and "Frame Time: 0.041667" in text
    # Blender's importer with its default axes (the file is Y up) and the inverse scale.
    arm, _ = _import(bpy.ops.import_anim.bvh, path, global_scale=1.0 / scale, frame_start=fs,
                     rotate_mode="QUATERNION", use_fps_scale=False)
    err = _errors(baked, arm, fs, frames, names)
    print("BVH x%g round trip: max %.4f mm" % (scale, err.max() * 1000))
    assert err.max() < MM


def test_gltf_round_trip_and_one_animation(tmp_path):
    obj = _bake()
    # Another armature action in the file and the original take on the NLA must stay out.
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("take", 1, bpy.data.actions["jl_mm_run"])
    names = [b.name for b in obj.data.bones]
    frames = list(range(FS, FE + 1))
    baked = H.pose_heads(obj, frames, names)
    path = _export(tmp_path / "baked", "GLTF")
    gltf = _glb_json(path)
    assert len(gltf["animations"]) == 1 and gltf["animations"][0]["name"] == "MM_Bake"
    times = gltf["accessors"][gltf["animations"][0]["samplers"][0]["input"]]
    assert times["count"] == len(frames) and times["min"][0] == 0.0
    assert times["max"][0] == pytest.approx((FE - FS) / 24.0, abs=1e-5)
    arm, actions = _import(bpy.ops.import_scene.gltf, path, disable_bone_shape=True)
    assert len(actions) == 1
    first, last = _frames(arm.animation_data.action)
    assert last - first + 1 == len(frames)
    assert set(names) <= set(b.name for b in arm.data.bones)
    err = _errors(baked, arm, first, frames, names)
    print("glTF round trip: max %.4f mm" % (err.max() * 1000))
    assert err.max() < MM


def test_fbx_round_trip(tmp_path):
    obj = _bake()
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("take", 1, bpy.data.actions["jl_mm_run"])
    names = [b.name for b in obj.data.bones]
    frames = list(range(FS, FE + 1))
    baked = H.pose_heads(obj, frames, names)
    path = _export(tmp_path / "baked", "FBX")
    arm, actions = _import(bpy.ops.import_scene.fbx, path)
    assert len(actions) == 1   # one take: neither the NLA strip nor the other action
    first, last = _frames(arm.animation_data.action)
    assert last - first + 1 == len(frames)
    assert tuple(arm.matrix_world.to_scale()) == pytest.approx((1.0, 1.0, 1.0))   # metres, no 100x on the root
    err = _errors(baked, arm, first, frames, names)
    print("FBX round trip: root max %.4f mm, all joints max %.4f mm" % (err[:, 0].max() * 1000, err.max() * 1000))
    assert names[0] == "Root" and err[:, 0].max() < 10 * MM
    assert err.max() < 10 * MM


@pytest.mark.parametrize("fmt, tolerance", [("BVH", MM), ("GLTF", MM), ("FBX", 10 * MM)])
def test_placed_armature_round_trips(tmp_path, fmt, tolerance):
    """An armature moved, turned and scaled after the bake lands in the same world place."""
    obj = _bake()
    obj.location = (3.0, -2.0, 0.5)
    obj.rotation_euler = (0.0, 0.0, 1.2)
    obj.scale = (1.5, 1.5, 1.5)
    names = [b.name for b in obj.data.bones]
    frames = list(range(FS, FE + 1, 7))
    baked = H.pose_heads(obj, frames, names)
    path = _export(tmp_path / "placed", fmt)
    if fmt == "BVH":
        arm, _ = _import(bpy.ops.import_anim.bvh, path, frame_start=FS, rotate_mode="QUATERNION")
    elif fmt == "GLTF":
        arm, _ = _import(bpy.ops.import_scene.gltf, path, disable_bone_shape=True)
    else:
        arm, _ = _import(bpy.ops.import_scene.fbx, path)
    first, _last = _frames(arm.animation_data.action)
    err = _errors(baked, arm, first, frames, names)
    print("%s placed armature: max %.4f mm" % (fmt, err.max() * 1000))
    assert err.max() < tolerance


def test_file_names_follow_the_format():
    bridge = H.addon_module("bridge.files.export_baked")
    assert bridge.with_extension("/a/walk", "FBX") == "/a/walk.fbx"
    assert bridge.with_extension("/a/walk.fbx", "GLTF") == "/a/walk.glb"
    assert bridge.with_extension("/a/walk.GLB", "GLTF") == "/a/walk.GLB"
    assert bridge.with_extension("/a/walk.gltf", "BVH") == "/a/walk.bvh"
    assert bridge.with_extension("/a/walk.v2", "BVH") == "/a/walk.v2.bvh"


def test_export_leaves_the_scene_as_it_was(tmp_path):
    obj = _bake()
    scene, vl = bpy.context.scene, bpy.context.view_layer
    other = bpy.data.actions["jl_mm_run"]
    obj.animation_data.nla_tracks.new().strips.new("take", 1, other)
    vl.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    scene.frame_set(37)
    before = _scene_state(obj)
    for fmt in ("BVH", "FBX", "GLTF"):
        _export(tmp_path / ("all_" + fmt.lower()), fmt, frame_start=10, frame_end=40)
        assert _scene_state(obj) == before, fmt
    # Edit mode, and a hidden armature chosen by name while another object is active.
    bpy.ops.object.mode_set(mode="EDIT")
    before = _scene_state(obj)
    _export(tmp_path / "edit", "BVH")
    assert _scene_state(obj) == before
    bpy.ops.object.mode_set(mode="OBJECT")
    ctrl = scene.motion_matching.controller
    vl.objects.active = ctrl
    obj.hide_set(True)
    before = _scene_state(obj)
    for fmt in ("BVH", "FBX", "GLTF"):
        _export(tmp_path / ("hidden_" + fmt.lower()), fmt, armature=obj.name)
        assert _scene_state(obj) == before and obj.hide_get(), fmt
    # Another action can be exported without becoming the armature's action.
    bridge = H.addon_module("bridge.files.export_baked")
    path, fs, fe = bridge.export(bpy.context, obj, str(tmp_path / "take"), "GLTF", action=other,
                                 frame_start=1, frame_end=30)
    assert (fs, fe) == (1, 30) and _glb_json(path)["animations"][0]["name"] == "jl_mm_run"
    assert _scene_state(obj) == before


def test_bad_input(tmp_path):
    obj = _bake()
    scene = bpy.context.scene
    bridge = H.addon_module("bridge.files.export_baked")
    errors = H.addon_module("core.errors")
    bare = bpy.data.objects.new("Bare", bpy.data.armatures.new("Bare"))
    scene.collection.objects.link(bare)
    bpy.context.view_layer.objects.active = obj
    before = _scene_state(obj)
    out = str(tmp_path / "out")
    cases = [
        ({"armature": "Nope"}, "no armature named Nope"),
        ({"armature": "Controller"}, "no armature named Controller"),
        ({"armature": "Bare"}, "Bare has no action"),
        ({"filepath": str(tmp_path / "missing" / "out")}, "does not exist"),
        ({"filepath": str(tmp_path) + os.sep}, "Choose a file name"),
        ({"frame_start": 1, "frame_end": 500}, "outside the action MM_Bake"),
        ({"frame_start": 50, "frame_end": 10}, "ends before it starts"),
    ]
    for kw, message in cases:
        kw.setdefault("filepath", out)
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.motion_matching.export_baked(format="GLTF", **kw)
        assert _scene_state(obj) == before, kw
    obj.scale = (1.0, 2.0, 1.0)
    before = _scene_state(obj)
    with pytest.raises(RuntimeError, match="non-uniform or negative scale"):
        bpy.ops.motion_matching.export_baked(format="BVH", filepath=out)
    assert _scene_state(obj) == before
    with pytest.raises(errors.MotionMatchingError, match="Unknown export format"):
        bridge.export(bpy.context, obj, out, "OBJ")
    assert not any(os.path.exists(out + ext) for ext in (".bvh", ".fbx", ".glb"))
    assert _scene_state(obj) == before
    # Nothing to export: the operator is greyed out with a reason.
    bpy.context.view_layer.objects.active = bare
    scene.motion_matching.bake_armature = None
    assert not bpy.ops.motion_matching.export_baked.poll()
