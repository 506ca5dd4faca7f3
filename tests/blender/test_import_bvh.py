"""motion_matching.import_bvh against Blender's own BVH importer."""

import os

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
from tools.bvh_writer import write_bvh, sample_layout
from core.io import bvh_parse as core_bvh_parse
from core.maths import transforms as tf
import bl_helpers as H


def both(path, **kw):
    """Import with ours and with Blender's importer, same options; world heads on
    every key frame, bones matched by name."""
    ours = H.import_ours(path, **kw)
    ref = H.import_blender(path, **kw)
    start, end = ref.animation_data.action.frame_range
    frames = np.arange(int(start), int(end) + 1)
    names = [b.name for b in ref.data.bones]
    return ours, ref, H.pose_heads(ours, frames, names), H.pose_heads(ref, frames, names)


def test_sample_take_matches_blender_every_frame():
    ours, ref, a, b = both(SAMPLE_TAKE, global_scale=0.01)
    assert a.shape == (5562, 23, 3)
    err = np.abs(a - b).max()
    assert err < 1e-4, err
    # The motion is real: the hips travel metres, so agreement is not trivial.
    assert np.ptp(a[:, 0, 0]) > 1.0
    # Same rest geometry as Blender's importer, bone by bone.
    for bone in ref.data.bones:
        mine = ours.data.bones[bone.name]
        assert np.allclose(np.array(mine.matrix_local), np.array(bone.matrix_local), atol=1e-4)
    # Quaternion keys on every frame, read back in bulk.
    action = ours.animation_data.action
    assert action.frame_range[:] == pytest.approx((1.0, 5562.0))
    assert all(pb.rotation_mode == "QUATERNION" for pb in ours.pose.bones)


def _skeleton(order, six_channels):
    """A small humanoid chain with a branch, zero-length root offset and an
    end-site-less leaf, for synthetic files."""
    names = ["Hips", "Spine", "Head", "LeftLeg", "LeftFoot", "RightLeg", "RightFoot", "Tail"]
    parents = [-1, 0, 1, 0, 3, 0, 5, 0]
    offsets = np.array([[0, 0, 0], [0, 10, 0], [0, 20, 1], [8, -2, 0], [0, -40, 0],
                        [-8, -2, 0], [0, -40, 0], [0, 0, 0]], dtype=float)
    rot = tuple("%srotation" % a for a in order)
    pos = ("Xposition", "Yposition", "Zposition")
    channels = []
    for j in range(len(names)):
        if j == 0 or six_channels:
            channels.append(pos + rot)
        elif names[j] == "Tail":
            channels.append(())  # a joint with no channels
        else:
            channels.append(rot)
    return names, parents, offsets, channels


def _motion(offsets, channels, frames, seed):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, frames)[:, None]
    cols = []
    for j, chans in enumerate(channels):
        for c in chans:
            if c.endswith("position"):
                k = "XYZ".index(c[0])
                base = offsets[j, k] + (30.0 * np.sin(t[:, 0] * (k + 1)) if j == 0 else 0.0)
                wobble = rng.uniform(0.5, 2.0) * np.sin(t[:, 0] * rng.uniform(1, 3)) if j else 0.0
                cols.append(base + wobble)
            else:
                amp = rng.uniform(20, 170)
                cols.append(amp * np.sin(t[:, 0] * rng.uniform(0.5, 3.0) + rng.uniform(0, 6)))
    return np.column_stack(cols)


@pytest.mark.parametrize("order,fps,scale,six", [
    ("ZYX", 120, 0.01, False),
    ("XZY", 30, 0.0254, True),     # inches, 6 channels everywhere
    ("YXZ", 60, 1.0, False),
    ("ZXY", 24, 0.01, True),
])
def test_synthetic_files_match_blender(tmp_path, order, fps, scale, six):
    names, parents, offsets, channels = _skeleton(order, six)
    motion = _motion(offsets, channels, 90, seed=len(order) + fps)
    path = write_bvh(str(tmp_path / ("take_%s.bvh" % order)), names, parents, offsets, channels,
                     motion, 1.0 / fps, end_sites={2: (0, 12, 0), 4: (0, -3, 9), 6: (0, -3, 9)},
                     newline="\r\n" if six else "\n", indent="\t" if fps == 30 else "  ")
    _ours, _ref, a, b = both(path, global_scale=scale)
    assert np.abs(a - b).max() < 1e-4


