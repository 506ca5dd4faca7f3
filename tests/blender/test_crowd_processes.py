"""Bake All on several processors: the pairs baked by background processes
from a copy of the file give every character the same keys, bit for bit, as
Bake All in one process; Esc stops the processes and keeps what finished;
a copy that cannot be saved, or a background process that fails, is one
sentence. A character of another rig (retargeted) keys as in one process too."""

import json
import os
import sys

import bpy
import numpy as np
import pytest

import bl_helpers as H
from test_bake import Event
from test_crowd import _bake_all_stand_in, _crowd


def _short_crowd(take_on_path, count):
    _crowd(take_on_path, count=count, lanes=2)
    scene = bpy.context.scene
    scene.frame_end = scene.frame_start + 48
    return [(p.controller.name, p.armature.name) for p in scene.motion_matching.crowd]


# Every key field foreach_get reads, with its width and type (enums as numbers).
KEY_FIELDS = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
              ("interpolation", 1, np.int8), ("easing", 1, np.int8), ("handle_left_type", 1, np.int8),
              ("handle_right_type", 1, np.int8), ("type", 1, np.int8), ("back", 1, np.float32),
              ("amplitude", 1, np.float32), ("period", 1, np.float32))


def _curves(action, obj):
    """Every F-Curve ``obj`` plays from ``action``, in order: paths, indices,
    groups, extrapolation, key counts, and every key field of every key."""
    curves = H.addon_module("bridge.blender.compat").fcurves(action, obj)
    out = {"paths": np.array([fc.data_path for fc in curves], dtype=str),
           "indices": np.array([fc.array_index for fc in curves], dtype=np.int64),
           "groups": np.array([fc.group.name if fc.group else "" for fc in curves], dtype=str),
           "extrapolation": np.array([fc.extrapolation for fc in curves], dtype=str),
           "counts": np.array([len(fc.keyframe_points) for fc in curves], dtype=np.int64)}
    for name, width, dtype in KEY_FIELDS:
        parts = []
        for fc in curves:
            buf = np.empty(len(fc.keyframe_points) * width, dtype=dtype)
            fc.keyframe_points.foreach_get(name, buf)
            parts.append(buf)
        out[name] = np.concatenate(parts)
    return out


def _state(pairs):
    """What Bake All left on each character: its action's name, every F-Curve
    recorded in order (keys, handles, groups, modes), its mm_ properties and bone
    rotation modes; and the crowd's table."""
    out = {}
    for _c, name in pairs:
        arm = bpy.data.objects[name]
        action = arm.animation_data.action
        out[name] = {"action": action.name, "curves": _curves(action, arm),
                     "props": {k: arm[k] for k in arm.keys() if k.startswith("mm_")},
                     "modes": [pb.rotation_mode for pb in arm.pose.bones]}
    out["table"] = bpy.data.texts["Motion Matching Crowd"].as_string()
    out["last"] = json.loads(bpy.context.scene.motion_matching.last_bake_report)
    return out


def _same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        if name in ("table", "last"):
            continue
        assert a[name]["action"] == b[name]["action"]
        assert a[name]["props"] == b[name]["props"] and a[name]["modes"] == b[name]["modes"]
        ca, cb = a[name]["curves"], b[name]["curves"]
        assert ca.keys() == cb.keys()
        for k in ca:
            assert ca[k].dtype == cb[k].dtype and np.array_equal(ca[k], cb[k]), (name, k)   # bit for bit
    clock = ("bake_seconds", "real_time_factor")   # the clock's, not the bake's
    assert {k: v for k, v in a["last"].items() if k not in clock} == {k: v for k, v in b["last"].items() if k not in clock}


@pytest.fixture
def started(monkeypatch):
    """The background process sets Bake All starts, recorded as they start."""
    module = H.addon_module("bridge.bake.crowd_processes")
    out = []

    class Recorded(module._Processes):
        def __init__(self, *args):
            super().__init__(*args)
            out.append(self)

    monkeypatch.setattr(module, "_Processes", Recorded)
    return out


def test_bake_all_in_two_processes_keys_as_one_process(take_on_path, tmp_path, started, monkeypatch):
    pairs = _short_crowd(take_on_path, count=4)
    start = str(tmp_path / "start.blend")
    bpy.ops.wm.save_as_mainfile(filepath=start)
    scene = bpy.context.scene
    scene.motion_matching.crowd_processes = 1
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    one = _state(pairs)
    assert not started
    module = H.addon_module("bridge.bake.crowd_processes")
    # Two background processes baking every pair, then this one and one other.
    for here, children in ((False, 2), (True, 1)):
        monkeypatch.setattr(module, "BAKE_HERE", here)
        bpy.ops.wm.open_mainfile(filepath=start)
        scene = bpy.context.scene
        scene.motion_matching.crowd_processes = 2
        frame = scene.frame_current
        assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
        assert scene.frame_current == frame and bpy.data.filepath == start
        two = _state(pairs)
        assert len(started[-1].procs) == children
        assert all(proc.returncode == 0 for proc, _share in started[-1].procs)
        assert not os.path.exists(started[-1].folder)
        _same(one, two)
        assert "4 of 4 characters baked" in two["table"]
        # The table's rows, character by character, as one process writes them (its bake times aside).
        assert [ln.split()[:2] for ln in one["table"].splitlines()] == [ln.split()[:2] for ln in two["table"].splitlines()]


