"""motion_matching.bake on the sample take along the built-in showcase path."""

import json

import bpy
import numpy as np
import pytest

import bl_helpers as H


FIELDS = ("frames", "fps", "searches", "jumps", "foot_locks", "foot_sliding_m",
          "foot_sliding_cm_per_foot_per_moving_s", "raw_foot_sliding_m", "raw_foot_sliding_cm_per_foot_per_moving_s",
          "tracking_error_mean_m", "tracking_error_max_m", "match_cost_mean", "match_cost_max", "worst_moments",
          "bake_seconds", "real_time_factor")


def test_showcase_bake_meets_its_figures(take_on_path, bake):
    obj, ctrl = take_on_path()
    report = bake()
    for f in FIELDS:
        assert f in report, f
    assert report["frames"] == bpy.context.scene.frame_end - bpy.context.scene.frame_start + 1
    assert report["foot_sliding_cm_per_foot_per_moving_s"] <= 2.0 * report["raw_foot_sliding_cm_per_foot_per_moving_s"]
    assert report["tracking_error_max_m"] <= 0.10 + 0.02
    assert 0 < report["jumps"] < report["searches"]
    assert len(report["worst_moments"]) == 3
    # The character ends within 25 cm of the controller's final stop (Blender's own evaluation).
    scene = bpy.context.scene
    scene.frame_set(scene.frame_end)
    root = obj.matrix_world @ obj.pose.bones["Root"].head
    assert np.linalg.norm(np.array(root[:2]) - np.array(ctrl.matrix_world.translation[:2])) < 0.25
    # Keyed figures for the Graph Editor.
    action = obj.animation_data.action
    compat = H.addon_module("bridge.blender.compat")
    paths = {fc.data_path for fc in compat.fcurves(action, obj)}
    for key in ("mm_match_cost", "mm_jump", "mm_lock_left", "mm_tracking_error"):
        assert '["%s"]' % key in paths
    assert "Motion Matching Bake" in bpy.data.texts


def test_foot_lock_reduces_sliding(take_on_path, bake):
    take_on_path()
    on = bake("on.json")
    off = bake("off.json", use_foot_lock=False)
    assert on["foot_locks"] > 0 and off["foot_locks"] == 0
    assert on["foot_sliding_cm_per_foot_per_moving_s"] < off["foot_sliding_cm_per_foot_per_moving_s"]
    # The scene's bake settings are what a plain bake uses; an option given to the call wins.
    bpy.context.scene.motion_matching.bake_settings.use_foot_lock = False
    scene_off = bake("scene_off.json")
    # (to 1e-9 m: numpy's sums may differ in the last bit with the arrays' memory alignment)
    assert scene_off["foot_sliding_m"] == pytest.approx(off["foot_sliding_m"], abs=1e-9)
    assert scene_off["foot_locks"] == 0
    option_on = bake("option_on.json", use_foot_lock=True)
    assert option_on["foot_sliding_m"] == pytest.approx(on["foot_sliding_m"], abs=1e-9)
    assert option_on["foot_locks"] == on["foot_locks"]


def test_jump_margin_plays_longer_pieces(take_on_path, bake):
    take_on_path()
    plain = bake("plain.json")
    bpy.context.scene.motion_matching.bake_settings.jump_cost_margin = 2.0
    held = bake("held.json")
    assert held["jumps"] < plain["jumps"]
    assert held["searches"] > 0 and held["tracking_error_max_m"] <= 0.10 + 0.02


@pytest.mark.parametrize("knob, default", [("look_ahead", 1.0), ("time_warp", 0.2)])
def test_a_search_knob_reaches_the_bake(take_on_path, bake, knob, default):
    take_on_path()
    core_bake = H.addon_module("core.bake.pipeline")
    assert core_bake.BakeSettings().flat()[knob] == pytest.approx(default)    # on (chosen on the path suite)
    on = bake("on.json")
    off = bake("off.json", **{knob: 0.0})
    # Another search or playback: other rows, other jumps and contact sliding.
    assert (on["jumps"], on["contact_sliding_m"]) != (off["jumps"], off["contact_sliding_m"])
    # The scene's setting does what the option does.
    setattr(bpy.context.scene.motion_matching.bake_settings, knob, 0.0)
    scene_off = bake("scene_off.json")
    assert scene_off["jumps"] == off["jumps"] and scene_off["searches"] == off["searches"]
    assert scene_off["contact_sliding_m"] == pytest.approx(off["contact_sliding_m"], abs=1e-9)


