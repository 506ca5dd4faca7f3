"""Retargeting in Blender: stored mappings and presets, T-poses, the Done-when
check (the sample take onto renamed A-pose copies of its own skeleton, every
joint within 1 mm on every frame after frame_set), the Rigify meta-rig and the
rig Rigify generates, and clean refusals."""

import json
import os

import bpy
import numpy as np
import pytest
from mathutils import Matrix

from sample_paths import SAMPLE_TAKE, SAMPLE_TPOSE
import bl_helpers as H

from core.skeleton import humanoid_joints


_rigify = {"on": False}


@pytest.fixture(scope="module")
def rigify(addon):
    yield _enable_rigify
    if _rigify["on"]:
        bpy.ops.preferences.addon_disable(module="rigify")
        _rigify["on"] = False


def _enable_rigify():
    if not _rigify["on"]:
        bpy.ops.preferences.addon_enable(module="rigify")
        _rigify["on"] = True


# ----------------------------------------------------------------------------
# Helpers

SAMPLE_MAP = {
    "Hips": "Hips", "Spine": "Chest", "Chest": "Chest2", "UpperChest": "Chest4", "Neck": "Neck", "Head": "Head",
    **{s + j: s + b for s in ("Left", "Right") for j, b in (
        ("Shoulder", "Collar"), ("UpperArm", "Shoulder"), ("LowerArm", "Elbow"), ("Hand", "Wrist"),
        ("UpperLeg", "Hip"), ("LowerLeg", "Knee"), ("Foot", "Ankle"), ("Toes", "Toe"))},
}


def _names(spine, neck, head, sided, side_fmt):
    out = {"Hips": spine[0], "Chest": spine[1], "Chest2": spine[2], "Chest3": spine[3], "Chest4": spine[4],
           "Neck": neck, "Head": head}
    for side in ("Left", "Right"):
        for ours, theirs in zip(("Collar", "Shoulder", "Elbow", "Wrist", "Hip", "Knee", "Ankle", "Toe"), sided):
            out[side + ours] = side_fmt(side, theirs)
    return out


MIXAMO = _names(["mixamorig:Hips", "mixamorig:Spine", "mixamorig:Spine1", "mixamorig:Spine2", "mixamorig:Spine3"],
                "mixamorig:Neck", "mixamorig:Head",
                ("Shoulder", "Arm", "ForeArm", "Hand", "UpLeg", "Leg", "Foot", "ToeBase"),
                lambda side, b: "mixamorig:" + side + b)
UNREAL = _names(["pelvis", "spine_01", "spine_02", "spine_03", "spine_04"], "neck_01", "head",
                ("clavicle", "upperarm", "lowerarm", "hand", "thigh", "calf", "foot", "ball"),
                lambda side, b: "%s_%s" % (b, side[0].lower()))
RIGIFY = dict(_names(["spine", "spine.001", "spine.002", "spine.003", "spine.004"], "spine.005", "spine.006",
                     ("shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe"),
                     lambda side, b: "%s.%s" % (b, side[0])), Root="root")


def _select_only(*objs):
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    for o in objs:
        o.select_set(True)
    bpy.context.view_layer.objects.active = objs[-1]


def _source():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    obj.name = "Source"
    return obj


def _strip_animation(obj):
    action = obj.animation_data.action
    obj.animation_data.action = None
    bpy.data.actions.remove(action)
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
        pb.location = (0, 0, 0)
        pb.rotation_quaternion = (1, 0, 0, 0)
        pb.scale = (1, 1, 1)


def _subtree_transform(eb, m):
    """Move a bone and everything below it rigidly (connected heads would
    otherwise follow their parents' tails and move twice)."""
    bones = [eb] + list(eb.children_recursive)
    connected = [b.use_connect for b in bones]
    for b in bones:
        b.use_connect = False
    for b in bones:
        b.transform(m)
    for b, c in zip(bones, connected):
        b.use_connect = c


