"""Mirror Takes: the database holds each take's mirror image; a take and its
mirror give mirror-image bakes along mirror-image paths."""

import json
import math

import bpy
import numpy as np
import pytest

from core.skeleton import mirror as core_mirror
from core.maths import transforms as tf
from sample_paths import SAMPLE_TAKE
import bl_helpers as H


def _store():
    return H.addon_module("bridge.database.store")


def _sample_listed():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    return obj


def test_the_option_reaches_the_operator_and_the_rows_are_mirrored(tmp_path):
    obj = _sample_listed()
    settings = bpy.context.scene.motion_matching
    # Tag a turn so that the mirror's tag can be checked.
    tag = obj.animation_data.action.motion_matching.tags.add()
    tag.name, tag.frame_start, tag.frame_end = "turn_left", 100, 160
    assert settings.mirror_takes == "AUTO"    # the default
    assert bpy.ops.motion_matching.build_database(mirror_takes="ON") == {"FINISHED"}
    assert settings.mirror_takes == "ON" and not settings.database_stale and settings.database_note == ""
    assert "and their mirror images" in settings.database_summary
    database = _store().load(bpy.context.scene)
    db = database.matching
    n = int(db.clip_offsets[1])
    assert db.num_rows == 2 * n and list(database.clips.mirrored) == [False, True]
    assert [database.clips.is_mirror(c) for c in (0, 1)] == [False, True]
    assert database.clips.actions == [obj.animation_data.action.name] * 2
    tags = [[(t.name, t.start, t.end) for t in clip] for clip in database.tags]
    first = int(database.clips.frame_starts[0])
    assert ("turn_left", 100 - first, 160 - first) in tags[0]
    assert ("turn_right", 100 - first, 160 - first) in tags[1]
    assert not any(t[0] == "turn_left" for t in tags[1])
    # Contacts swap sides, row for row.
    assert np.array_equal(db.contacts[n:], db.contacts[:n, ::-1])
    # Features: x turns over and left/right swap. The take's skeleton is left/right
    # symmetric to 0.03 mm and poses are stored in float32: 1e-3 (m, m/s) is ample.
    names = database.skeleton.names
    pairs = core_mirror.pair_bones(names, database.skeleton.parents)
    cols, signs = core_mirror.feature_mirror(db.spec, lambda b: names[pairs[names.index(b)]])
    assert np.abs(db.raw[n:] - db.raw[:n][:, cols] * signs).max() < 1e-3
    assert np.abs(db.raw[n:] - db.raw[:n]).max() > 0.1   # not the same rows
    # The stored toes of a mirrored row are the reflection of the other side's, in world space.
    plane = core_mirror.root_plane(database.skeleton.rest[names.index(database.feature_bones.root)])
    toes = database.toe_positions
    assert np.abs(toes[n:] - core_mirror.mirror_points(toes[:n, ::-1], plane)).max() < 1e-3
    # Root motion: mirrored facings, and the same distance travelled per row.
    step = np.linalg.norm(np.diff(database.root.positions[:, :2], axis=0), axis=1)
    np.testing.assert_allclose(step[n:], step[:n - 1], atol=1e-4)
    facings = database.root.facings
    turn = np.diff(np.unwrap(np.arctan2(facings[:, 0], -facings[:, 1])))
    np.testing.assert_allclose(turn[n:], -turn[:n - 1], atol=1e-4)
    # Export and import keep the mirrored rows.
    path = str(tmp_path / "db.npz")
    assert bpy.ops.motion_matching.export_database(filepath=path) == {"FINISHED"}
    _store().clear(bpy.context.scene)
    assert bpy.ops.motion_matching.import_database(filepath=path) == {"FINISHED"}
    database2 = _store().load(bpy.context.scene)
    assert database2.matching.num_rows == 2 * n and list(database2.clips.mirrored) == [False, True]
    # The imported database does not depend on the list's settings; one built
    # here does: turning the option off makes it out of date; built off, it is
    # the take alone.
    settings.mirror_takes = "OFF"
    assert not settings.database_stale
    settings.mirror_takes = "AUTO"
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    assert not settings.database_stale and _store().load(bpy.context.scene).matching.num_rows == 2 * n
    settings.mirror_takes = "OFF"
    assert settings.database_stale
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    database3 = _store().load(bpy.context.scene)
    assert database3.matching.num_rows == n and database3.clips.mirrored is None and settings.mirror_takes == "OFF"
    assert not database3.clips.is_mirror(0) and settings.database_note == ""
    # From the panel (invoke) the scene's setting is the operator's.
    settings.mirror_takes = "AUTO"
    assert bpy.ops.motion_matching.build_database("INVOKE_DEFAULT") == {"FINISHED"}
    assert _store().load(bpy.context.scene).matching.num_rows == 2 * n and not settings.database_stale