def test_axis_options_match_blender(tmp_path):
    names, parents, offsets, channels = _skeleton("ZXY", False)
    path = write_bvh(str(tmp_path / "axes.bvh"), names, parents, offsets, channels,
                     _motion(offsets, channels, 40, 3), 1 / 60)
    _o, _r, a, b = both(path, global_scale=0.01, axis_forward="Y", axis_up="Z")
    assert np.abs(a - b).max() < 1e-4


def test_fps_scale_places_keys_like_blender(tmp_path):
    names, parents, offsets, channels = _skeleton("ZXY", False)
    path = write_bvh(str(tmp_path / "fast.bvh"), names, parents, offsets, channels,
                     _motion(offsets, channels, 61, 5), 1 / 120)
    bpy.context.scene.render.fps = 24
    ours = H.import_ours(path, global_scale=0.01, use_fps_scale=True, frame_start=3)
    ref = H.import_blender(path, global_scale=0.01, use_fps_scale=True, frame_start=3)
    assert np.allclose(H.key_times(ours), H.key_times(ref), atol=1e-4)
    assert H.key_times(ours)[-1] == pytest.approx(3 + 60 * 24 / 120)


def test_update_scene_options(tmp_path):
    scene = bpy.context.scene
    scene.render.fps, scene.frame_end = 24, 10
    H.import_ours(SAMPLE_TAKE, global_scale=0.01, update_scene_fps=True, update_scene_duration=True)
    assert scene.render.fps == 60 and scene.render.fps_base == 1.0  # 0.016667 s is 60 fps, rounded
    assert scene.frame_end == 5562


def _mirror_file(src, dst):
    """The sample written as a left-handed tool would: z negated, and each
    rotation R replaced by M R M (M = diag(1, 1, -1)), i.e. x and y angles negated."""
    data = core_bvh_parse.read_bvh(src)
    names, parents, offsets, channels, ends = sample_layout(data)
    motion = data.motion.copy()
    for j, chans in enumerate(channels):
        for k, c in enumerate(chans):
            col = data.channel_start[j] + k
            if c in ("Zposition", "Xrotation", "Yrotation"):
                motion[:, col] *= -1.0
    offsets[:, 2] *= -1.0
    ends = {j: (e[0], e[1], -e[2]) for j, e in ends.items()}
    return write_bvh(dst, names, parents, offsets, channels, motion[:600], data.frame_time, end_sites=ends)


def test_left_handed_file_imports_as_mirror(tmp_path):
    mirrored = _mirror_file(SAMPLE_TAKE, str(tmp_path / "left.bvh"))
    frames = np.arange(1, 601)
    original = H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    names = [b.name for b in original.data.bones]
    ref = H.pose_heads(original, frames, names)
    # Read as left-handed, the mirrored numbers describe the original motion.
    as_left = H.import_ours(mirrored, global_scale=0.01, handedness="LEFT")
    assert np.abs(H.pose_heads(as_left, frames, names) - ref).max() < 1e-4
    # Read as right-handed they are its mirror image: BVH z is Blender -y.
    as_right = H.import_ours(mirrored, global_scale=0.01, handedness="RIGHT")
    mirror = ref * np.array([1.0, -1.0, 1.0])
    assert np.abs(H.pose_heads(as_right, frames, names) - mirror).max() < 1e-4


def test_tpose_file_imports_one_frame():
    from sample_paths import SAMPLE_TPOSE

    obj = H.import_ours(SAMPLE_TPOSE, global_scale=0.01)
    assert obj.animation_data.action.frame_range[:] == pytest.approx((1.0, 1.0)) or \
        obj.animation_data.action.frame_range[1] - obj.animation_data.action.frame_range[0] <= 1.0
    heads = H.pose_heads(obj, [1])[0]
    names = [pb.name for pb in obj.pose.bones]
    # T-pose: the wrists stand level with the shoulders, far to each side.
    lw, rw = heads[names.index("LeftWrist")], heads[names.index("RightWrist")]
    ls = heads[names.index("LeftShoulder")]
    assert abs(lw[2] - ls[2]) < 0.1 and abs(lw[0] - rw[0]) > 1.0


def test_load_tpose_stores_rotations():
    from sample_paths import SAMPLE_TPOSE

    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    stored = obj.data.motion_matching.tpose
    assert len(stored) == 23
    # Cross-check with Blender: import the T-pose and read its pose matrices.
    tpose_obj = H.import_ours(SAMPLE_TPOSE, global_scale=0.01)
    bpy.context.scene.frame_set(1)
    for item in stored:
        m = np.array(tpose_obj.pose.bones[item.name].matrix)[:3, :3]
        q = tf.matrix_to_quat(m)
        assert abs(abs(np.dot(q, np.array(item.rotation))) - 1.0) < 1e-5, item.name