def _about(point, axis, degrees):
    from mathutils import Vector

    p = Vector(point)
    return Matrix.Translation(p) @ Matrix.Rotation(np.radians(degrees), 4, axis) @ Matrix.Translation(-p)


def _bend_into_a_pose(obj, names):
    """Arms 45 degrees down, elbows bent 15 degrees forward, legs 6 degrees
    apart with the feet kept flat: in edit mode, so the rest pose changes."""
    _select_only(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebs = obj.data.edit_bones
        for side, s in (("Left", 1.0), ("Right", -1.0)):
            arm = ebs[names[side + "Shoulder"]]
            _subtree_transform(arm, _about(arm.head, "Y", s * 45.0))
            fore = ebs[names[side + "Elbow"]]
            _subtree_transform(fore, _about(fore.head, "Z", s * 15.0))
            thigh = ebs[names[side + "Hip"]]
            _subtree_transform(thigh, _about(thigh.head, "Y", -s * 6.0))
            foot = ebs[names[side + "Ankle"]]
            _subtree_transform(foot, _about(foot.head, "Y", s * 6.0))
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")


def _renamed_a_pose_copy(names, root=False, fingers=False):
    """A copy of the sample skeleton without animation, bones renamed,
    bent into an A-pose; optionally with unmapped finger bones."""
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=root)
    obj.name = "Target"
    _strip_animation(obj)
    for ours, theirs in names.items():
        if ours in obj.data.bones:
            obj.data.bones[ours].name = theirs
    settings = obj.data.motion_matching
    if root:
        settings.root_bone = names.get("Root", "Root")
        settings.hips_bone = names["Hips"]
    if fingers:
        _select_only(obj)
        bpy.ops.object.mode_set(mode="EDIT")
        try:
            for side in ("Left", "Right"):
                hand = obj.data.edit_bones[names[side + "Wrist"]]
                parent = hand
                for k in range(1, 4):
                    eb = obj.data.edit_bones.new("mixamorig:%sHandIndex%d" % (side, k))
                    eb.head = parent.tail
                    eb.tail = parent.tail + (parent.tail - parent.head).normalized() * 0.03
                    eb.parent = parent
                    parent = eb
        finally:
            bpy.ops.object.mode_set(mode="OBJECT")
    _bend_into_a_pose(obj, names)
    return obj


def _world_points(objs, frames):
    """{object name: (F, J, 2, 3)} world heads and tails of every pose bone
    after frame_set, bones in pose order."""
    scene = bpy.context.scene
    out = {o.name: np.empty((len(frames), len(o.pose.bones), 2, 3)) for o in objs}
    bufs = {o.name: np.empty(len(o.pose.bones) * 3, dtype=np.float32) for o in objs}
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        for o in objs:
            mw = np.array(o.matrix_world)
            for k, prop in enumerate(("head", "tail")):
                o.pose.bones.foreach_get(prop, bufs[o.name])
                pts = bufs[o.name].reshape(-1, 3).astype(np.float64)
                out[o.name][i, :, k] = pts @ mw[:3, :3].T + mw[:3, 3]
    return out


def _stored_map(obj):
    return {item.name: item.bone for item in obj.data.motion_matching.bone_map if item.bone}


def _curves(obj):
    compat = H.addon_module("bridge.blender.compat")
    return {(fc.data_path, fc.array_index): fc for fc in compat.fcurves(obj.animation_data.action, obj)}


# ----------------------------------------------------------------------------
# Mapping on the armature, presets


