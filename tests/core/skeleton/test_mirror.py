"""Tests of core.skeleton.mirror: the mirror image of a take on a skeleton whose bone axes point anywhere."""

import numpy as np
import pytest

from core.database.clip_features import Clip, clip_features
from core.database.feature_spec import FeatureGroup, FeatureSpec, default_spec, feature_names
from core.skeleton import mirror, mirror_maps
from core.maths import transforms as tf
from core.skeleton import virtual_root as vr

# A small humanoid, symmetric about the plane x = 0, its bones' axes turned at
# random (left and right differently), so nothing may assume bone axes.
NAMES = ["Root", "Hips", "Chest", "LeftHip", "LeftKnee", "LeftAnkle", "LeftToe",
         "RightHip", "RightKnee", "RightAnkle", "RightToe", "LeftShoulder", "RightShoulder", "Head"]
PARENTS = np.array([-1, 0, 1, 1, 3, 4, 5, 1, 7, 8, 9, 2, 2, 2])
HEADS = np.array([[0, 0, 0], [0, 0, 1.0], [0, 0.02, 1.3], [0.1, 0, 0.95], [0.12, 0.01, 0.5], [0.12, 0.02, 0.08],
                  [0.13, -0.12, 0.02], [-0.1, 0, 0.95], [-0.12, 0.01, 0.5], [-0.12, 0.02, 0.08],
                  [-0.13, -0.12, 0.02], [0.2, 0.02, 1.45], [-0.2, 0.02, 1.45], [0, 0.02, 1.6]])
PAIRS = [0, 1, 2, 7, 8, 9, 10, 3, 4, 5, 6, 12, 11, 13]


def random_rotations(rng, shape):
    q = rng.normal(size=shape + (4,))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def skeleton(rng):
    rest = np.tile(np.eye(4), (len(NAMES), 1, 1))
    rest[:, :3, :3] = tf.quat_to_matrix(random_rotations(rng, (len(NAMES),)))
    # The root's rest: bone Y along -Y (forward), Z up, X the plane's normal.
    rest[0, :3, :3] = np.diag([-1.0, -1.0, 1.0])
    rest[:, :3, 3] = HEADS
    return rest


def take(rng, frames=40):
    """Channels of a made-up take: root walking and turning, every bone turning, hips bobbing."""
    t = np.arange(frames) / 30.0
    loc = 0.05 * rng.normal(size=(frames, len(NAMES), 3))
    loc[:, 0] = np.column_stack([0.8 * t, 0.3 * t * t, 0 * t])
    quat = random_rotations(rng, (frames, len(NAMES)))
    # Smooth along time (so velocities and the trajectory mean something) then normalise.
    quat = tf.quat_unroll(quat, axis=0)
    quat = np.cumsum(quat, axis=0)
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    quat[:, 0] = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.7 * t)
    return loc, quat


def fk(rest, loc, quat):
    basis = tf.compose(loc, tf.quat_to_matrix(quat))
    return tf.pose_fk(PARENTS, rest, basis)


