"""bridge.bake.bake_job bakes from core settings as motion_matching.bake does (the
operator runs it with the scene's settings): the same keys for the same
settings, and core-only settings (the benchmark's earlier behaviour) reach the bake."""

import numpy as np

import bpy

import bl_helpers as H


def _keys(obj):
    """{data path and index: (n, 2) keyframe points} of the armature's baked action."""
    out = {}
    for fc in H.addon_module("bridge.blender.compat").fcurves(obj.animation_data.action, obj):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        out[(fc.data_path, fc.array_index)] = co.reshape(-1, 2)
    return out


def test_the_bake_job_keys_what_the_operator_keys(take_on_path, bake):
    obj, ctrl = take_on_path()
    raw = obj.animation_data.action
    scene = bpy.context.scene
    scene.frame_end = 120
    by_operator = bake("op.json")
    op_keys = _keys(obj)
    H.addon_module("bridge.blender.compat").assign_action(obj, raw)
    settings = H.addon_module("bridge.blender.bake_settings").to_core(scene.motion_matching.bake_settings)
    job = H.addon_module("bridge.bake.bake_job")
    by_job = job.bake(bpy.context, settings)
    job_keys = _keys(obj)
    assert set(job_keys) == set(op_keys) and len(op_keys) > 10
    for k in op_keys:
        assert np.array_equal(op_keys[k], job_keys[k]), k
    assert (by_job["jumps"], by_job["searches"], by_job["foot_locks"]) == \
        (by_operator["jumps"], by_operator["searches"], by_operator["foot_locks"])
    # A core-only setting (no operator option, no scene setting) changes the bake.
    assert "lock_on_contact" not in bpy.ops.motion_matching.bake.get_rna_type().properties
    H.addon_module("bridge.blender.compat").assign_action(obj, raw)
    old = job.bake(bpy.context, settings.replaced(lock_on_contact=False, release_in_joints=False))
    old_keys = _keys(obj)
    assert old["foot_locks"] != by_job["foot_locks"] or any(
        not np.array_equal(old_keys[k], job_keys[k]) for k in job_keys)