def test_auto_map_is_stored_on_the_armature_and_survives_save(workdir):
    src = _source()
    _select_only(src)
    assert bpy.ops.motion_matching.auto_map_bones() == {"FINISHED"}
    items = src.data.motion_matching.bone_map
    assert [it.name for it in items] == list(humanoid_joints.CANONICAL)      # every joint, in order
    assert _stored_map(src) == SAMPLE_MAP
    # Edited by hand (as the list does), then saved with the file.
    items["Neck"].bone = ""
    path = os.path.join(workdir, "mapped.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    again = _stored_map(bpy.data.objects["Source"])
    assert again == {k: v for k, v in SAMPLE_MAP.items() if k != "Neck"}


@pytest.mark.parametrize("names, expected_upper_chest", [(MIXAMO, "mixamorig:Spine3"), (UNREAL, "spine_04"),
                                                        (RIGIFY, "spine.004")], ids=["mixamo", "unreal", "rigify"])
def test_auto_map_of_renamed_copies(names, expected_upper_chest):
    obj = _renamed_a_pose_copy(names, root="Root" in names)
    _select_only(obj)
    assert bpy.ops.motion_matching.auto_map_bones() == {"FINISHED"}
    got = _stored_map(obj)
    expected = {j: names[b] for j, b in SAMPLE_MAP.items()}
    assert got == expected
    assert got["UpperChest"] == expected_upper_chest


def test_bone_map_presets_round_trip_and_refusals(workdir):
    obj = _renamed_a_pose_copy(MIXAMO)
    _select_only(obj)
    bpy.ops.motion_matching.auto_map_bones()
    path = os.path.join(workdir, "mixamo.json")
    assert bpy.ops.motion_matching.save_bone_map(filepath=path) == {"FINISHED"}
    data = json.load(open(path))
    assert data["joints"]["LeftUpperArm"] == "mixamorig:LeftArm"
    before = _stored_map(obj)
    obj.data.motion_matching.bone_map.clear()
    assert bpy.ops.motion_matching.load_bone_map(filepath=path) == {"FINISHED"}
    assert _stored_map(obj) == before
    # A bone mapped twice, or a bone the armature lacks: refused, mapping kept.
    bad = dict(data["joints"], RightHand="mixamorig:LeftHand")
    with open(path, "w") as fh:
        json.dump({"joints": bad}, fh)
    with pytest.raises(RuntimeError, match="Bone 'mixamorig:LeftHand' is mapped twice: LeftHand and RightHand"):
        bpy.ops.motion_matching.load_bone_map(filepath=path)
    bad = dict(data["joints"], Neck="mixamorig:Neck1")
    with open(path, "w") as fh:
        json.dump({"joints": bad}, fh)
    with pytest.raises(RuntimeError, match=r"not in the skeleton: 'mixamorig:Neck1' \(Neck\)"):
        bpy.ops.motion_matching.load_bone_map(filepath=path)
    assert _stored_map(obj) == before
    # A partial preset loads (the list shows what is left to map).
    with open(path, "w") as fh:
        json.dump({"Hips": "mixamorig:Hips"}, fh)
    assert bpy.ops.motion_matching.load_bone_map(filepath=path) == {"FINISHED"}
    assert _stored_map(obj) == {"Hips": "mixamorig:Hips"}
    obj.data.motion_matching.bone_map.clear()
    assert not bpy.ops.motion_matching.save_bone_map.poll()


# ----------------------------------------------------------------------------
# The Done-when check


def _retarget_and_compare(names, root_motion="HIPS", source_tpose="STORED", target_tpose="STORED",
                          transform=None, fingers=False, prepare_tposes=True, frames=None):
    src = _source()
    tgt = _renamed_a_pose_copy(names, root=root_motion == "ROOT", fingers=fingers)
    if transform is not None:
        tgt.matrix_world = transform
    if prepare_tposes:
        for obj in (src, tgt):
            _select_only(obj)
            assert bpy.ops.motion_matching.make_tpose(mode="COMPUTED") == {"FINISHED"}
    _select_only(src, tgt)
    result = bpy.ops.motion_matching.retarget(source_tpose=source_tpose, target_tpose=target_tpose,
                                              root_motion=root_motion)
    assert result == {"FINISHED"}
    assert tgt.animation_data.action is not None and tgt.animation_data.action.name == "jl_mm_run on Target"
    frames = np.arange(1, 5563) if frames is None else frames
    pts = _world_points([src, tgt], frames)
    src_names = [pb.name for pb in src.pose.bones]
    tgt_names = [pb.name for pb in tgt.pose.bones]
    m = np.array(tgt.matrix_world) @ np.linalg.inv(np.array(src.matrix_world))
    worst = {}
    for ours, theirs in names.items():
        a = pts[src.name][:, src_names.index(ours)]
        b = pts[tgt.name][:, tgt_names.index(theirs)]
        a = a @ m[:3, :3].T + m[:3, 3]
        worst[ours] = float(np.abs(a - b).max())
    return src, tgt, worst


@pytest.mark.parametrize("names", [MIXAMO, UNREAL], ids=["mixamo", "unreal"])
def test_done_when_renamed_a_pose_copy_every_joint_within_1mm(names):
    """Sample take -> renamed copy bent into an A-pose, both T-poses computed
    by make_tpose: every joint's head and tail within 1 mm on all 5562 frames."""
    src, tgt, worst = _retarget_and_compare(names, fingers=names is MIXAMO)
    assert len(worst) == 23
    assert max(worst.values()) < 1e-3, worst
    # The in-between spine bone (Chest3) was carried; fingers stayed at rest.
    curves = _curves(tgt)
    assert ('pose.bones["%s"].rotation_quaternion' % names["Chest3"], 0) in curves
    if names is MIXAMO:
        assert not any("HandIndex" in path for path, _ in curves)
        pb = tgt.pose.bones["mixamorig:LeftHandIndex2"]
        assert np.allclose(pb.matrix_basis, np.eye(4))
    # Only the hips carry a location.
    located = sorted({p for p, _ in curves if p.endswith(".location")})
    assert located == ['pose.bones["%s"].location' % names["Hips"]]


def test_done_when_onto_a_moved_turned_scaled_target_with_root_motion():
    """Rigify-style names with a root bone that takes the ground motion; the
    target object moved, turned 90 degrees and scaled 1.3: the motion follows
    the object."""
    transform = Matrix.Translation((2.0, -1.0, 0.0)) @ Matrix.Rotation(np.radians(90.0), 4, "Z") @ \
        Matrix.Scale(1.3, 4)
    src, tgt, worst = _retarget_and_compare(RIGIFY, root_motion="ROOT", transform=transform)
    assert max(worst.values()) < 1e-3, worst
    curves = _curves(tgt)
    assert ('pose.bones["root"].location', 0) in curves
    assert ('pose.bones["root"].rotation_quaternion', 3) in curves
    # The root only turns about its up axis and stays on the ground.
    bpy.context.scene.frame_set(2000)
    root = np.array(tgt.pose.bones["root"].matrix)
    assert abs(root[2, 3]) < 1e-6 and np.allclose(root[:3, 2], [0, 0, 1], atol=1e-6)


def test_source_rest_and_target_frame_as_tposes():
    """The source's rest pose against the target posed back out of its
    A-pose and stored from a frame: joints within 1 mm (frames sampled)."""
    src = _source()
    tgt = _renamed_a_pose_copy(UNREAL)
    # Pose the target's bones onto the source's rest matrices, parents first.
    order = [pb for pb in tgt.pose.bones]
    inv = {v: k for k, v in UNREAL.items()}
    by_depth = sorted(order, key=lambda pb: len(pb.parent_recursive))
    for pb in by_depth:
        pb.matrix = src.data.bones[inv[pb.name]].matrix_local
        bpy.context.view_layer.update()
    _select_only(tgt)
    assert bpy.ops.motion_matching.make_tpose(mode="FRAME", frame=1) == {"FINISHED"}
    assert tgt.data.motion_matching.tpose_source == "frame 1"
    src.data.motion_matching.tpose.clear()
    _select_only(src, tgt)
    assert bpy.ops.motion_matching.retarget(source_tpose="REST", target_tpose="STORED") == {"FINISHED"}
    pts = _world_points([src, tgt], np.arange(1, 5563, 37))
    s_names = [pb.name for pb in src.pose.bones]
    t_names = [pb.name for pb in tgt.pose.bones]
    for ours, theirs in UNREAL.items():
        err = np.abs(pts[src.name][:, s_names.index(ours)] - pts[tgt.name][:, t_names.index(theirs)]).max()
        assert err < 1e-3, (ours, err)


# ----------------------------------------------------------------------------
# T-pose


def test_make_tpose_turns_the_limbs_and_can_be_inspected():
    tgt = _renamed_a_pose_copy(MIXAMO)
    _select_only(tgt)
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}      # maps automatically first
    assert _stored_map(tgt)["LeftUpperArm"] == "mixamorig:LeftArm"
    stored = {it.name: it for it in tgt.data.motion_matching.tpose}
    assert len(stored) == len(tgt.data.bones)
    bpy.context.view_layer.update()
    pb = tgt.pose.bones
    for side, s in (("Left", 1), ("Right", -1)):
        a = np.array(pb["mixamorig:%sArm" % side].head)
        b = np.array(pb["mixamorig:%sForeArm" % side].head)
        c = np.array(pb["mixamorig:%sHand" % side].head)
        for u, v in ((a, b), (b, c)):
            d = (v - u) / np.linalg.norm(v - u)
            assert np.allclose(d, [s, 0, 0], atol=1e-5)
        k = np.array(pb["mixamorig:%sLeg" % side].head)
        f = np.array(pb["mixamorig:%sFoot" % side].head)
        assert np.allclose((f - k) / np.linalg.norm(f - k), [0, 0, -1], atol=1e-5)
        # The pose the user sees is the one stored.
        m = np.array(pb["mixamorig:%sHand" % side].matrix)
        q = np.array(stored["mixamorig:%sHand" % side].rotation)
        tf = H.addon_module("core.maths.transforms")
        assert np.abs(np.abs(np.dot(tf.matrix_to_quat(m[:3, :3]), q)) - 1) < 1e-6
        assert np.allclose(stored["mixamorig:%sHand" % side].head, m[:3, 3], atol=1e-6)
    # Rest pose as the T-pose.
    assert bpy.ops.motion_matching.make_tpose(mode="REST") == {"FINISHED"}
    assert tgt.data.motion_matching.tpose_source == "rest pose"
    assert np.allclose(stored_rotation(tgt, "mixamorig:LeftArm"),
                       quat_of(tgt.data.bones["mixamorig:LeftArm"].matrix_local), atol=1e-6)