def _curving_path(sign):
    """A path that starts walking at once and curves one way (so no search starts
    from a query that is its own mirror image, where either side would do)."""
    pts = []
    for i in range(110):
        t = 0.1 * i
        a = 0.25 * t + 0.02 * t * t
        pts.append({"t": t, "x": sign * (1.5 * (1 - math.cos(a)) + 0.3 * math.sin(0.5 * t)),
                    "y": -1.5 * math.sin(a) - 0.4 * t})
    return {"points": pts}


def _bake_joints(obj, path, tmp_path, name):
    scene = bpy.context.scene
    before = set(bpy.data.objects.keys())
    file = str(tmp_path / (name + ".json"))
    with open(file, "w") as fh:
        json.dump(path, fh)
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="FILE", filepath=file, frame_start=1,
                                                           update_scene_range=True) == {"FINISHED"}
    ctrl = [bpy.data.objects[n] for n in bpy.data.objects.keys() if n not in before][0]
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = obj
    report = str(tmp_path / (name + "_report.json"))
    assert bpy.ops.motion_matching.bake(controller=ctrl.name, armature=obj.name, report_path=report) == {"FINISHED"}
    arm = H.addon_module("bridge.blender.armature_data")
    names, parents = arm.bone_order(obj.data)
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    loc, quat, scale = arm.pose_channels(obj, obj.animation_data.action, frames, names)
    pose = tf.pose_fk(parents, arm.rest_matrices(obj.data, names), arm.basis_matrices(loc, quat, scale),
                      arm.rest_offsets(obj.data, names))
    world = (np.asarray(obj.matrix_world) @ pose)[:, :, :3, 3]
    bpy.data.objects.remove(ctrl)
    with open(report) as fh:
        return names, parents, world, json.load(fh)


@pytest.mark.parametrize("mirror_takes", ["AUTO", "OFF"])
def test_a_take_and_its_mirror_bake_mirror_images_along_mirror_paths(tmp_path, mirror_takes):
    obj = _sample_listed()
    bpy.context.scene.render.fps = 30
    assert bpy.ops.motion_matching.build_database(mirror_takes=mirror_takes) == {"FINISHED"}
    names, parents, a, rep_a = _bake_joints(obj, _curving_path(1.0), tmp_path, "path")
    _names, _parents, b, rep_b = _bake_joints(obj, _curving_path(-1.0), tmp_path, "reflected")
    # The reflected bake, reflected back across x = 0 (the paths' mirror plane) with its
    # left and right swapped, against the first bake: every joint on every frame.
    pairs = core_mirror.pair_bones(names, parents)
    back = b[:, pairs] * np.array([-1.0, 1.0, 1.0])
    off = np.linalg.norm(back - a, axis=-1)
    if mirror_takes != "OFF":
        # The same choices, mirrored: the mirrored rows are the take's reflection up to
        # its skeleton's 0.03 mm of left/right asymmetry and float32 storage (features
        # within 2e-4), far below any cost gap a search decides on; 1 mm per joint.
        assert (rep_a["searches"], rep_a["jumps"]) == (rep_b["searches"], rep_b["jumps"])
        assert off.max() < 1e-3, off.max()
        # The sliding figure counts steps under height and speed thresholds, so joints
        # 1 mm apart can move a step across one: the two figures agree within 5%.
        assert rep_a["contact_sliding_ratio"] == pytest.approx(rep_b["contact_sliding_ratio"], rel=0.05)
    else:
        # Without the mirror the take turns better to one side: the bakes differ.
        assert off.max() > 0.05, off.max()