def test_every_bake_knob_is_an_option_and_a_scene_setting():
    core_bake = H.addon_module("core.bake.pipeline")
    names = [k.name for k in core_bake.knobs()]
    assert "use_foot_lock" in names and "search_interval" in names and "toe_floor" not in names
    op = bpy.ops.motion_matching.bake.get_rna_type().properties
    scene_group = bpy.context.scene.motion_matching.bake_settings.bl_rna.properties
    for k in core_bake.knobs():
        assert k.name in op and k.name in scene_group, k.name
        assert op[k.name].name == scene_group[k.name].name == k.label
        assert op[k.name].is_skip_save   # the scene's value counts unless the call gives one
        assert getattr(bpy.context.scene.motion_matching.bake_settings, k.name) == pytest.approx(k.default)


def test_no_pops_and_determinism(take_on_path, bake):
    obj, _ = take_on_path(fps=60)
    bake()
    compat = H.addon_module("bridge.blender.compat")
    pm = H.addon_module("core.measure.path_metrics")
    store = H.addon_module("bridge.database.store")

    def keys(action):
        return {(fc.data_path, fc.array_index): compat.read_curve(fc)["co"].copy()
                for fc in compat.fcurves(action, obj)}

    first = keys(obj.animation_data.action)
    database = store.load(bpy.context.scene)
    names = database.skeleton.names
    raw = pm.rotation_steps(np.asarray(database.poses.rotations, dtype=np.float64)).max(axis=0)
    baked = np.stack([np.column_stack([first[('pose.bones["%s"].rotation_quaternion' % n, k)][:, 1]
                                       for k in range(4)]) for n in names], axis=1)
    steps = pm.rotation_steps(baked).max(axis=0)
    root = names.index("Root")
    for j, name in enumerate(names):
        if j == root:
            continue
        assert steps[j] <= 1.5 * raw[j] + 1e-6, (name, np.degrees(steps[j]), np.degrees(raw[j]))
    bake("again.json")
    second = keys(obj.animation_data.action)
    assert first.keys() == second.keys()
    for k in first:
        assert np.array_equal(first[k], second[k]), k


def test_24_and_60_fps_scenes_both_track(take_on_path, bake):
    obj, _ = take_on_path(fps=24)
    r24 = bake("r24.json")
    times24 = H.key_times(obj)
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, _ = take_on_path(fps=60)
    r60 = bake("r60.json")
    times60 = H.key_times(obj)
    assert abs(r24["tracking_error_mean_m"] - r60["tracking_error_mean_m"]) < 0.02
    for t in (times24, times60):
        assert np.array_equal(t, np.round(t)) and np.all(np.diff(t) == 1.0)
    assert r24["frames"] == pytest.approx(r60["frames"] * 24 / 60, abs=2)


def test_bad_inputs(take_on_path):
    obj, ctrl = take_on_path()
    scene = bpy.context.scene
    actions = len(bpy.data.actions)
    # No controller.
    with pytest.raises(RuntimeError, match="no object named Nope"):
        bpy.ops.motion_matching.bake(controller="Nope")
    scene.motion_matching.controller = None
    assert not bpy.ops.motion_matching.bake.poll()
    # A deleted controller.
    scene.motion_matching.controller = ctrl
    bpy.data.objects.remove(ctrl)
    assert scene.motion_matching.controller is None or not bpy.ops.motion_matching.bake.poll()
    assert len(bpy.data.actions) == actions
    # One frame.
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="showcase") == {"FINISHED"}
    scene.motion_matching.controller = bpy.context.active_object
    with pytest.raises(RuntimeError, match="one frame"):
        bpy.ops.motion_matching.bake(frame_start=10, frame_end=10)
    # No database yet: it is built first, and the report says so.
    store = H.addon_module("bridge.database.store")
    store.clear(scene)
    assert bpy.ops.motion_matching.bake(frame_start=1, frame_end=30) == {"FINISHED"}
    assert "built first" in bpy.data.texts["Motion Matching Bake"].as_string()
    # A stale database is rebuilt first, and the report says so.
    scene.motion_matching.responsiveness = 1.2
    assert bpy.ops.motion_matching.bake(frame_start=1, frame_end=60) == {"FINISHED"}
    assert "rebuilt" in bpy.data.texts["Motion Matching Bake"].as_string()
    # No database and nothing to build it from: a clear error, nothing written.
    store.clear(scene)
    scene.motion_matching.entries.clear()
    actions = len(bpy.data.actions)
    assert not bpy.ops.motion_matching.bake.poll()   # the button explains: "Build a database first"
    with pytest.raises(RuntimeError, match="Build a database first"):
        bpy.ops.motion_matching.bake(frame_start=1, frame_end=30)
    assert len(bpy.data.actions) == actions