def stored_rotation(obj, name):
    return np.array(next(it.rotation for it in obj.data.motion_matching.tpose if it.name == name))


def quat_of(m):
    tf = H.addon_module("core.maths.transforms")
    q = tf.matrix_to_quat(np.array(m)[:3, :3])
    return q


def test_load_tpose_stores_pose_matrix_rotations():
    """What load_tpose stores is what the bones' pose matrices are when the
    T-pose file plays: the convention retargeting relies on."""
    obj = H.import_ours(SAMPLE_TPOSE, global_scale=0.01)
    _select_only(obj)
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    bpy.context.scene.frame_set(1)
    for it in obj.data.motion_matching.tpose:
        m = np.array(obj.pose.bones[it.name].matrix)
        assert abs(abs(np.dot(quat_of(m), np.array(it.rotation))) - 1) < 1e-5, it.name
        assert np.allclose(m[:3, 3], it.head, atol=1e-5)


# ----------------------------------------------------------------------------
# Rigify


def _metarig():
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.active_object
    rig.name = "Character"
    return rig


def _tpose_source():
    src = _source()
    _select_only(src)
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    return src


def _expected_rotations(src, tgt, frame):
    """q_s q_s0^-1 q_t0 from Blender's own pose matrices and the stored T-poses."""
    tf = H.addon_module("core.maths.transforms")
    s_map, t_map = _stored_map(src), _stored_map(tgt)
    bpy.context.scene.frame_set(frame)
    out = {}
    for joint, s_bone in s_map.items():
        if joint not in t_map:
            continue
        q_s = quat_of(src.pose.bones[s_bone].matrix)
        q_s0 = stored_rotation(src, s_bone)
        q_t0 = stored_rotation(tgt, t_map[joint])
        out[t_map[joint]] = tf.quat_mul(tf.quat_mul(q_s, tf.quat_conjugate(q_s0)), q_t0)
    return out


