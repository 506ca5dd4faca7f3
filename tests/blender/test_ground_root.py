"""A take whose top bone sits on the ground above the hips: Add Virtual Root
(and the import's option) make that bone the virtual root, keyed from its own
path when it carries the trajectory, from the hips when it stays still; then
the database builds. Each refusal changes nothing."""

import os

import bpy
import numpy as np
import pytest

from tools import convention_takes as ct
import bl_helpers as H

FRAMES = 1200     # 20 s of the sample


@pytest.fixture(scope="module")
def takes(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("ground_root"))
    sample = ct.read_take(ct.SAMPLE).cut(0, FRAMES)
    return {"unreal": ct.unreal_take(sample, os.path.join(out, "unreal.bvh"))[0],
            "bandai": ct.bandai_takes(sample, os.path.join(out, "bandai"), clip_frames=FRAMES // 2)[0]}


def _bone_world(obj, bone, frames):
    out = np.empty((len(frames), 4, 4))
    for i, f in enumerate(frames):
        bpy.context.scene.frame_set(int(f))
        out[i] = np.array(obj.matrix_world @ obj.pose.bones[bone].matrix)
    return out


def _keys(obj):
    compat = H.addon_module("bridge.blender.compat")
    return sorted((fc.data_path, fc.array_index, tuple(compat.read_curve(fc)["co"][:, 1].round(6)))
                  for fc in compat.fcurves(obj.animation_data.action, obj))


def _build():
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    return bpy.ops.motion_matching.build_database(mirror_takes="OFF")


def test_a_moving_ground_root_is_the_virtual_root(takes):
    obj = H.import_ours(takes["unreal"], global_scale=0.01)
    frames = np.arange(1, FRAMES + 1, 5)
    names = [b.name for b in obj.data.bones]
    before = H.pose_heads(obj, frames, names)
    root_before = before[:, names.index("root")]
    assert bpy.ops.motion_matching.add_virtual_root() == {"FINISHED"}
    settings = obj.data.motion_matching
    assert (settings.root_bone, settings.hips_bone) == ("root", "pelvis")
    assert "root moves on the ground with the character" in settings.root_note
    assert "Root" not in obj.data.bones and obj.data.bones["pelvis"].parent.name == "root"
    after = H.pose_heads(obj, frames, names)
    assert np.abs(after - before).max() < 1e-4          # no joint moves (the root's head stays too)
    root = _bone_world(obj, "root", frames)
    # Keyed from its own path (not smoothed), upright, its Y axis the hips' facing.
    assert np.abs(root[:, :3, 3] - root_before).max() < 1e-4
    assert np.allclose(root[:, :3, 2], [0, 0, 1], atol=1e-6)
    vel = np.gradient(root[:, :2, 3], axis=0)
    moving = np.linalg.norm(vel, axis=1) > 0.8 * 5 / 60
    cos = np.sum(root[moving, :2, 1] * vel[moving], axis=1) / np.linalg.norm(vel[moving], axis=1)
    assert moving.sum() > 50 and np.mean(cos > 0.7) > 0.8
    assert _build() == {"FINISHED"}


def test_a_still_top_bone_is_keyed_under_the_hips(takes):
    obj = H.import_ours(takes["bandai"], global_scale=0.01)
    frames = np.arange(1, FRAMES // 2 + 1, 5)
    names = [b.name for b in obj.data.bones]
    before = H.pose_heads(obj, frames, names)
    assert bpy.ops.motion_matching.add_virtual_root(smooth_root=False) == {"FINISHED"}
    settings = obj.data.motion_matching
    assert (settings.root_bone, settings.hips_bone) == ("joint_Root", "Hips")
    assert "joint_Root stays still" in settings.root_note
    after = H.pose_heads(obj, frames, names)
    skip = names.index("joint_Root")
    assert np.abs(np.delete(after - before, skip, axis=1)).max() < 1e-4
    root = _bone_world(obj, "joint_Root", frames)
    hips = before[:, names.index("Hips")]
    assert np.abs(root[:, 2, 3]).max() < 1e-6
    assert np.abs(root[:, :2, 3] - hips[:, :2]).max() < 1e-4      # under the hips, not at the origin
    assert np.ptp(root[:, 0, 3]) > 0.5
    assert _build() == {"FINISHED"}


def test_the_import_makes_the_ground_root_in_one_call(takes):
    obj = H.import_ours(takes["bandai"], global_scale=0.01, add_virtual_root=True)
    assert obj.data.motion_matching.root_bone == "joint_Root"
    assert _build() == {"FINISHED"}


@pytest.mark.parametrize("case", ["twice", "two_below", "off_ground"])
def test_refusals_change_nothing(takes, case):
    obj = H.import_ours(ct.SAMPLE if case == "off_ground" else takes["bandai"], global_scale=0.01)
    kw = {"hips_bone": "Spine"}
    if case == "twice":
        assert bpy.ops.motion_matching.add_virtual_root() == {"FINISHED"}
        kw = {}
    elif case == "off_ground":
        kw = {"hips_bone": "Chest"}     # under the sample's hips, which move in the air
    counts, keys = H.datablock_counts(), _keys(obj)
    rest = [tuple(b.head_local) + tuple(b.tail_local) for b in obj.data.bones]
    flags = (obj.data.motion_matching.root_bone, obj.data.motion_matching.hips_bone)
    with pytest.raises(RuntimeError, match="already has its virtual root|two bones below the top|not on the ground"):
        bpy.ops.motion_matching.add_virtual_root(**kw)
    assert H.datablock_counts() == counts and _keys(obj) == keys
    assert [tuple(b.head_local) + tuple(b.tail_local) for b in obj.data.bones] == rest
    assert (obj.data.motion_matching.root_bone, obj.data.motion_matching.hips_bone) == flags


def test_build_without_a_root_points_to_add_virtual_root_which_then_works(takes):
    obj = H.import_ours(takes["bandai"], global_scale=0.01)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    store = H.addon_module("bridge.database.store")
    with pytest.raises(RuntimeError, match="has no virtual root bone: add one"):
        bpy.ops.motion_matching.build_database(mirror_takes="OFF")
    assert not store.has_database(bpy.context.scene)
    assert bpy.ops.motion_matching.add_virtual_root() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    assert store.load(bpy.context.scene).matching.num_rows == FRAMES // 2
