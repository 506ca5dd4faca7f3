"""Files a user feeds in, through the operators: a sentence and CANCELLED, with
the scene left as it was, or a correct result (byte-order marks, bounds,
Blender's frame range, nesting, encodings, large takes)."""

import json
import tracemalloc

import bpy
import numpy as np
import pytest

from bvh_fuzz import TEXT
from tools.bvh_writer import synthetic_bvh
from sample_paths import SAMPLE_TAKE
import bl_helpers as H


def _scene_state():
    s = bpy.context.scene
    return (s.render.fps, s.render.fps_base, s.frame_start, s.frame_end, len(s.motion_matching.dance_card))


def _refused(op, **kw):
    before, scene = H.datablock_counts(), _scene_state()
    with pytest.raises(RuntimeError) as info:
        op(**kw)
    message = str(info.value)
    assert "Traceback" not in message and "Error:" in message, message
    assert H.datablock_counts() == before, "something was left behind"
    assert _scene_state() == scene, "the scene's settings changed"
    return message


def _variant(old, new):
    assert old in TEXT
    return TEXT.replace(old, new, 1)


def _write(tmp_path, text, name="take.bvh"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def _keys(obj):
    compat = H.addon_module("bridge.blender.compat")
    out = []
    for fc in compat.fcurves(obj.animation_data.action, obj):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        out.append(co)
    return np.concatenate(out)


# ---------------------------------------------------------------------------
# Finding 6


def test_byte_order_mark_imports(tmp_path):
    obj = H.import_ours(_write(tmp_path, b"\xef\xbb\xbf" + TEXT.encode()))
    assert [b.name for b in obj.data.bones] == ["Hips", "Leg"]


def test_joint_named_motion_imports(tmp_path):
    obj = H.import_ours(_write(tmp_path, _variant("JOINT Leg", "JOINT Motion")))
    assert [b.name for b in obj.data.bones] == ["Hips", "Motion"]
    assert len(H.key_times(obj)) == 3


# ---------------------------------------------------------------------------
# Finding 4


@pytest.mark.parametrize("old, new, options, words", [
    ("0 91 0 1 0 0 11 0 0", "1e39 91 0 1 0 0 11 0 0", {}, ["Line 20", "Xposition"]),
    ("0 91 0 1 0 0 11 0 0", "0 1e300 0 1 0 0 11 0 0", {"global_scale": 0.01}, ["Line 20", "scaled by 0.01"]),
    ("OFFSET 0 -40 0\n    CHANNELS", "OFFSET 0 1e30 0\n    CHANNELS", {}, ["Line 8", "OFFSET"]),
    ("Frame Time: 0.0333333", "Frame Time: 1e-300", {"update_scene_fps": True, "add_virtual_root": True},
     ["Line 18", "Frame Time"]),
    ("Frame Time: 0.0333333", "Frame Time: 1e-300", {"use_fps_scale": True}, ["Line 18", "Frame Time"]),
])
def test_out_of_bounds_numbers_are_refused(tmp_path, old, new, options, words):
    message = _refused(bpy.ops.motion_matching.import_bvh, filepath=_write(tmp_path, _variant(old, new)), **options)
    for w in words:
        assert w in message, (w, message)


def test_keys_beyond_blenders_frames_are_refused(tmp_path):
    bpy.context.scene.render.fps = 60
    slow = _variant("Frame Time: 0.0333333", "Frame Time: 10")  # 0.1 fps: 600 scene frames per take frame
    message = _refused(bpy.ops.motion_matching.import_bvh, filepath=_write(tmp_path, slow), use_fps_scale=True,
                       frame_start=1048000)
    assert "1048574" in message


def test_accepted_extremes_give_finite_keys(tmp_path):
    text = _variant("0 91 0 1 0 0 11 0 0", "1e8 91 0 1 0 0 999999 0 0")
    obj = H.import_ours(_write(tmp_path, text), global_scale=0.01)
    assert np.isfinite(_keys(obj)).all()


def test_scenario_far_away_or_too_long_is_refused(tmp_path):
    op = bpy.ops.motion_matching.add_scenario_controller
    for points, words in (
            ([{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 1e308, "y": 0}], ["Point 1", "x is 1e+308"]),
            ([{"t": 0, "x": 0, "y": 0}, {"t": 1e9, "x": 0, "y": 0}], ["Point 1", "3 hours"])):
        path = tmp_path / "far.json"
        path.write_text(json.dumps({"points": points}))
        message = _refused(op, scenario="FILE", filepath=str(path))
        for w in words + ["far.json"]:
            assert w in message, (w, message)


def test_scenario_beyond_blenders_frames_is_refused(tmp_path):
    bpy.context.scene.render.fps = 120
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 10000, "x": 100, "y": 0}]}))
    message = _refused(bpy.ops.motion_matching.add_scenario_controller, scenario="FILE", filepath=str(path))
    assert "1048574" in message


# ---------------------------------------------------------------------------
# Finding 5

DEEP = "[" * 100000 + "]" * 100000


