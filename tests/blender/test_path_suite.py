"""The path suite (samples/paths) and its measurement (tools/path_measure,
core/path_metrics) against Blender's own evaluation after frame_set."""

import glob
import json
import math
import os

import bpy
import numpy as np
import pytest
from mathutils import Vector

from core.measure import path_metrics as pm
from core.paths import scenario as sc
from sample_paths import SAMPLE_TAKE, SAMPLES
from tools import path_measure
import bl_helpers as H

SUITE = sorted(glob.glob(os.path.join(SAMPLES, "paths", "*.json")))
NAMES = {"figure8", "zigzag", "walk_stand_walk", "slow_circle", "run_reversal", "strafe"}


def _new_object(before):
    objs = H.new_objects(before)
    assert len(objs) == 1
    return objs[0]


def test_every_suite_file_loads_as_a_scenario(empty_scene):
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    assert {os.path.splitext(os.path.basename(p))[0] for p in SUITE} == NAMES
    for path in SUITE:
        scenario = sc.load_scenario(path)
        before = set(bpy.data.objects.keys())
        assert bpy.ops.motion_matching.add_scenario_controller(
            scenario="FILE", filepath=path, frame_start=1, update_scene_range=True) == {"FINISHED"}
        ctrl = _new_object(before)
        assert scene.frame_end == 1 + math.ceil(sc.duration(scenario) * 30 - 1e-9)
        # The controller plays the file: Blender puts it where the file says on every frame.
        frames = np.linspace(1, scene.frame_end, 7).round()
        want = sc.sample(scenario, (frames - 1) / 30)[0]
        for f, w in zip(frames, want):
            scene.frame_set(int(f))
            assert np.allclose(ctrl.matrix_world.translation[:2], w[:2], atol=1e-5), (path, f)
        assert np.allclose(want[-1, :2], scenario.xy[-1])
        assert bool(ctrl.get("motion_matching_use_facing")) == scenario.has_facing == (
            os.path.basename(path) == "strafe.json")
        # Every path starts and ends standing.
        v = sc.velocity(scenario, [0.0, sc.duration(scenario)])
        assert np.allclose(v, 0.0)


def _import_and_bake(tmp_path, name, fps):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    raw_action = obj.animation_data.action
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    path = os.path.join(SAMPLES, "paths", name + ".json")
    before = set(bpy.data.objects.keys())
    assert bpy.ops.motion_matching.add_scenario_controller(
        scenario="FILE", filepath=path, frame_start=1, update_scene_range=True) == {"FINISHED"}
    ctrl = _new_object(before)
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = obj
    report_path = str(tmp_path / "report.json")
    assert bpy.ops.motion_matching.bake(use_strafe=True, report_path=report_path) == {"FINISHED"}
    with open(report_path) as fh:
        report = json.load(fh)
    return obj, raw_action, sc.load_scenario(path), report


def _loop_sliding(ankles, hips, fps, floor):
    """The planted-ankle measure written out step by step (not vectorised)."""
    slid = [0.0, 0.0]
    moving = 0
    for i in range(len(hips) - 1):
        if math.hypot(*(hips[i + 1, :2] - hips[i, :2])) * fps > 0.2:
            moving += 1
        for side in (0, 1):
            a, b = ankles[i, side], ankles[i + 1, side]
            low = a[2] < floor + 0.03 and b[2] < floor + 0.03
            if low and np.linalg.norm(b - a) * fps < 1.0:
                slid[side] += math.hypot(b[0] - a[0], b[1] - a[1])
    return slid, 100.0 * (slid[0] + slid[1]) / 2.0 / (moving / fps)


def test_measurement_agrees_with_frame_set_on_a_strafe(tmp_path):
    fps = 24
    obj, raw_action, scenario, report = _import_and_bake(tmp_path, "strafe", fps)
    scene = bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    motion = path_measure.read_motion(obj, obj.animation_data.action, frames, fps)
    bones = path_measure.measured_bones(obj)
    order = [bones[j] for j in ("Hips", "LeftUpperLeg", "RightUpperLeg", "LeftFoot", "RightFoot")]
    # Blender's own pose on every frame of the bake.
    ref = path_measure.frame_set_heads(scene, obj, frames, order)
    hips, hip_joints, ankles = ref[:, 0], ref[:, 1:3], ref[:, 3:5]
    assert np.abs(motion.hips - hips).max() < 1e-4
    assert np.abs(motion.ankles - ankles).max() < 1e-4
    floor = report["planted_ankle_height_m"]
    assert 0.05 < floor < 0.15

    measured = pm.ankle_sliding(motion.ankles, motion.hips, fps, floor)
    slid, per = _loop_sliding(ankles, hips, fps, floor)
    assert measured["left_m"] == pytest.approx(slid[0], abs=0.01)
    assert measured["right_m"] == pytest.approx(slid[1], abs=0.01)
    assert measured["cm_per_foot_per_moving_s"] == pytest.approx(per, abs=1.0)
    assert slid[0] + slid[1] > 0.05          # the strafe does slide: the comparison is not of zeros

    # Facing against the asked facing (0: -Y) with mathutils, frame by frame.
    facing = pm.body_facing(motion.hip_joints[:, 0], motion.hip_joints[:, 1])
    asked = sc.sample(scenario, (frames - 1) / fps)[1]
    errors = []
    for left, right, want in zip(hip_joints[:, 0], hip_joints[:, 1], asked):
        body = (Vector(left) - Vector(right)).cross(Vector((0.0, 0.0, 1.0))).to_2d()
        errors.append(math.degrees(abs(body.angle_signed(Vector(want)))))
    assert pm.asked_facing_error(facing, asked)["mean_deg"] == pytest.approx(np.mean(errors), abs=1.0)
    # Against travel: the hips' displacement over half a second.
    half = int(round(0.25 * fps))
    errors = []
    for i in range(len(frames)):
        a, b = max(i - half, 0), min(i + half, len(frames) - 1)
        v = Vector(hips[b, :2] - hips[a, :2]) / ((b - a) / fps)
        if v.length > 0.5:
            body = (Vector(hip_joints[i, 0]) - Vector(hip_joints[i, 1])).cross(Vector((0.0, 0.0, 1.0))).to_2d()
            errors.append(math.degrees(abs(body.angle_signed(v))))
    travel = pm.travel_facing_error(facing, motion.hips, fps)
    assert travel["frames"] == len(errors) > 0
    assert travel["mean_deg"] == pytest.approx(np.mean(errors), abs=1.0)

    # The raw take on fractional frames (how the bench samples it at 24 fps) is Blender's pose there too.
    H.addon_module("bridge.blender.compat").assign_action(obj, raw_action)
    raw_frames = np.array([1.0, 101.5, 2000.25, 4000.75])
    raw = path_measure.read_motion(obj, raw_action, raw_frames, fps)
    ref = path_measure.frame_set_heads(scene, obj, raw_frames, [bones["Hips"], bones["LeftFoot"], bones["RightToes"]])
    assert np.abs(raw.hips - ref[:, 0]).max() < 1e-4
    assert np.abs(raw.ankles[:, 0] - ref[:, 1]).max() < 1e-4
    assert np.abs(raw.toes[:, 1] - ref[:, 2]).max() < 1e-4