def test_retarget_onto_the_rigify_meta_rig(rigify):
    rigify()
    src = _tpose_source()
    rig = _metarig()
    _select_only(rig)
    assert bpy.ops.motion_matching.auto_map_bones() == {"FINISHED"}
    assert _stored_map(rig)["LeftUpperArm"] == "upper_arm.L" and _stored_map(rig)["Hips"] == "spine"
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}
    before = H.datablock_counts()
    _select_only(src, rig)
    assert bpy.ops.motion_matching.retarget() == {"FINISHED"}
    assert H.datablock_counts()["actions"] == before["actions"] + 1
    curves = _curves(rig)
    keyed = {p.split('"')[1] for p, _ in curves}
    assert keyed == set(_stored_map(rig).values())        # mapped bones only; fingers, face, heels at rest
    for frame in (1, 700, 2500, 5000):
        want = _expected_rotations(src, rig, frame)
        for bone, q in want.items():
            got = quat_of(rig.pose.bones[bone].matrix)
            assert abs(abs(np.dot(got, q)) - 1) < 1e-5, (frame, bone)
        assert np.allclose(rig.pose.bones["palm.01.L"].matrix_basis, np.eye(4))
    # Translation scaled by the ratio of hips heights: the meta-rig is taller.
    bpy.context.scene.frame_set(1000)
    ratio = rig.pose.bones["spine"].head[2] / src.pose.bones["Hips"].head[2]
    assert 1.0 < ratio < 1.3