@pytest.mark.parametrize("name, text", [
    ("card.json", '{"title": "t", "moves": ' + DEEP + "}"),
    ("card.toml", "a = " + DEEP + "\n"),
])
def test_deep_dance_card_is_refused(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert "deep" in _refused(bpy.ops.motion_matching.import_dance_card, filepath=str(path))


def _armature(tmp_path):
    obj = H.import_ours(_write(tmp_path, TEXT, "rig.bvh"))
    bpy.context.view_layer.objects.active = obj
    return obj


def _stored_map(obj):
    return {b.name: b.bone for b in obj.data.motion_matching.bone_map} if hasattr(
        obj.data.motion_matching, "bone_map") else None


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_bone_map_in_unicode_encodings_loads(tmp_path, encoding):
    obj = _armature(tmp_path)
    path = tmp_path / "map.json"
    path.write_bytes(json.dumps({"Hips": "Hips", "LeftUpperLeg": "Leg"}).encode(encoding))
    assert bpy.ops.motion_matching.load_bone_map(filepath=str(path)) == {"FINISHED"}
    assert obj.data.motion_matching.bone_map


@pytest.mark.parametrize("raw, words", [
    (json.dumps({"Hips": "Hüfte"}, ensure_ascii=False).encode("latin-1"), ["not UTF-8", "save it as UTF-8"]),
    (('{"joints": ' + DEEP + "}").encode(), ["deep"]),
])
def test_bad_bone_map_is_refused(tmp_path, raw, words):
    obj = _armature(tmp_path)
    path = tmp_path / "map.json"
    path.write_bytes(raw)
    before = [tuple(item.items()) for item in obj.data.motion_matching.bone_map]
    message = _refused(bpy.ops.motion_matching.load_bone_map, filepath=str(path))
    for w in words:
        assert w in message, (w, message)
    assert [tuple(item.items()) for item in obj.data.motion_matching.bone_map] == before


def test_deep_scenario_is_refused(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"points": ' + DEEP + "}")
    message = _refused(bpy.ops.motion_matching.add_scenario_controller, scenario="FILE", filepath=str(path))
    assert "deep" in message


# ---------------------------------------------------------------------------
# Finding 7: many joints, a deep chain, memory


def test_two_thousand_joints_import_correctly(tmp_path):
    bvh_parse = H.addon_module("core.io.bvh_parse")
    bvh_convert = H.addon_module("core.io.bvh_convert")
    path = _write(tmp_path, synthetic_bvh(2000, 4, seed=5))
    obj = H.import_ours(path, global_scale=0.01)
    assert len(obj.data.bones) == 2000
    compat = H.addon_module("bridge.blender.compat")
    assert len(compat.fcurves(obj.animation_data.action, obj)) == 6 + 4 * 1999 + 1
    motion = bvh_convert.to_blender(bvh_parse.read_bvh(path), 0.01)
    want = motion.world_positions()[[0, 3]]
    got = H.pose_heads(obj, [1.0, 4.0], motion.names)
    assert np.abs(got - want).max() < 2e-4   # 0.2 mm; joints reach 0.5 m from the root


def test_deep_chain_with_virtual_root(tmp_path):
    depth = 1500  # deeper than Python's recursion limit
    lines = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 90 0",
             "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
    for j in range(1, depth):
        lines += ["JOINT J%d" % j, "{", "OFFSET 0.5 -0.05 0.1", "CHANNELS 3 Zrotation Xrotation Yrotation"]
    lines += ["End Site", "{", "OFFSET 0 -1 0", "}"] + ["}"] * depth
    values = " ".join(["0"] * (6 + 3 * (depth - 1)))
    lines += ["MOTION", "Frames: 3", "Frame Time: 0.0333333"] + [values] * 3
    path = _write(tmp_path, "\n".join(lines) + "\n")
    obj = H.import_ours(path, global_scale=0.01, add_virtual_root=True, hips_bone="Hips")
    assert len(obj.data.bones) == depth + 1
    assert obj.data.motion_matching.root_bone == "Root"


def _traced_peak(fn):
    """Peak bytes of Python and numpy allocations (tracemalloc) while ``fn`` runs."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_import_and_build_memory_stay_near_the_keys():
    """Counted, not timed: the arrays the import and the build allocate, per key
    written (float32 channels; see bench/bench_scale.py for resident memory)."""
    ops = bpy.ops.motion_matching
    peak = _traced_peak(lambda: ops.import_bvh(filepath=SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True))
    obj = bpy.context.active_object
    keys = sum(len(fc.keyframe_points) for fc in H.addon_module("bridge.blender.compat").fcurves(
        obj.animation_data.action, obj))
    assert peak / keys < 40, peak / keys   # was 93 bytes per key
    ops.database_add_action()
    peak = _traced_peak(lambda: ops.build_database(mirror_takes="OFF"))
    assert peak / keys < 70, peak / keys   # was 109 bytes per key
    # Mirror Takes doubles the rows (and the stored arrays): twice the take's bound.
    peak = _traced_peak(lambda: ops.build_database(mirror_takes="ON"))
    assert peak / keys < 140, peak / keys


def test_progress_is_told_for_each_stage(tmp_path):
    bvh_parse = H.addon_module("core.io.bvh_parse")
    bvh_convert = H.addon_module("core.io.bvh_convert")
    build = H.addon_module("bridge.files.import_bvh")
    path = _write(tmp_path, synthetic_bvh(300, 5, seed=2))
    parsed = []
    data = bvh_parse.read_bvh(path, progress=parsed.append)
    assert parsed and parsed[-1] == 1.0
    told = []
    build.build(bpy.context, "take", bvh_convert.to_blender(data, 0.01), np.arange(5) + 1.0,
                progress=lambda stage, f: told.append((stage, f)))
    stages = [s for s, _f in told]
    assert stages.index("keys") > stages.index("create")
    for stage in ("create", "keys"):
        fractions = [f for s, f in told if s == stage]
        assert fractions == sorted(fractions) and fractions[-1] == 1.0, (stage, fractions)