def _add_left_eye(obj):
    """A left eye with no right one: the skeleton's sides no longer pair."""
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    eye = obj.data.edit_bones.new("LeftEye")
    eye.head, eye.tail = (0.03, -0.08, 1.7), (0.03, -0.1, 1.7)
    eye.parent = obj.data.edit_bones["Head"]
    bpy.ops.object.mode_set(mode="OBJECT")


def test_a_skeleton_whose_sides_do_not_pair_builds_by_default_and_says_why():
    obj = _sample_listed()
    _add_left_eye(obj)
    settings = bpy.context.scene.motion_matching
    assert settings.mirror_takes == "AUTO"
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    database = _store().load(bpy.context.scene)
    assert database.clips.mirrored is None and len(database.clips.actions) == 1
    assert settings.database_note == (
        "No mirror images (Mirror Takes is Automatic), because the skeleton cannot be mirrored: bone LeftEye names a "
        "side, but there is no bone of the same name on the other side.")
    assert "without mirror images" in settings.database_summary and settings.mirror_takes == "AUTO"


def test_a_skeleton_whose_sides_do_not_pair_is_refused_with_on_and_nothing_changes():
    obj = _sample_listed()
    settings = bpy.context.scene.motion_matching
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    settings.mirror_takes = "AUTO"
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}   # the sample mirrors
    assert len(_store().load(bpy.context.scene).clips.actions) == 2
    _add_left_eye(obj)
    store = _store()
    before = store.raw_bytes(bpy.context.scene)
    stale_before, summary_before = settings.database_stale, settings.database_summary
    with pytest.raises(RuntimeError, match="The skeleton cannot be mirrored: bone LeftEye names a side, but "
                                           "there is no bone of the same name on the other side; set Mirror "
                                           "Takes to Automatic or Off \\(Database panel\\) to build from the "
                                           "takes alone."):
        bpy.ops.motion_matching.build_database(mirror_takes="ON")
    assert store.raw_bytes(bpy.context.scene) == before
    assert settings.mirror_takes == "AUTO" and settings.database_stale == stale_before
    assert settings.database_summary == summary_before and settings.database_note == ""


@pytest.mark.parametrize("stored, choice", [(0, "OFF"), (1, "AUTO")])
def test_files_saved_with_the_old_switch_load_as_off_and_automatic(tmp_path, stored, choice):
    # Mirror Takes was a switch, kept in the file as 0 or 1.
    settings = bpy.context.scene.motion_matching
    settings["mirror_takes"] = stored
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.context.scene.motion_matching.mirror_takes == "AUTO"   # a new scene: the default
    bpy.ops.wm.open_mainfile(filepath=path)
    assert bpy.context.scene.motion_matching.mirror_takes == choice


# ----------------------------------------------------------------------------
# A rest pose that is not a T-pose


def _euler_zxy(m):
    """Degrees (z, x, y) with Rz @ Rx @ Ry = m (the BVH order Zrotation Xrotation Yrotation)."""
    x = np.arcsin(np.clip(m[..., 2, 1], -1.0, 1.0))
    y = np.arctan2(-m[..., 2, 0], m[..., 2, 2])
    z = np.arctan2(-m[..., 0, 1], m[..., 1, 1])
    return np.degrees(np.stack([z, x, y], axis=-1))


