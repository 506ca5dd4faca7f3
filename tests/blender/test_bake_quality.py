"""The bake report's figures and warnings against the baked
keys measured independently (tools/path_measure, core/path_metrics), and the
bake's determinism."""

import os

import bpy
import numpy as np
import pytest

from core.measure import path_metrics as pm
from sample_paths import SAMPLES
from tools import path_measure


def _motion(obj, contacts=True):
    scene = bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    action = obj.animation_data.action
    c = path_measure.baked_contacts(obj, action, frames) if contacts else None
    return path_measure.read_motion(obj, action, frames, scene.render.fps, contacts=c), frames


def test_report_figures_equal_the_keys_measured(take_on_path, bake):
    obj, ctrl = take_on_path(fps=30, scenario="straight_walk")
    raw_action = obj.animation_data.action
    report = bake()
    motion, frames = _motion(obj)
    floor = report["planted_ankle_height_m"]
    fps = 30.0
    slide = pm.ankle_sliding(motion.ankles, motion.hips, fps, floor, contacts=motion.contacts)
    assert report["contact_sliding_cm_per_foot_per_moving_s"] == pytest.approx(
        slide["cm_per_foot_per_moving_s"], rel=0.1, abs=0.01)
    assert report["seed_ankle_sliding_m_per_14_5_s"] == pytest.approx(
        pm.seed_sliding(motion.ankles, fps)["m_per_seconds"], rel=0.1, abs=0.01)
    facing = pm.body_facing(motion.hip_joints[:, 0], motion.hip_joints[:, 1])
    assert report["facing_error_travel_mean_deg"] == pytest.approx(
        pm.travel_facing_error(facing, motion.hips, fps)["mean_deg"], rel=0.1, abs=0.5)
    # Tracking on the hips against the controller where Blender puts it.
    scene = bpy.context.scene
    path = []
    for f in frames:
        scene.frame_set(int(f))
        path.append(np.array(ctrl.matrix_world.translation))
    track = pm.tracking(motion.hips, np.array(path))
    assert report["hips_tracking_max_m"] == pytest.approx(track["max_m"], abs=0.01)
    assert report["hips_tracking_mean_m"] == pytest.approx(track["mean_m"], abs=0.01)
    assert report["hips_tracking_max_m"] <= bpy.context.scene.motion_matching.bake_settings.clamp_distance + 0.02
    # The raw take, evaluated by Blender on fractional frames at the bake's rate.
    db_fps = report["database_fps"]
    first, last = (float(v) for v in raw_action.frame_range)
    raw_frames = first + np.arange(int((last - first) * fps / db_fps) + 1) * db_fps / fps
    db = path_measure.addon("bridge.database.store").load(scene).matching
    rows = np.clip(np.rint(raw_frames - first).astype(np.int64), 0, db.num_rows - 1)
    raw = path_measure.read_motion(obj, raw_action, raw_frames, fps, contacts=db.contacts[rows])
    raw_slide = pm.ankle_sliding(raw.ankles, raw.hips, fps, floor, contacts=raw.contacts)
    assert report["raw_contact_sliding_cm_per_foot_per_moving_s"] == pytest.approx(
        raw_slide["cm_per_foot_per_moving_s"], rel=0.1)
    assert report["contact_sliding_ratio"] == pytest.approx(
        slide["cm_per_foot_per_moving_s"] / raw_slide["cm_per_foot_per_moving_s"], rel=0.1)
    # The text block says it too.
    text = bpy.data.texts["Motion Matching Bake"].as_string()
    assert "planted sliding" in text and "hips to path" in text


def test_walk_only_database_plays_walking_and_warns_only_under_the_strict_rule(take_on_path, bake):
    bpy.ops.motion_matching.import_dance_card(filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml"))
    obj, ctrl = take_on_path(fps=30, scenario="showcase")
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.motion_matching.auto_tag() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    fine = bake()
    assert not [w for w in fine["warnings"] if "Most searches jump" in w or "faces more than" in w], fine["warnings"]
    # The strict tag query rule (the only one before Tag Query Lead) leaves 0.6 s of the
    # take's 16.4 s of walking searchable: one pose freezes, and the report says so.
    # A core-only setting: baked through the operator's own job with core settings.
    strict = path_measure.addon("bridge.blender.bake_settings").to_core(
        bpy.context.scene.motion_matching.bake_settings).replaced(strict_tag_query=True)
    glide = path_measure.addon("bridge.bake.bake_job").bake(bpy.context, strict, tag_query="walk")
    frozen = [w for w in glide["warnings"] if w.startswith("Most searches jump")]
    assert len(frozen) == 1 and "frames " in frozen[0], glide["warnings"]
    assert glide["jumps"] > 0.9 * glide["searches"]
    assert "Warning: Most searches jump" in bpy.data.texts["Motion Matching Bake"].as_string()
    # By default every walking frame plays (searched with a lead of 1/3 s): pieces
    # play on until they leave the walking frames, and nothing freezes.
    walk = bake(name="walk2.json", tag_query="walk")
    assert not [w for w in walk["warnings"] if w.startswith("Most searches jump")], walk["warnings"]
    assert walk["jumps"] < 0.6 * walk["searches"], (walk["jumps"], walk["searches"])


def test_same_inputs_same_keys(take_on_path, bake):
    obj, ctrl = take_on_path(fps=30, scenario="straight_walk")
    raw_action = obj.animation_data.action
    first = bake(name="a.json")
    a, _ = _motion(obj, contacts=False)
    compat = path_measure.addon("bridge.blender.compat")
    compat.assign_action(obj, raw_action)
    second = bake(name="b.json")
    b, _ = _motion(obj, contacts=False)
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(a.hips, b.hips)
    assert np.array_equal(a.ankles, b.ankles)
    for key in ("foot_locks", "jumps", "warnings"):
        assert first[key] == second[key]
    # The keys are equal to the bit; a figure summed from them may differ in its last
    # bits (numpy's vectorised sums depend on how the arrays lie in memory).
    key = "contact_sliding_cm_per_foot_per_moving_s"
    assert first[key] == pytest.approx(second[key], rel=1e-12, abs=1e-12)
