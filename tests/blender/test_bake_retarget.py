"""Bake the showcase straight onto the Rigify human meta-rig: feet above the
floor, sliding comparable to the take, hips on the path."""

import json

import bpy
import numpy as np

import bl_helpers as H


def test_bake_onto_meta_rig(tmp_path, rigify, take_on_path):
    source, ctrl = take_on_path(fps=24)
    rig = H.meta_rig_target(source)
    scene = bpy.context.scene
    scene.motion_matching.bake_armature = rig
    path = tmp_path / "r.json"
    assert bpy.ops.motion_matching.bake(report_path=str(path)) == {"FINISHED"}
    report = json.loads(path.read_text())
    assert report["retargeted_onto"] == rig.name and report["target_foot_locks"] > 0
    mapped = {i.name: i.bone for i in rig.data.motion_matching.bone_map if i.bone}
    toes = [mapped["LeftToes"], mapped["RightToes"]]
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    names = [b.name for b in rig.data.bones]
    heads = H.pose_heads(rig, frames, names)
    # Toe bones' lowest point (head or tail) per frame.
    tails = []
    for f in frames:
        scene.frame_set(int(f))
        tails.append([np.array(rig.matrix_world @ rig.pose.bones[t].tail) for t in toes])
    tails = np.array(tails)
    toe_heads = heads[:, [names.index(t) for t in toes]]
    lowest = np.minimum(toe_heads[:, :, 2], tails[:, :, 2])
    assert lowest.min() > -0.01, lowest.min()
    # Sliding on the target's toes, the take's own measure for comparison.
    pm = H.addon_module("core.measure.path_metrics")
    hips = heads[:, names.index(mapped["Hips"])]
    floor = float(np.median(toe_heads[:, :, 2]))  # planted height of the target's toes
    floor = min(floor, float(np.percentile(toe_heads[:, :, 2], 30)))
    slide = pm.ankle_sliding(toe_heads, hips, 24.0, floor, margin=0.02, max_speed=None)   # low toes
    assert slide["cm_per_foot_per_moving_s"] <= 2.0 * report["raw_foot_sliding_cm_per_foot_per_moving_s"], slide
    # Hips follow the controller.
    bridge = H.addon_module("bridge.bake.controller")
    ctrl_pos, _ = bridge.sample_controller(bpy.context, ctrl, frames.astype(float))
    err = np.linalg.norm(hips[:, :2] - ctrl_pos[:, :2], axis=1)
    assert err.mean() < 0.10, err.mean()