def test_a_source_in_its_tpose_puts_the_meta_rig_in_its_tpose(rigify):
    rigify()
    src = H.import_ours(SAMPLE_TPOSE, global_scale=0.01)
    _select_only(src)
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    rig = _metarig()
    _select_only(rig)
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}
    _select_only(src, rig)
    assert bpy.ops.motion_matching.retarget() == {"FINISHED"}
    bpy.context.scene.frame_set(1)
    for joint, bone in _stored_map(rig).items():
        got = quat_of(rig.pose.bones[bone].matrix)
        assert abs(abs(np.dot(got, stored_rotation(rig, bone))) - 1) < 1e-5, joint
    # And that T-pose has straight horizontal arms.
    d = np.array(rig.pose.bones["hand.L"].head) - np.array(rig.pose.bones["upper_arm.L"].head)
    assert np.allclose(d / np.linalg.norm(d), [1, 0, 0], atol=1e-4)


@pytest.mark.parametrize("prefer", ["FK", "DEF"])
def test_generated_rigify_rig(rigify, prefer):
    """Keys on the FK controls (their mechanism parents' constraints are
    followed) or on the deform bones (checked with the constraints muted):
    Blender's evaluated pose has the corresponding rotations."""
    rigify()
    src = _tpose_source()
    meta = _metarig()
    _select_only(meta)
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.active_object
    assert rig != meta and "DEF-spine" in rig.data.bones
    _select_only(rig)
    assert bpy.ops.motion_matching.auto_map_bones(prefer=prefer) == {"FINISHED"}
    mapping = _stored_map(rig)
    if prefer == "FK":
        assert mapping["Hips"] == "torso" and mapping["LeftUpperArm"] == "upper_arm_fk.L"
        assert mapping["Head"] == "head" and mapping["LeftFoot"] == "foot_fk.L"
    else:
        assert mapping["Hips"] == "DEF-spine" and mapping["LeftLowerArm"] == "DEF-forearm.L"
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}
    _select_only(src, rig)
    assert bpy.ops.motion_matching.retarget(root_motion="ROOT") == {"FINISHED"}
    curves = _curves(rig)
    keyed = {p.split('"')[1] for p, _ in curves}
    assert keyed == set(mapping.values()) | {"root"}      # no MCH- bone keyed as an in-between
    if prefer == "FK":
        assert rig.pose.bones["upper_arm_parent.L"]["IK_FK"] == 1.0
        assert rig.pose.bones["thigh_parent.R"]["IK_FK"] == 1.0
    else:
        for pb in rig.pose.bones:
            for c in pb.constraints:
                c.mute = True
    legs = [mapping["LeftUpperLeg"], mapping["RightUpperLeg"]]
    ratios = []
    for frame in (1, 1500, 4000):
        want = _expected_rotations(src, rig, frame)
        for bone, q in want.items():
            got = quat_of(rig.pose.bones[bone].matrix)
            assert abs(abs(np.dot(got, q)) - 1) < 1e-5, (frame, bone)
        # The root carries the ground motion: it turns about Z only, on the ground.
        root = np.array(rig.pose.bones["root"].matrix)
        assert abs(root[2, 3]) < 1e-6 and np.allclose(root[:3, 2], [0, 0, 1], atol=1e-5)
        # The pelvis point (between the hip joints) follows the source's, scaled
        # (not the torso control's head, which sits well above the pelvis).
        p_t = np.mean([rig.pose.bones[b].head for b in legs], axis=0)
        p_s = np.mean([src.pose.bones[b].head for b in ("LeftHip", "RightHip")], axis=0)
        ratios.append(p_t / p_s)
    ratios = np.array(ratios)
    # Standing pelvis heights above the lowest foot joint head: Rigify 1.059 m, the sample 0.950 m.
    assert np.abs(ratios - ratios[0, 0]).max() < 1e-4 and 1.10 < ratios[0, 0] < 1.13