def test_esc_stops_the_processes_and_keeps_the_characters_done(take_on_path, started):
    pairs = _short_crowd(take_on_path, count=4)
    scene = bpy.context.scene
    scene.motion_matching.crowd_processes = 2
    op = _bake_all_stand_in()
    op.slice_seconds = 0.0
    op.begin_slices(bpy.context)
    assert len(started) == 1 and os.path.isdir(started[0].folder)
    for _ in range(100000):
        assert op.modal(bpy.context, Event("TIMER")) == {"RUNNING_MODAL"}
        if op._results:
            break
    done = len(op._results)
    assert 1 <= done < 4
    assert op.modal(bpy.context, Event("ESC")) == {"FINISHED"}
    assert op.reports == [({"WARNING"}, "Baked %d of 4 characters; Esc stopped the rest." % done)]
    assert all(proc.poll() is not None for proc, _share in started[0].procs)
    assert not os.path.exists(started[0].folder)
    names = {name for name, _r in op._results}
    for _c, name in pairs:
        arm = bpy.data.objects[name]
        played = arm.animation_data.action if arm.animation_data else None
        assert (played is not None and played.name.startswith("MM_Bake")) == (name in names)


def test_a_copy_that_cannot_be_saved_is_refused(take_on_path, tmp_path, monkeypatch):
    _short_crowd(take_on_path, count=3)
    scene = bpy.context.scene
    scene.motion_matching.crowd_processes = 2
    bpy.ops.motion_matching.build_database()       # Bake All would otherwise rebuild it first
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    monkeypatch.setattr(H.addon_module("bridge.bake.crowd_processes").tempfile, "mkdtemp",
                        lambda prefix="": str(not_a_folder))
    before = H.datablock_counts()
    actions = set(bpy.data.actions.keys())
    with pytest.raises(RuntimeError, match="Cannot save a copy of this file for the other processes"):
        bpy.ops.motion_matching.bake_all()
    assert H.datablock_counts() == before and set(bpy.data.actions.keys()) == actions
    assert all(p.armature.animation_data is None or p.armature.animation_data.action is None
               or not p.armature.animation_data.action.name.startswith("MM_Bake") for p in scene.motion_matching.crowd)


def test_the_internal_command_is_not_offered_and_refuses_in_one_line(capsys, tmp_path):
    commands = H.addon_module("cli.commands")
    assert "crowd-pairs" not in commands.USAGE
    assert commands.main(["crowd-pairs", "--blend", str(tmp_path / "x.blend"), "--pairs", "0,a",
                          "--keys", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["motion_matching: --pairs takes numbers separated by commas, not '0,a'."]


def test_a_failed_background_process_is_one_sentence(take_on_path, started, monkeypatch):
    _short_crowd(take_on_path, count=3)
    scene = bpy.context.scene
    scene.motion_matching.crowd_processes = 2
    bpy.ops.motion_matching.build_database()
    module = H.addon_module("bridge.bake.crowd_processes")
    monkeypatch.setattr(module, "BAKE_HERE", False)
    failing = [sys.executable, "-c", "import sys; print('motion_matching: the copy is gone.', file=sys.stderr); sys.exit(1)"]
    monkeypatch.setattr(module.child_process, "command", lambda argv: failing)
    actions = set(bpy.data.actions.keys())
    with pytest.raises(RuntimeError, match="Another process baking the crowd stopped before its characters were done: "
                                           "motion_matching: the copy is gone."):
        bpy.ops.motion_matching.bake_all()
    assert set(bpy.data.actions.keys()) == actions
    assert all(proc.poll() is not None for proc, _share in started[0].procs)
    assert not os.path.exists(started[0].folder)


@pytest.mark.usefixtures("rigify")
def test_a_character_of_another_rig_keys_as_in_one_process(take_on_path, tmp_path, started, monkeypatch):
    from test_crowd import _curve, _select

    source, _ctrl = take_on_path(fps=24)
    rig = H.meta_rig_target(source)
    _select(_curve(), source, rig)
    assert bpy.ops.motion_matching.add_crowd(count=3, lanes=1) == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_end = scene.frame_start + 48
    pairs = [(p.controller.name, p.armature.name) for p in scene.motion_matching.crowd]
    assert rig.name in {name for _c, name in pairs}
    start = str(tmp_path / "start.blend")
    bpy.ops.wm.save_as_mainfile(filepath=start)
    scene.motion_matching.crowd_processes = 1
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    one = _state(pairs)
    assert "mm_size_ratio" in one[rig.name]["props"]        # retargeted onto the meta-rig
    monkeypatch.setattr(H.addon_module("bridge.bake.crowd_processes"), "BAKE_HERE", False)  # all in the others
    bpy.ops.wm.open_mainfile(filepath=start)
    bpy.context.scene.motion_matching.crowd_processes = 2
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    assert all(proc.returncode == 0 for proc, _share in started[-1].procs)
    _same(one, _state(pairs))