def test_pairs_by_name():
    assert list(mirror.pair_bones(NAMES, PARENTS)) == PAIRS
    names = ["ROOT", "pelvis", "thigh.L", "thigh.R", "l_hand", "r_hand", "LHipJoint", "RHipJoint",
             "mixamorig:LeftFoot", "mixamorig:RightFoot", "Bip01 L Thigh", "Bip01 R Thigh", "RIG_Spine", "Head_LOD"]
    pairs = mirror.pair_bones(names, [-1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    assert list(pairs) == [0, 1, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 12, 13]


def test_unpaired_side_is_refused_in_a_sentence():
    names = NAMES[:-1] + ["LeftEye"]
    with pytest.raises(mirror.MirrorError, match="LeftEye names a side, but there is no bone"):
        mirror.pair_bones(names, PARENTS)
    parents = PARENTS.copy()
    parents[10] = 5   # RightToe under LeftAnkle
    with pytest.raises(mirror.MirrorError, match="hang from bones that are not each other's counterparts"):
        mirror.pair_bones(NAMES, parents)


def test_lopsided_rest_is_refused():
    rng = np.random.default_rng(1)
    rest = skeleton(rng)
    rest[3, :3, 3] += [0.3, 0, 0]   # the left hip 30 cm wide
    m = mirror.root_plane(rest[0])
    with pytest.raises(mirror.MirrorError, match="LeftHip lies 30 cm from the mirror image"):
        mirror.check_rest(NAMES, rest, np.array(PAIRS), m)
    mirror.check_rest(NAMES, skeleton(rng), np.array(PAIRS), m)   # symmetric: accepted


def test_mirrored_twice_is_the_pose_itself():
    rng = np.random.default_rng(2)
    rest = skeleton(rng)
    loc, quat = take(rng)
    pairs = np.array(PAIRS)
    maps = mirror.channel_maps(rest, pairs, mirror.root_plane(rest[0]))
    loc1, quat1 = mirror.mirror_channels(loc, quat, pairs, maps)
    loc2, quat2 = mirror.mirror_channels(loc1, quat1, pairs, maps)
    np.testing.assert_allclose(loc2, loc, atol=1e-12)
    same = np.abs(np.einsum("fjk,fjk->fj", quat2, quat))
    np.testing.assert_allclose(same, 1.0, atol=1e-12)
    # Once is not the pose itself (the test can fail).
    assert np.abs(loc1 - loc).max() > 0.01


def test_mirrored_joints_are_the_reflection_of_the_original():
    rng = np.random.default_rng(3)
    rest = skeleton(rng)
    loc, quat = take(rng)
    pairs = np.array(PAIRS)
    m = mirror.root_plane(rest[0])
    maps = mirror.channel_maps(rest, pairs, m)
    loc_m, quat_m = mirror.mirror_channels(loc, quat, pairs, maps)
    pose, pose_m = fk(rest, loc, quat), fk(rest, loc_m, quat_m)
    want = mirror.mirror_points(pose[:, pairs][:, :, :3, 3], m)
    assert np.abs(pose_m[:, :, :3, 3] - want).max() < 1e-6
    # Orientations too: the mirrored bone's frame is M P_p K_b.
    k = np.linalg.inv(rest[pairs]) @ m @ rest
    np.testing.assert_allclose(pose_m[:, :, :3, :3], (m @ pose[:, pairs] @ k)[:, :, :3, :3], atol=1e-9)
    assert np.abs(pose_m[:, :, :3, 3] - pose[:, :, :3, 3]).max() > 0.05


def test_rest_pose_mirrors_onto_itself():
    rng = np.random.default_rng(4)
    rest = skeleton(rng)
    pairs = np.array(PAIRS)
    maps = mirror.channel_maps(rest, pairs, mirror.root_plane(rest[0]))
    loc = np.zeros((1, len(NAMES), 3))
    quat = np.tile([1.0, 0, 0, 0], (1, len(NAMES), 1))
    loc_m, quat_m = mirror.mirror_channels(loc, quat, pairs, maps)
    np.testing.assert_allclose(loc_m, 0.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(quat_m[..., 0]), 1.0, atol=1e-12)


def clip_of(rest, loc, quat, name):
    pose = fk(rest, loc, quat)
    character = vr.character_frames(pose[:, 0])
    return Clip(name=name, fps=30.0, joint_names=NAMES, positions=pose[:, :, :3, 3],
                   root_pos=character[:, :3, 3], root_rot=tf.matrix_to_quat(character[:, :3, :3]))


def test_features_of_the_mirror_are_the_mirrored_features():
    rng = np.random.default_rng(5)
    rest = skeleton(rng)
    loc, quat = take(rng)
    pairs = np.array(PAIRS)
    maps = mirror.channel_maps(rest, pairs, mirror.root_plane(rest[0]))
    spec = default_spec("LeftAnkle", "RightAnkle", "Hips")
    spec.groups.append(FeatureGroup("hands", "bone_position", bones=["LeftShoulder", "RightShoulder", "Head"]))
    raw = clip_features(spec, clip_of(rest, loc, quat, "take"))
    raw_m = clip_features(spec, clip_of(rest, *mirror.mirror_channels(loc, quat, pairs, maps), "mirror"))
    cols, signs = mirror.feature_mirror(spec, lambda b: NAMES[PAIRS[NAMES.index(b)]])
    np.testing.assert_allclose(raw_m, raw[:, cols] * signs, atol=1e-9)
    assert np.abs(raw_m - raw).max() > 0.05   # the mirror does change the features
    # The trajectory's sideways columns turn over (the take curves, so they are not zero).
    x = [k for k, name in enumerate(feature_names(spec)) if name.startswith("traj.pos") and name.endswith("x")]
    assert x and np.abs(raw[:, x]).max() > 0.05
    np.testing.assert_allclose(raw_m[:, x], -raw[:, x], atol=1e-9)


def test_feature_group_without_counterpart_is_refused():
    spec = FeatureSpec(groups=[FeatureGroup("one foot", "bone_position", bones=["LeftAnkle"])])
    with pytest.raises(mirror.MirrorError, match="reads LeftAnkle but not its counterpart RightAnkle"):
        mirror.feature_mirror(spec, lambda b: NAMES[PAIRS[NAMES.index(b)]])


def test_tag_names_swap_sides():
    assert mirror.mirror_tag_name("turn_left") == "turn_right"
    assert mirror.mirror_tag_name("strafe_right") == "strafe_left"
    assert mirror.mirror_tag_name("Left_hop_RIGHT") == "Right_hop_LEFT"
    assert mirror.mirror_tag_name("walk") == "walk"


# ----------------------------------------------------------------------------
# A rest pose that is not a T-pose


def _turn_x_onto(d):
    """A rotation taking +X onto the unit direction ``d``."""
    x = np.array([1.0, 0.0, 0.0])
    axis = np.cross(x, d)
    s, c = np.linalg.norm(axis), float(x @ d)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([-1.0, -1.0, 1.0])
    k = axis / s
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * cross + (1.0 - c) * cross @ cross


def x_rest_twin(rest, loc, quat):
    """The same skeleton playing the same take in world space, on a rest pose in
    which every bone lies along its parent's X axis (Bandai Namco style: each
    bone's first child along +X, every bone's rest frame the root's).

    Each bone's frame is the first skeleton's turned by a constant ``C_j``; the
    offsets become ``C_q^T t_j`` with no rest turn, and the channels
    ``O'_j^-1 C_q^T O_j basis_j C_j``. Returns (rest, loc, quat, C)."""
    offsets = tf.rest_offsets_from_matrices(PARENTS, rest)
    J = len(NAMES)
    turn = np.tile(np.eye(3), (J, 1, 1))
    for j in range(1, J):   # the root keeps its frame (the mirror plane is its own)
        kids = np.nonzero(PARENTS == j)[0]
        if len(kids):
            d = offsets[kids[0], :3, 3]
            turn[j] = _turn_x_onto(d / np.linalg.norm(d))
    offsets_x = np.tile(np.eye(4), (J, 1, 1))
    offsets_x[0] = rest[0]
    rest_x = np.empty_like(rest)
    rest_x[0] = rest[0]
    for j in range(1, J):
        q = PARENTS[j]
        offsets_x[j, :3, 3] = turn[q].T @ offsets[j, :3, 3]
        rest_x[j] = rest_x[q] @ offsets_x[j]
    c_q = tf.compose(None, turn[np.maximum(PARENTS, 0)])
    c_q[0] = np.eye(4)
    basis = tf.compose(loc, tf.quat_to_matrix(quat))
    basis_x = np.linalg.inv(offsets_x)[None] @ np.swapaxes(c_q, -1, -2)[None] @ offsets[None] @ basis \
        @ tf.compose(None, turn)[None]
    return rest_x, basis_x[..., :3, 3], tf.quat_unroll(tf.matrix_to_quat(basis_x[..., :3, :3]), axis=0), turn


@pytest.mark.parametrize("symmetric_frame", [True, False])
def test_a_rest_pose_along_x_mirrors_like_the_t_pose(symmetric_frame):
    rng = np.random.default_rng(6)
    rest = skeleton(rng)
    loc, quat = take(rng)
    if symmetric_frame:   # the take starts in its T-pose (the rest of the first skeleton)
        loc[0], quat[0] = 0.0, [1.0, 0.0, 0.0, 0.0]
    rest_x, loc_x, quat_x, turn = x_rest_twin(rest, loc, quat)
    pose, pose_x = fk(rest, loc, quat), fk(rest_x, loc_x, quat_x)
    # The twin: every bone along its parent's X axis at rest, the same joints on every frame.
    local = np.linalg.inv(rest_x[PARENTS[1:]]) @ rest_x[1:]
    first = [j for j in range(2, len(NAMES)) if list(PARENTS).index(PARENTS[j]) == j]   # not the root's child
    assert np.abs(local[np.array(first) - 1][:, 1:3, 3]).max() < 1e-12
    np.testing.assert_allclose(pose_x[..., :3, 3], pose[..., :3, 3], atol=1e-9)
    pairs, m = np.array(PAIRS), mirror.root_plane(rest[0])
    with pytest.raises(mirror.MirrorError, match="lies"):
        mirror.check_rest(NAMES, rest_x, pairs, m)   # its rest pose is far from symmetric
    maps = mirror_maps.channel_map(NAMES, PARENTS, rest, pairs, m)
    assert maps.reference == "rest pose"
    maps_x = mirror_maps.channel_map(NAMES, PARENTS, rest_x, pairs, m,
                                     references=[("a frame of the take", pose_x)])
    assert maps_x.reference == "a frame of the take"
    mirrored = fk(rest, *mirror.mirror_channels(loc, quat, pairs, maps))
    mirrored_x = fk(rest_x, *mirror.mirror_channels(loc_x, quat_x, pairs, maps_x))
    want = mirror.mirror_points(pose[:, pairs][:, :, :3, 3], m)
    assert np.abs(mirrored[..., :3, 3] - want).max() < 1e-9
    assert np.abs(mirrored_x[..., :3, 3] - mirrored[..., :3, 3]).max() < 1e-6   # within 1 mm, and far less
    assert np.abs(mirrored_x[..., :3, 3] - pose[..., :3, 3]).max() > 0.05       # the mirror moved them
    if symmetric_frame:
        # A symmetric stored T-pose (the first group) is the reference; a lopsided one
        # gives way to the most symmetric frame.
        tpose_first = mirror_maps.channel_map(NAMES, PARENTS, rest_x, pairs, m,
                                              references=[("stored T-pose", pose_x[:1]), ("frames", pose_x[1:])])
        assert tpose_first.reference == "stored T-pose"
        lopsided_first = mirror_maps.channel_map(NAMES, PARENTS, rest_x, pairs, m,
                                                 references=[("stored T-pose", pose_x[5:6]), ("frames", pose_x)])
        assert lopsided_first.reference == "frames"
        np.testing.assert_allclose(lopsided_first.right, maps_x.right, atol=1e-9)
        # With a symmetric reference the bones turn like the T-pose skeleton's too.
        np.testing.assert_allclose(mirrored_x[..., :3, :3], mirrored[..., :3, :3] @ turn[None], atol=1e-9)


def test_the_classic_maps_are_the_rest_pose_case():
    rng = np.random.default_rng(7)
    rest = skeleton(rng)
    pairs, m = np.array(PAIRS), mirror.root_plane(rest[0])
    maps = mirror_maps.channel_map(NAMES, PARENTS, rest, pairs, m)
    classic = mirror.channel_maps(rest, pairs, m)
    np.testing.assert_allclose(maps.right, classic, atol=1e-12)
    np.testing.assert_allclose(maps.left, np.swapaxes(classic, -1, -2), atol=1e-9)
    assert not maps.shift.any()


def test_lopsided_skeleton_is_refused_whatever_the_reference():
    rng = np.random.default_rng(8)
    rest = skeleton(rng)
    rest[3:7, :3, 3] += [0.3, 0, 0]   # the left leg 30 cm out
    pairs, m = np.array(PAIRS), mirror.root_plane(rest[0])
    loc, quat = take(rng)
    for references in ([], [("frames", fk(rest, loc, quat))]):
        with pytest.raises(mirror.MirrorError, match="(Left|Right)Hip lies (2[5-9]|30) cm from the mirror image of "
                                                     "its counterpart (Right|Left)Hip \\(its place relative to "
                                                     "Hips\\)"):
            mirror_maps.channel_map(NAMES, PARENTS, rest, pairs, m, references)