# ----------------------------------------------------------------------------
# Refusals


def test_missing_required_bones_are_listed_and_nothing_is_written():
    src = _source()
    tgt = _renamed_a_pose_copy(MIXAMO)
    _select_only(tgt)
    bpy.ops.motion_matching.auto_map_bones()
    items = tgt.data.motion_matching.bone_map
    items["LeftHand"].bone = ""
    items["RightFoot"].bone = ""
    counts = H.datablock_counts()
    basis = [pb.matrix_basis.copy() for pb in tgt.pose.bones]
    _select_only(src, tgt)
    with pytest.raises(RuntimeError, match="target 'Target'.*lacks required joints: LeftHand, RightFoot"):
        bpy.ops.motion_matching.retarget()
    items["LeftHand"].bone = "mixamorig:LeftHand"
    items["RightFoot"].bone = "mixamorig:LeftFoot"
    with pytest.raises(RuntimeError, match="Bone 'mixamorig:LeftFoot' is mapped twice: LeftFoot and RightFoot"):
        bpy.ops.motion_matching.retarget()
    items["RightFoot"].bone = "mixamorig:RightFoot"
    with pytest.raises(RuntimeError, match="Target has no stored T-pose"):
        bpy.ops.motion_matching.retarget(target_tpose="STORED")
    assert H.datablock_counts() == counts
    assert tgt.animation_data is None or tgt.animation_data.action is None
    assert all(pb.matrix_basis == b for pb, b in zip(tgt.pose.bones, basis))
    # An unmappable armature: the missing joints are named.
    bpy.ops.object.armature_add()
    blob = bpy.context.active_object
    blob.name = "Blob"
    _select_only(src, blob)
    with pytest.raises(RuntimeError, match="target 'Blob'.*lacks required joints: Hips, Spine, Head"):
        bpy.ops.motion_matching.retarget()


