"""motion_matching.add_virtual_root: a root on the ground that follows the hips,
and not one joint moves."""

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
from tools.bvh_writer import write_bvh, sample_layout
from core.io import bvh_parse as core_bvh_parse
import bl_helpers as H


def _root_world(obj, frames, root="Root"):
    scene = bpy.context.scene
    out = np.empty((len(frames), 4, 4))
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        out[i] = np.array(obj.matrix_world @ obj.pose.bones[root].matrix)
    return out


@pytest.mark.parametrize("smooth", [True, False])
def test_no_joint_moves_on_any_frame(smooth):
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    names = [b.name for b in obj.data.bones]
    frames = np.arange(1, 5563)
    before = H.pose_heads(obj, frames, names)
    assert bpy.ops.motion_matching.add_virtual_root(smooth_root=smooth) == {"FINISHED"}
    assert obj.data.bones["Hips"].parent.name == "Root"
    assert obj.data.motion_matching.root_bone == "Root"
    after = H.pose_heads(obj, frames, names)
    assert np.abs(after - before).max() < 1e-5
    root = _root_world(obj, frames[::7])
    assert np.abs(root[:, 2, 3]).max() < 1e-6          # on the ground
    assert np.allclose(root[:, :3, 2], [0, 0, 1], atol=1e-6)  # upright: only yaw
    hips = before[::7, names.index("Hips")]
    dist = np.linalg.norm(root[:, :2, 3] - hips[:, :2], axis=1)
    if smooth:
        assert 0.0 < dist.max() < 0.6   # smoothing moves it, but not away from the body
    else:
        assert dist.max() < 1e-5        # exactly under the hips


def test_root_faces_where_the_character_walks():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    frames = np.arange(1, 5563, 3)
    root = _root_world(obj, frames)
    # The bone's tail points forward; at rest the character faces -Y.
    forward = root[:, :3, 1]
    vel = np.gradient(root[:, :3, 3], axis=0) * (60.0 / 3)
    speed = np.linalg.norm(vel[:, :2], axis=1)
    moving = speed > 0.8
    cos = np.sum(forward[moving, :2] * vel[moving, :2], axis=1) / speed[moving]
    assert moving.sum() > 300
    assert np.mean(cos > 0.7) > 0.8   # mostly walking and running forwards


def _rotated_take(dst, degrees, frames=900):
    """The sample turned about the vertical (BVH Y) by ``degrees``: the root's
    Y rotation (listed first, so applied last) gains the angle and its path turns."""
    data = core_bvh_parse.read_bvh(SAMPLE_TAKE)
    names, parents, offsets, channels, ends = sample_layout(data)
    motion = data.motion[:frames].copy()
    a = np.radians(degrees)
    s0 = data.channel_start[0]
    cols = {c: s0 + k for k, c in enumerate(channels[0])}
    assert channels[0][3] == "Yrotation"
    x, z = motion[:, cols["Xposition"]].copy(), motion[:, cols["Zposition"]].copy()
    motion[:, cols["Xposition"]] = np.cos(a) * x + np.sin(a) * z
    motion[:, cols["Zposition"]] = -np.sin(a) * x + np.cos(a) * z
    motion[:, cols["Yrotation"]] += degrees
    return write_bvh(dst, names, parents, offsets, channels, motion, data.frame_time, end_sites=ends)


@pytest.mark.parametrize("smooth", [True, False])
def test_facing_follows_a_rotated_take(tmp_path, smooth):
    frames = np.arange(1, 901, 5)
    original = H.import_ours(_rotated_take(str(tmp_path / "a.bvh"), 0.0), global_scale=0.01,
                             add_virtual_root=True, smooth_root=smooth)
    turned = H.import_ours(_rotated_take(str(tmp_path / "b.bvh"), 37.0), global_scale=0.01,
                           add_virtual_root=True, smooth_root=smooth)
    r0, r1 = _root_world(original, frames), _root_world(turned, frames)
    a = np.radians(37.0)
    rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    assert np.abs(rz @ r0[:, :3, :3] - r1[:, :3, :3]).max() < 1e-4
    assert np.abs(r0[:, :3, 3] @ rz.T - r1[:, :3, 3]).max() < 1e-4


def test_refusals_leave_the_armature_alone():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    bones = len(obj.data.bones)
    with pytest.raises(RuntimeError, match="already has its virtual root"):
        bpy.ops.motion_matching.add_virtual_root()
    with pytest.raises(RuntimeError, match="already has a bone named Root"):
        bpy.ops.motion_matching.add_virtual_root(hips_bone="Root")
    with pytest.raises(RuntimeError, match="has no bone named Pelvis"):
        bpy.ops.motion_matching.add_virtual_root(hips_bone="Pelvis", root_name="Root2")
    with pytest.raises(RuntimeError, match="two bones below the top"):
        bpy.ops.motion_matching.add_virtual_root(hips_bone="Chest", root_name="Root2")
    assert len(obj.data.bones) == bones
    with pytest.raises(RuntimeError, match="below the window"):      # 0.05 s: 5 frames at 60 fps
        bpy.ops.motion_matching.add_virtual_root(root_name="Root2", hips_bone="Root", position_window=0.05,
                                                 position_order=8)
    assert len(obj.data.bones) == bones
    obj.animation_data.action = None
    assert not bpy.ops.motion_matching.add_virtual_root.poll()
