"""The crowd: Add Crowd spreads controllers and characters from a curve, Bake All
keys every pair as a single bake would, Esc stops after the pairs done, and bad
input is refused with nothing changed."""

import bpy
import numpy as np
import pytest

import bl_helpers as H
from test_bake import Event
from tools import scene_curves
from tools.key_digest import action_fcurves


def _curve(points=((0.0, 0.0, 0.0), (6.0, 0.0, 0.0), (12.0, 3.0, 0.0), (16.0, 8.0, 0.0))):
    return scene_curves.bezier_curve("Path", points)


def _select(active, *others):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    for o in (active,) + others:
        o.select_set(True)
    bpy.context.view_layer.objects.active = active


def _keys(obj):
    """{(data path, index): (K, 2) keyframe (frame, value)} of the object's action."""
    out = {}
    for fc in action_fcurves(obj.animation_data.action):
        co = np.empty(len(fc.keyframe_points) * 2)
        fc.keyframe_points.foreach_get("co", co)
        out[(fc.data_path, fc.array_index)] = co.reshape(-1, 2)
    return out


def _crowd(take_on_path, count, lanes):
    obj, _ctrl = take_on_path(fps=24)
    curve = _curve()
    _select(curve, obj)
    assert bpy.ops.motion_matching.add_crowd(count=count, lanes=lanes) == {"FINISHED"}
    return obj, curve


def test_add_crowd_spreads_controllers_and_characters(take_on_path):
    obj, curve = _crowd(take_on_path, count=5, lanes=2)
    scene = bpy.context.scene
    pairs = [(p.controller, p.armature) for p in scene.motion_matching.crowd]
    assert [c.name for c, _a in pairs] == ["Crowd.%03d" % k for k in range(5)]
    assert pairs[0][1] == obj                                  # the selected character walks first
    assert all(a.data == obj.data and a != obj for _c, a in pairs[1:])   # then linked copies
    assert len({a.name for _c, a in pairs}) == 5
    for _c, a in pairs[1:]:                                    # each copy has its own skinned body
        meshes = [m for m in a.children if m.type == "MESH"]
        assert all(mod.object == a for m in meshes for mod in m.modifiers if mod.type == "ARMATURE")
    # Controllers, read back from Blender, keep their distance on every frame.
    last = scene.frame_end
    ends = [c.animation_data.action.frame_range[1] for c, _a in pairs]
    assert last >= max(ends)
    positions = []
    for f in range(scene.frame_start, int(last) + 1, 3):
        scene.frame_set(f)
        positions.append([np.array(c.matrix_world.translation) for c, _a in pairs])
    p = np.array(positions)                                     # (T, 5, 3)
    d = np.linalg.norm(p[:, :, None] - p[:, None], axis=-1)
    d[:, range(5), range(5)] = np.inf
    assert d.min() >= 1.0 - 0.02                               # the lane width (1 m) and spacing (1.5 m)


def test_bake_all_keys_each_pair_as_a_single_bake_would(take_on_path):
    obj, curve = _crowd(take_on_path, count=3, lanes=3)
    scene = bpy.context.scene
    pairs = [(p.controller, p.armature) for p in scene.motion_matching.crowd]
    frame = scene.frame_current
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    assert scene.frame_current == frame
    baked = [_keys(a) for _c, a in pairs]
    table = bpy.data.texts["Motion Matching Crowd"].as_string()
    assert "3 of 3 characters baked" in table and all(a.name[:32] in table for _c, a in pairs)
    # No two characters' hips, as Blender poses them, come within 0.5 m.
    frames = np.arange(scene.frame_start, scene.frame_end + 1, 2)
    hips = np.stack([H.pose_heads(a, frames, ["Hips"])[:, 0] for _c, a in pairs], axis=1)
    d = np.linalg.norm(hips[:, :, None, :2] - hips[:, None, :, :2], axis=-1)
    d[:, range(3), range(3)] = np.inf
    assert d.min() > 0.5
    # The same pair baked alone gives the same keys.
    ctrl, arm = pairs[1]
    assert bpy.ops.motion_matching.bake(controller=ctrl.name, armature=arm.name) == {"FINISHED"}
    alone = _keys(arm)
    assert alone.keys() == baked[1].keys()
    assert all(np.array_equal(alone[k], baked[1][k]) for k in alone)