def test_polls():
    src = _source()
    _select_only(src)
    assert not bpy.ops.motion_matching.retarget.poll()          # one armature only
    assert not bpy.ops.motion_matching.save_bone_map.poll()     # nothing mapped yet
    assert bpy.ops.motion_matching.auto_map_bones.poll()
    bpy.context.view_layer.objects.active = None
    assert not bpy.ops.motion_matching.make_tpose.poll()
    with pytest.raises(RuntimeError, match="no action to retarget"):
        tgt = _renamed_a_pose_copy(MIXAMO)
        bpy.ops.motion_matching.retarget(source=tgt.name, target=src.name)


class _Layout:
    """Stands in for a UI layout in background mode: records what is drawn."""

    def __init__(self, log):
        self.log = log

    def __getattr__(self, name):
        def call(*args, **kw):
            self.log.append((name, args, kw))
            if name == "operator":
                return type("Op", (), {})()
            if name == "prop" or name == "prop_search":
                data, prop = args[0], args[1] if len(args) > 1 else kw.get("property")
                assert hasattr(data, prop), prop      # every drawn property exists
            return self
        return call

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


def test_panel_and_list_draw():
    panel = H.addon_module("panels.retarget_panel")
    src = _source()
    tgt = _renamed_a_pose_copy(MIXAMO)
    settings = bpy.context.scene.motion_matching.retarget
    settings.source, settings.target = src, tgt
    settings.source_tpose = "FRAME"
    _select_only(tgt)
    bpy.ops.motion_matching.auto_map_bones()
    bpy.ops.motion_matching.make_tpose()
    log = []
    fake = type("P", (), {"layout": _Layout(log)})()
    panel.MOTION_MATCHING_PT_retarget.draw(fake, bpy.context)
    drawn = [name for name, _a, _k in log]
    assert "template_list" in drawn and drawn.count("operator") == 5
    labels = [kw.get("text", "") for name, _a, kw in log if name == "label"]
    assert any(t.startswith("T-pose: %d bones" % len(tgt.data.bones)) for t in labels)
    # A row of the list: a required joint left unmapped is drawn in red.
    item = tgt.data.motion_matching.bone_map["LeftHand"]
    item.bone = ""
    row_log = []
    row = _Layout(row_log)
    panel.MOTION_MATCHING_UL_bone_map.draw_item(None, bpy.context, row, tgt.data.motion_matching, item, 0,
                                                None, "", 0)
    assert row.alert is True
    assert ("prop_search", (item, "bone", tgt.data, "bones"), {"text": ""}) in row_log


def test_a_failed_write_leaves_the_target_as_it_was(monkeypatch):
    src = _source()
    tgt = _renamed_a_pose_copy(MIXAMO)
    compat = H.addon_module("bridge.blender.compat")
    errors = H.addon_module("core.errors")
    old = compat.new_action(tgt, "Before")
    tgt.pose.bones["mixamorig:LeftArm"].rotation_mode = "XYZ"
    tgt.pose.bones["mixamorig:LeftArm"].rotation_euler = (0.3, 0.2, 0.1)
    counts = H.datablock_counts()

    def broken(*args, **kw):
        raise errors.MotionMatchingError("Disk on fire.")

    monkeypatch.setattr(compat, "write_curves", broken)
    _select_only(src, tgt)
    with pytest.raises(RuntimeError, match="Disk on fire"):
        bpy.ops.motion_matching.retarget()
    assert H.datablock_counts() == counts
    assert tgt.animation_data.action == old
    pb = tgt.pose.bones["mixamorig:LeftArm"]
    assert pb.rotation_mode == "XYZ" and np.allclose(pb.rotation_euler, (0.3, 0.2, 0.1))
    assert not tgt.data.motion_matching.bone_map or not _stored_map(tgt)      # nothing stored either