def _turn_x_onto(d):
    """A rotation taking +X onto the unit vector ``d`` (Rodrigues)."""
    x = np.array([1.0, 0.0, 0.0])
    axis = np.cross(x, d)
    s, c = np.linalg.norm(axis), float(x @ d)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([-1.0, -1.0, 1.0])
    k = axis / s
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * cross + (1.0 - c) * cross @ cross


def _write_x_rest_twin(path):
    """The sample take on a skeleton whose rest bones lie along their parent's X
    axis (Bandai Namco style): each joint's frame turned by a constant C_j (the
    hips keep theirs), offsets C_q^T o_j, rotations C_q^T R_j C_j; the same
    joints in world space on every frame."""
    from core.io import bvh_convert, bvh_parse
    from tools import bvh_writer

    bvh = bvh_parse.read_bvh(SAMPLE_TAKE)
    names, parents, offsets, _channels, ends = bvh_writer.sample_layout(bvh)
    motion = bvh_convert.to_blender(bvh, 1.0)
    local = tf.quat_to_matrix(motion.rotations)
    J = len(names)
    turn = np.tile(np.eye(3), (J, 1, 1))
    for j in range(J):
        kids = [k for k in range(J) if parents[k] == j]
        if parents[j] >= 0 and kids:
            turn[j] = _turn_x_onto(offsets[kids[0]] / np.linalg.norm(offsets[kids[0]]))
    up = np.array([turn[p] if p >= 0 else np.eye(3) for p in parents])
    offsets_x = np.einsum("jki,jk->ji", up, offsets)
    ends_x = {j: tuple(turn[j].T @ np.asarray(e)) for j, e in ends.items()}
    local_x = np.swapaxes(up, -1, -2)[None] @ local @ turn[None]
    root = int(np.nonzero(np.asarray(parents) < 0)[0][0])
    columns = [motion.offsets[root][None] + motion.translations[:, root]]
    channels = []
    for j in range(J):
        columns.append(_euler_zxy(local_x[:, j]))
        channels.append((("Xposition", "Yposition", "Zposition") if j == root else ())
                        + ("Zrotation", "Xrotation", "Yrotation"))
    rows = np.concatenate(columns, axis=1)
    bvh_writer.write_bvh(path, names, parents, offsets_x, channels, rows, bvh.frame_time, end_sites=ends_x)
    twin = bvh_convert.to_blender(bvh_parse.read_bvh(path), 1.0)
    # The twin plays the same joints (to the file's 6 decimals) from a rest pose that is no T-pose.
    assert np.abs(twin.world_positions() - motion.world_positions()).max() < 1e-3   # cm
    assert np.abs(twin.heads - motion.heads).max() > 50.0
    return path


def _mirrored_joints(path):
    """World joint positions (F, J, 3) of the mirrored rows of a database built
    from ``path`` with Mirror Takes On, with the bone names."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = _sample_listed() if path == SAMPLE_TAKE else H.import_ours(path, global_scale=0.01, add_virtual_root=True)
    if path != SAMPLE_TAKE:
        assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database(mirror_takes="ON") == {"FINISHED"}
    database = _store().load(bpy.context.scene)
    first = int(database.matching.clip_offsets[1])
    sk, poses = database.skeleton, database.poses
    basis = tf.compose(poses.locations[first:].astype(np.float64),
                       tf.quat_to_matrix(poses.rotations[first:].astype(np.float64)))
    world = np.asarray(obj.matrix_world) @ tf.pose_fk(sk.parents, sk.rest, basis, sk.offsets)
    return list(sk.names), world[..., :3, 3]


def test_a_rest_pose_along_x_mirrors_to_the_same_joints_as_the_t_pose(tmp_path):
    twin = _write_x_rest_twin(str(tmp_path / "x_rest.bvh"))
    names_x, joints_x = _mirrored_joints(twin)
    names, joints = _mirrored_joints(SAMPLE_TAKE)
    assert names_x == names and joints_x.shape == joints.shape
    off = np.linalg.norm(joints_x - joints, axis=-1)
    assert off.max() < 1e-3, off.max()   # within 1 mm on every joint of every mirrored frame