def test_bake_all_checks_the_database_once(take_on_path):
    """A stale database is rebuilt before the first pair, once; the database's
    inputs are read once for the whole crowd, not once per pair."""
    _crowd(take_on_path, count=3, lanes=3)
    scene = bpy.context.scene
    scene.frame_end = scene.frame_start + 40
    scene.motion_matching.responsiveness = 1.2            # the database is now stale
    build = H.addon_module("bridge.database.build")
    calls = {"fingerprint": 0, "build": 0}
    fingerprint, build_and_store = build.fingerprint, build.build_and_store

    def counted(name, fn):
        def call(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return call

    build.fingerprint, build.build_and_store = counted("fingerprint", fingerprint), counted("build", build_and_store)
    try:
        assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    finally:
        build.fingerprint, build.build_and_store = fingerprint, build_and_store
    assert calls["build"] == 1
    # The staleness check before the first pair, and the rebuild's own record of its inputs.
    assert calls["fingerprint"] <= 2
    assert not H.addon_module("bridge.database.handlers").is_stale(scene)


def _bake_all_stand_in():
    op = bpy.types.MOTION_MATCHING_OT_bake_all
    members = {n: getattr(op, n) for n in ("begin_slices", "start_work", "finish_work", "stopped_work", "modal",
                                           "_stop", "_done", "slice_seconds")}

    def report(self, kind, text):
        self.reports.append((set(kind), text))

    stand_in = type("BakeAllStandIn", (), dict(members, report=report))()
    stand_in.reports = []
    return stand_in


def test_esc_stops_bake_all_after_the_characters_done(take_on_path):
    obj, curve = _crowd(take_on_path, count=3, lanes=3)
    scene = bpy.context.scene
    scene.motion_matching.crowd_processes = 1      # in this process (test_crowd_processes: in others)
    pairs = [(p.controller, p.armature) for p in scene.motion_matching.crowd]
    op = _bake_all_stand_in()
    op.slice_seconds = 0.0
    op.begin_slices(bpy.context)
    assert op.modal(bpy.context, Event("MOUSEMOVE")) == {"PASS_THROUGH"}
    for _ in range(100000):
        assert op.modal(bpy.context, Event("TIMER")) == {"RUNNING_MODAL"}
        if op._results:
            break
    assert len(op._results) == 1
    assert op.modal(bpy.context, Event("ESC")) == {"FINISHED"}
    assert op.reports == [({"WARNING"}, "Baked 1 of 3 characters; Esc stopped the rest.")]
    assert pairs[0][1].animation_data.action.name.startswith("MM_Bake")
    assert all(a.animation_data is None or a.animation_data.action is None for _c, a in pairs[1:])
    with pytest.raises(StopIteration):
        next(op._steps)


def test_refusals_change_nothing(take_on_path):
    obj, _ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    curve = _curve()
    # No character chosen: none selected and no Bake Onto armature.
    scene.motion_matching.bake_armature = None
    _select(curve)
    before = H.datablock_counts()
    with pytest.raises(RuntimeError, match="Select the characters to walk the lanes"):
        bpy.ops.motion_matching.add_crowd(count=4)
    assert H.datablock_counts() == before and not len(scene.motion_matching.crowd)
    # More walkers than the curve holds: refused before anything is made.
    _select(curve, obj)
    frame_end = scene.frame_end
    with pytest.raises(RuntimeError, match="too short for 60 walkers"):
        bpy.ops.motion_matching.add_crowd(count=60, lanes=1, spacing=1.5)
    assert H.datablock_counts() == before and not len(scene.motion_matching.crowd)
    assert "Motion Matching Crowd" not in bpy.data.collections and scene.frame_end == frame_end
    # Bake All with a row that lacks its character.
    assert bpy.ops.motion_matching.add_crowd(count=2, lanes=2) == {"FINISHED"}
    scene.motion_matching.crowd[1].armature = None
    actions = set(bpy.data.actions.keys())
    with pytest.raises(RuntimeError, match="Row 2 of the crowd list has no character"):
        bpy.ops.motion_matching.bake_all()
    assert set(bpy.data.actions.keys()) == actions