def test_static_and_too_fast_controllers(tmp_path, take_on_path, bake):
    obj, ctrl = take_on_path()
    scene = bpy.context.scene
    # Static: an Empty that never moves. The character idles where it stands.
    empty = bpy.data.objects.new("Still", None)
    scene.collection.objects.link(empty)
    scene.motion_matching.controller = empty
    scene.frame_start, scene.frame_end = 1, 120
    report = bake("still.json")
    assert report["tracking_error_max_m"] <= 0.12
    # Faster than anything in the take (8 m/s): the bake completes and the cost shows it.
    path = tmp_path / "fast.json"
    path.write_text(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1, "x": 0, "y": 0},
                                           {"t": 5, "x": 0, "y": -32}, {"t": 6, "x": 0, "y": -32}]}))
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="FILE", filepath=str(path),
                                                           update_scene_range=True) == {"FINISHED"}
    scene.motion_matching.controller = bpy.context.active_object
    fast = bake("fast_report.json")
    assert fast["match_cost_max"] > report["match_cost_max"]
    assert fast["worst_moments"][0]["cost"] == pytest.approx(fast["match_cost_max"])


class Event:
    """A stand-in for the window manager's event: what modal() reads."""

    def __init__(self, type, value="PRESS"):
        self.type, self.value = type, value


def _operator_stand_in():
    """An object that holds what an instance of the bake operator holds and runs
    the operator's own methods (Blender makes operator instances only inside a
    call, and a background process has no window to run a modal one in)."""
    op = bpy.types.MOTION_MATCHING_OT_bake
    members = {name: getattr(op, name) for name in ("begin_slices", "modal", "_stop", "_start", "_finish",
                                                    "start_work", "finish_work", "stopped_work",
                                                    "slice_seconds", "settings")}

    class NothingSet:
        def is_property_set(self, name):
            return False

    def report(self, kind, text):
        self.reports.append((set(kind), text))

    # The operator's options at their defaults: nothing given, the scene's choices count.
    members.update(controller="", armature="", tag_query="", report_path="", frame_start=0, frame_end=0, scale=0.0,
                   ground="", properties=NothingSet(), report=report)
    stand_in = type("BakeOperatorStandIn", (), members)()
    stand_in.reports = []
    return stand_in


def test_modal_bake_advances_on_timer_and_esc_cancels(take_on_path):
    """The interactive bake: TIMER events advance it, Esc stops it with nothing
    written and the frame given back; left to run, it keys the action."""
    obj, ctrl = take_on_path()
    scene = bpy.context.scene
    scene.frame_set(57)
    take = obj.animation_data.action
    actions = set(bpy.data.actions.keys())
    op = _operator_stand_in()
    op.slice_seconds = 0.0                     # one slice per event, whatever the machine's speed
    op.begin_slices(bpy.context)
    assert op._fraction == 0.0
    assert op.modal(bpy.context, Event("MOUSEMOVE")) == {"PASS_THROUGH"}
    for _ in range(200):                       # each TIMER event runs a slice
        assert op.modal(bpy.context, Event("TIMER")) == {"RUNNING_MODAL"}
        if op._fraction > 0.0:
            break
    assert 0.0 < op._fraction < 1.0
    scene.frame_set(100)                       # the timeline moved meanwhile
    assert op.modal(bpy.context, Event("ESC")) == {"CANCELLED"}
    assert set(bpy.data.actions.keys()) == actions and "MM_Bake" not in bpy.data.actions
    assert obj.animation_data.action == take
    assert scene.frame_current == 57
    assert op.reports == [({"WARNING"}, "Bake cancelled: nothing was written.")]
    with pytest.raises(StopIteration):
        next(op._steps)                        # the simulation was closed
    # Left to run to the end, the same path keys MM_Bake and gives the frame back.
    op = _operator_stand_in()
    op.begin_slices(bpy.context)
    results = []
    for _ in range(10000):
        results.append(op.modal(bpy.context, Event("TIMER")))
        if results[-1] != {"RUNNING_MODAL"}:
            break
    assert results[-1] == {"FINISHED"} and len(results) >= 1
    assert obj.animation_data.action.name == "MM_Bake" and scene.frame_current == 57
    # The summary, then the report's warnings, one WARNING each.
    warnings = json.loads(scene.motion_matching.last_bake_report)["warnings"]
    assert op.reports == [op.reports[0]] + [({"WARNING"}, w) for w in warnings]
    assert op.reports[0][0] == {"INFO"}
