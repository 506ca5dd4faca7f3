"""The Blender side of retargeting: skeletons, mappings and T-poses read from
and stored on armatures, and the retargeted action written in bulk.

Rotations are armature-space (each pose bone's ``matrix``), so each character
moves in its own object frame; see core.retarget for the maths and decisions.
Everything is computed and checked before anything in the file changes; a
failure while writing removes what was written.
"""

import os
from dataclasses import dataclass, field

import bpy
import numpy as np

from ...core.skeleton import humanoid_joints, humanoid_map
from ...core.retarget import frames as rt_frames, plan as rt_plan, rig as rt_rig, tpose as rt_tpose
from ...core.maths import transforms as tf
from ...core.database.motion_database import SourceRecord
from ...core.errors import MotionMatchingError
from ..blender import armature_data, compat
from ..files.virtual_root import key_times


# ----------------------------------------------------------------------------
# Skeletons


def skeleton_arrays(obj):
    """Bone names (parents first), parent indices, rest offsets as Blender's
    pose evaluation builds them, lengths, and rest heads and tails (armature space)."""
    arm = obj.data
    names, parents = armature_data.bone_order(arm)
    offsets = armature_data.rest_offsets(arm, names)
    bones = arm.bones
    lengths = np.array([bones[n].length for n in names], dtype=np.float64)
    heads = np.array([bones[n].head_local for n in names], dtype=np.float64)
    tails = np.array([bones[n].tail_local for n in names], dtype=np.float64)
    return names, parents, offsets, lengths, heads, tails


def auto_map(obj, prefer="DEF"):
    """core.skeleton.humanoid_map.auto_map on ``obj``'s bones (not stored)."""
    names, parents, _offsets, _lengths, heads, tails = skeleton_arrays(obj)
    return humanoid_map.auto_map(names, parents, heads, tails, prefer=prefer)


def read_mapping(obj):
    """The mapping stored on the armature: {joint: bone} (mapped joints only)."""
    return {item.name: item.bone for item in obj.data.motion_matching.bone_map if item.bone}


def has_mapping(obj):
    return obj is not None and obj.type == "ARMATURE" and any(
        item.bone for item in obj.data.motion_matching.bone_map)


def store_mapping(obj, mapping):
    """Keep ``mapping`` on the armature: one row per canonical joint, in order
    (empty bone for an unmapped joint); joints outside the canon are refused."""
    unknown = [k for k in mapping if k not in humanoid_joints.CANONICAL]
    if unknown:
        raise humanoid_joints.HumanoidError("Unknown humanoid joints: %s." % ", ".join(map(repr, unknown)))
    items = obj.data.motion_matching.bone_map
    items.clear()
    for joint in humanoid_joints.CANONICAL:
        item = items.add()
        item.name = joint
        item.bone = mapping.get(joint) or ""


def check_preset(mapping, obj):
    """Refuse a preset that names bones ``obj`` lacks or maps one bone twice
    (missing joints are allowed: a preset may be partial). Returns the
    required joints it leaves unmapped."""
    full = dict(mapping)
    missing = [j for j in humanoid_joints.REQUIRED if not full.get(j)]
    for k, j in enumerate(missing):        # stand-ins so only real problems are reported
        full[j] = "\x00missing%d" % k
    names = [b.name for b in obj.data.bones] + [full[j] for j in missing]
    humanoid_joints.check_mapping(full, names)
    return missing


def mapping_for(obj, prefer="DEF"):
    """The stored mapping, or an automatic one when none is stored.
    Returns (mapping, True when automatic)."""
    if has_mapping(obj):
        return read_mapping(obj), False
    return dict(auto_map(obj, prefer)), True


def object_frames(obj):
    """(ground, body) 4x4 of the object's world matrix (parents included),
    see core.retarget.rig.split_object_matrix."""
    return rt_rig.split_object_matrix(np.array(obj.matrix_world, dtype=np.float64))


def skeleton(obj, label, mapping, constraints=None):
    """The core skeleton of ``obj`` in its body frame (the tilt and scale of
    its object taken in, so a Y-up rig in centimetres reads Z up in metres)."""
    names, parents, offsets, lengths, _heads, _tails = skeleton_arrays(obj)
    return rt_rig.RetargetSkeleton(names, parents, offsets, lengths, mapping, label, constraints,
                                    frame=object_frames(obj)[1])


def _all_axes(c):
    return all(getattr(c, "use_" + a) for a in "xyz") and not any(getattr(c, "invert_" + a) for a in "xyz")


def read_constraints(obj, names):
    """The target's live pose constraints (unmuted, with influence) as core
    Constraints {bone index: [...]}, and [(bone, type)] of those retargeting
    cannot follow (kept as kind OTHER). Copy Scale is left out on purpose:
    retargeting keeps every scale at 1."""
    index = {n: i for i, n in enumerate(names)}
    followed, others = {}, []
    for pb in obj.pose.bones:
        stack = []
        for c in pb.constraints:
            if c.mute or c.influence <= 0.0 or c.type == "COPY_SCALE":
                continue
            kind, targets, space = None, [], "WORLD"
            same = getattr(c, "target", None) == obj and getattr(c, "subtarget", "") in index
            spaces = (getattr(c, "owner_space", ""), getattr(c, "target_space", ""))
            if spaces in (("WORLD", "WORLD"), ("POSE", "POSE"), ("LOCAL", "LOCAL")):
                space = "LOCAL" if spaces[0] == "LOCAL" else "WORLD"
            else:
                same = False
            if c.type == "COPY_TRANSFORMS" and same and c.mix_mode == "REPLACE" and c.head_tail == 0.0:
                kind = c.type
            elif c.type == "COPY_ROTATION" and same and c.mix_mode == "REPLACE" and _all_axes(c):
                kind = c.type
            elif c.type == "COPY_LOCATION" and same and _all_axes(c) and not c.use_offset \
                    and c.head_tail == 0.0:
                kind = c.type
            elif c.type == "ARMATURE" and not c.use_bone_envelopes and len(c.targets) and all(
                    t.target == obj and t.subtarget in index for t in c.targets):
                kind, space = c.type, "WORLD"
                targets = [(index[t.subtarget], t.weight) for t in c.targets]
            if kind is None:
                others.append((pb.name, c.type))
                stack.append(rt_rig.Constraint("OTHER", (), c.influence))
                continue
            stack.append(rt_rig.Constraint(kind, targets or [(index[c.subtarget], 1.0)], c.influence, space))
        if stack:
            followed[index[pb.name]] = stack
    return followed, others


# ----------------------------------------------------------------------------
# Poses and T-poses


def evaluated_pose(context, obj, names, frame=None):
    """Armature-space pose matrices (J, 4, 4) as Blender shows them (after
    constraints) on ``frame`` (None: now), in ``names`` order."""
    scene = context.scene
    current = (scene.frame_current, scene.frame_subframe)
    try:
        if frame is not None:
            scene.frame_set(int(frame))
        else:
            context.view_layer.update()
        pbones = obj.pose.bones
        buf = np.empty(len(pbones) * 16, dtype=np.float32)
        pbones.foreach_get("matrix", buf)
        mats = buf.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
        pos = {pb.name: i for i, pb in enumerate(pbones)}
        return mats[[pos[n] for n in names]]
    finally:
        if frame is not None:
            scene.frame_set(current[0], subframe=current[1])


def stored_tpose(obj, names):
    """The T-pose stored on the armature as a core TPose (NaN rows for bones
    it does not hold)."""
    rot = np.full((len(names), 4), np.nan)
    heads = np.full((len(names), 3), np.nan)
    index = {n: i for i, n in enumerate(names)}
    for item in obj.data.motion_matching.tpose:
        i = index.get(item.name)
        if i is not None:
            rot[i] = item.rotation
            heads[i] = item.head
    return rt_rig.TPose(rot, heads)


def tpose_for(context, obj, names, mode, frame):
    """(core TPose, words for reports) of ``obj`` by ``mode``: AUTO, STORED, REST or FRAME."""
    settings = obj.data.motion_matching
    if mode == "AUTO":
        mode = "STORED" if len(settings.tpose) else "REST"
    if mode == "STORED":
        if not len(settings.tpose):
            raise MotionMatchingError(
                "%s has no stored T-pose: load one (Load T-Pose), make one (Make T-Pose), or use its "
                "rest pose or a frame." % obj.name)
        where = settings.tpose_source
        if where and os.sep in where:
            where = os.path.basename(where)
        return stored_tpose(obj, names), "stored T-pose" + (" (%s)" % where if where else "")
    if mode == "REST":
        rest = armature_data.rest_matrices(obj.data, names)
        return rt_rig.TPose.from_matrices(rest), "rest pose"
    if mode == "FRAME":
        return rt_rig.TPose.from_matrices(evaluated_pose(context, obj, names, frame)), "frame %d" % frame
    raise MotionMatchingError("Unknown T-pose source %r." % (mode,))


def store_tpose(obj, names, pose, source):
    """Keep a T-pose on the armature: every bone's armature-space rotation
    and head from pose matrices (J, 4, 4)."""
    quats = tf.matrix_to_quat(pose[:, :3, :3])
    settings = obj.data.motion_matching
    settings.tpose.clear()
    for name, q, m in zip(names, quats, pose):
        item = settings.tpose.add()
        item.name = name
        item.rotation = q
        item.head = m[:3, 3]
    settings.tpose_source = source


def _set_rotation(pb, q):
    from mathutils import Quaternion

    quat = Quaternion(q)
    if pb.rotation_mode == "QUATERNION":
        pb.rotation_quaternion = quat
    elif pb.rotation_mode == "AXIS_ANGLE":
        axis, angle = quat.to_axis_angle()
        pb.rotation_axis_angle = (angle, axis[0], axis[1], axis[2])
    else:
        pb.rotation_euler = quat.to_euler(pb.rotation_mode)


def apply_pose(obj, names, basis_rotations):
    """Pose every bone with local rotations (J, 4), no translation or scale."""
    for name, q in zip(names, basis_rotations):
        pb = obj.pose.bones[name]
        pb.location = (0.0, 0.0, 0.0)
        pb.scale = (1.0, 1.0, 1.0)
        _set_rotation(pb, q)


def make_tpose(context, obj, mode="COMPUTED", frame=1, straighten_spine=False, apply=True, prefer="DEF"):
    """Store a T-pose on ``obj``: COMPUTED (limbs of the rest pose turned to
    the canonical directions; needs a mapping, automatic if none is stored),
    REST, or FRAME (the pose on ``frame``). ``apply`` poses the armature in
    it (COMPUTED and REST). Returns a sentence for the report."""
    names = armature_data.bone_order(obj.data)[0]
    note = ""
    if mode == "COMPUTED":
        mapping, automatic = mapping_for(obj, prefer)
        sk = skeleton(obj, "armature '%s'" % obj.name, mapping)
        basis, pose = rt_tpose.compute_tpose(sk, straighten_spine=straighten_spine)
        source = "computed (Make T-Pose%s)" % (", straight spine" if straighten_spine else "")
        if automatic:
            store_mapping(obj, mapping)
            note = " (bones mapped automatically)"
    elif mode == "REST":
        pose = armature_data.rest_matrices(obj.data, names)
        basis = np.tile([1.0, 0.0, 0.0, 0.0], (len(names), 1))
        source = "rest pose"
    elif mode == "FRAME":
        pose = evaluated_pose(context, obj, names, frame)
        basis = None
        source = "frame %d" % frame
    else:
        raise MotionMatchingError("Unknown T-pose mode %r." % (mode,))
    store_tpose(obj, names, pose, source)
    if apply and basis is not None:
        apply_pose(obj, names, basis)
    return "Stored a T-pose of %d bones on %s: %s%s." % (len(names), obj.name, source, note)


# ----------------------------------------------------------------------------
# Retargeting


def source_motion(obj):
    """Frames of the source's action and its armature-space pose matrices (F, J, 4, 4)."""
    ad = obj.animation_data
    action = ad.action if ad else None
    if action is None:
        raise MotionMatchingError("The source %s has no action to retarget." % obj.name)
    frames = key_times(action, obj)
    names, _parents, _rest, pose = armature_data.armature_pose(obj, action, frames)
    return action, frames, names, pose


def _root_bone(obj, names, hips):
    """The armature's root bone (settings.root_bone) if it is above ``hips``."""
    name = obj.data.motion_matching.root_bone
    if not name or name not in names:
        return None
    bones = obj.data.bones
    b = bones[hips].parent
    while b is not None:
        if b.name == name:
            return names.index(name)
        b = b.parent
    return None


class _PoseBackup:
    """The pose channels of every bone, to put back after a failed write."""

    PROPS = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3),
             ("rotation_axis_angle", 4), ("scale", 3))

    def __init__(self, obj):
        self.obj = obj
        pbones = obj.pose.bones
        self.values = {}
        for prop, n in self.PROPS:
            buf = np.empty(len(pbones) * n, dtype=np.float32)
            pbones.foreach_get(prop, buf)
            self.values[prop] = buf
        self.modes = [pb.rotation_mode for pb in pbones]
        self.props = []        # (bone, custom property, old value)

    def reset_to_rest(self):
        pbones = self.obj.pose.bones
        J = len(pbones)
        rest = {"location": np.zeros(3), "rotation_quaternion": np.array([1.0, 0, 0, 0]),
                "rotation_euler": np.zeros(3), "rotation_axis_angle": np.array([0.0, 0, 1, 0]),
                "scale": np.ones(3)}
        for prop, _n in self.PROPS:
            pbones.foreach_set(prop, np.tile(rest[prop], J).astype(np.float32))

    def restore(self):
        pbones = self.obj.pose.bones
        for pb, mode in zip(pbones, self.modes):
            pb.rotation_mode = mode
        for prop, _n in self.PROPS:
            pbones.foreach_set(prop, self.values[prop])
        for bone, prop, value in self.props:
            pbones[bone][prop] = value


@dataclass(eq=False)
class Setup:
    """A retarget plan made from two armatures (see :func:`plan_for`)."""

    plan: rt_plan.Plan                 # the core plan (everything fixed before the first frame)
    source: rt_rig.RetargetSkeleton    # the source armature as the core reads it
    target: rt_rig.RetargetSkeleton    # the target armature, with the constraints the plan follows
    source_map: dict                   # {canonical joint: source bone name}
    source_auto: bool                  # the source mapping was made automatically (stored once the retarget succeeds)
    target_map: dict                   # {canonical joint: target bone name}
    target_auto: bool                  # the same for the target
    ground: np.ndarray                 # (4, 4) the target object's ground frame (its place and turn about Z)
    tpose_words: tuple                 # (source, target): where each T-pose came from, for reports
    warnings: list = field(default_factory=list)   # sentences for the report


def source_record(source, prefer="DEF"):
    """What :func:`plan_for` reads of the source armature (its mapping, object
    frame, bone lengths and T-pose by AUTO) as a database keeps it
    (core.database.motion_database.SourceRecord), so that a file holding only
    the character can bake onto it. None when it cannot be read (no humanoid
    mapping): baking onto another rig then needs the armature."""
    try:
        mapping, _auto = mapping_for(source, prefer)
        _names, _parents, _offsets, lengths, _heads, _tails = skeleton_arrays(source)
        src = skeleton(source, "source '%s'" % source.name, mapping)
        tpose, words = tpose_for(None, source, src.names, "AUTO", 1)
        notes = []
        if words == "rest pose":
            tpose, words = _unless_a_pose(src, tpose, words, notes)
    except MotionMatchingError:
        return None
    known = np.isfinite(tpose.rotations).all(axis=1) & np.isfinite(tpose.heads).all(axis=1)
    rows = np.where(known[:, None], np.concatenate([tpose.rotations, tpose.heads], axis=1), 0.0)
    return SourceRecord(name=source.name, matrix_world=np.array(source.matrix_world, dtype=np.float64),
                        bone_lengths=np.asarray(lengths, dtype=np.float64), mapping=mapping, tpose=rows,
                        tpose_known=known, tpose_words=words, notes=notes)


def _recorded_source(database):
    """(mapping, skeleton, T-pose, words) of the source armature a database recorded."""
    record = database.source
    frame = rt_rig.split_object_matrix(record.matrix_world)[1]
    src = rt_rig.RetargetSkeleton(list(database.skeleton.names), np.asarray(database.skeleton.parents, dtype=np.int64),
                                  np.asarray(database.skeleton.offsets), record.bone_lengths, record.mapping,
                                  "source '%s'" % record.name, None, frame=frame)
    rows = np.where(record.tpose_known[:, None], record.tpose, np.nan)
    return record.mapping, src, rt_rig.TPose(rows[:, :4], rows[:, 4:]), record.tpose_words


def plan_for(context, source, target, source_tpose="AUTO", source_frame=1, target_tpose="AUTO",
             target_frame=1, root_motion="HIPS", scale=None, prefer="DEF", recorded=None):
    """Read both armatures (mappings, T-poses, the target's constraints) and
    make the core plan. Changes nothing in the file. ``recorded``: a database
    (core MotionDatabase) whose ``source`` record is read instead of ``source``
    (None then; its T-pose by AUTO, root motion from the hips).

    The target's constraints that retargeting can follow (read_constraints)
    are followed, so keys on controls that hang from constrained mechanism
    bones (Rigify's FK controls) come out right. When keyed bones are
    themselves constrained (Rigify's DEF- bones), their keys only show with
    the constraints muted, and the plan assumes them all muted (a warning says so).
    """
    if recorded is None and source == target:
        raise MotionMatchingError("The source and the target are the same armature (%s)." % source.name)
    for obj, role in ((source, "source"), (target, "target")):
        if (obj is None and (role == "target" or recorded is None)) or (obj is not None and obj.type != "ARMATURE"):
            raise MotionMatchingError("The %s must be an armature." % role)
    notes = []
    if recorded is None:
        source_map, source_auto = mapping_for(source, prefer)
        src = skeleton(source, "source '%s'" % source.name, source_map)
    else:
        source_map, src, src_tp, src_words = _recorded_source(recorded)
        source_auto, source_tpose, root_motion = False, "RECORDED", "HIPS"
        notes.extend(recorded.source.notes)
    target_map, target_auto = mapping_for(target, prefer)
    tgt_label = "target '%s'" % target.name
    followed, others = read_constraints(target, armature_data.bone_order(target.data)[0])
    tgt = skeleton(target, tgt_label, target_map, followed)
    if recorded is None:
        src_tp, src_words = tpose_for(context, source, src.names, source_tpose, source_frame)
    tgt_tp, tgt_words = tpose_for(context, target, tgt.names, target_tpose, target_frame)
    if source_tpose == "AUTO" and src_words == "rest pose":
        src_tp, src_words = _unless_a_pose(src, src_tp, src_words, notes)
    if target_tpose == "AUTO" and tgt_words == "rest pose":
        tgt_tp, tgt_words = _unless_a_pose(tgt, tgt_tp, tgt_words, notes)
    hips_name = src.names[src.joints["Hips"]]

    def make_plan(tgt):
        return rt_plan.prepare(
            src, tgt, src_tp, tgt_tp, root_motion=root_motion, scale=scale,
            source_root=_root_bone(source, src.names, hips_name) if root_motion == "ROOT" else None,
            target_root=(_root_bone(target, tgt.names, tgt.names[tgt.joints["Hips"]])
                         if root_motion == "ROOT" else None))

    plan = make_plan(tgt)
    warnings = list(notes)
    if plan.overridden:
        warnings.append("%d keyed bones have constraints that override their keys (%s): the keys assume the "
                        "target's constraints muted" % (len(plan.overridden), _join_short(plan.overridden)))
        tgt = skeleton(target, tgt_label, target_map)
        plan = make_plan(tgt)
        others = []
    walked = {tgt.names[j] for j, _p, _k in plan.walk}
    ignored = sorted({"%s (%s)" % (b, t.replace("_", " ").title()) for b, t in others if b in walked})
    if ignored:
        warnings.append("constraints not followed, so these bones may move the result: %s"
                        % _join_short(ignored))
    size = mesh_size_note(target, plan.target_height)
    if size:
        warnings.append(size)
    return Setup(plan=plan, source=src, target=tgt, source_map=source_map, source_auto=source_auto,
                 target_map=target_map, target_auto=target_auto, ground=object_frames(target)[0],
                 tpose_words=(src_words, tgt_words), warnings=warnings)


def _unless_a_pose(sk, tpose, words, notes):
    """The rest pose as the T-pose, unless its arms hang down (an A-pose):
    then the computed T-pose (Make T-Pose's), not stored, and a note."""
    droop = rt_tpose.arm_droop(sk)
    if droop is None or droop < rt_tpose.A_POSE_DEGREES:
        return tpose, words
    notes.append("the rest pose of %s is an A-pose (arms %.0f degrees below level), so its T-pose was computed "
                 "(Make T-Pose stores one to check or edit)" % (sk.label, droop))
    return rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(sk)[1]), "computed T-pose (A-pose rest)"


def skinned_meshes(obj):
    """Mesh objects deformed by ``obj`` (an Armature modifier on it)."""
    return [o for o in bpy.data.objects if o.type == "MESH" and any(
        m.type == "ARMATURE" and m.object == obj for m in o.modifiers)]


def mesh_rest_points(obj):
    """World positions (N, 3) of the undeformed vertices of the meshes ``obj`` skins."""
    pts = []
    for mesh in skinned_meshes(obj):
        co = np.empty(len(mesh.data.vertices) * 3, dtype=np.float32)
        mesh.data.vertices.foreach_get("co", co)
        mw = np.array(mesh.matrix_world, dtype=np.float64)
        pts.append(co.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3])
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def toe_above_soles(obj, setup, most=0.15):
    """How high the target's toe heads stand above the soles of the mesh it
    skins, at rest (metres, the mean of both toes above the mesh's lowest
    vertex), or None without a mesh, without mapped toes, or when the lowest
    vertex is not just under the toes (more than ``most`` below, or above
    them: a cape, a prop or a ground plane in the mesh)."""
    pts = mesh_rest_points(obj)
    tgt = setup.target
    toes = [tgt.joints.get(s + "Toes") for s in ("Left", "Right")]
    if not len(pts) or None in toes:
        return None
    lowest = float(pts[:, 2].min()) - float(setup.ground[2, 3])       # into the body frame's height
    h = float(np.mean(tgt.rest[toes, 2, 3])) - lowest
    return h if 0.0 <= h <= most else None


def mesh_size_note(obj, pelvis_height):
    """A sentence when the bones are far from the size of the mesh they skin
    (a rig in centimetres with scale 1, say); '' when they agree or there is
    no mesh. A standing person's pelvis is about half its height."""
    pts = mesh_rest_points(obj)
    if not len(pts):
        return ""
    tall = float(np.ptp(pts[:, 2]))
    if not tall > 1e-6:
        return ""
    ratio = pelvis_height / (0.53 * tall)
    if 1.0 / 3.0 <= ratio <= 3.0:
        return ""
    return ("the bones of %s are %.3g times the size of the mesh they skin (hips %.2f m above the feet, mesh "
            "%.2f m tall): check its object's scale (a rig in centimetres needs 0.01) or set the size by hand"
            % (obj.name, ratio, pelvis_height, tall))


def retarget_pose(setup, pose):
    """core.retarget.frames.retarget_frames on source pose matrices (F, Js, 4, 4)
    in armature space (e.g. from armature_data.armature_pose)."""
    plan = setup.plan
    rotations = tf.matrix_to_quat(pose[..., :3, :3])
    root_pose = pose[:, plan.source_root] if plan.source_root is not None else None
    return rt_frames.retarget_frames(plan, rotations, pose[:, plan.source_hips, :3, 3], root_pose)


def world_joints(setup, result, chunk=256):
    """World positions of the target's hips head, pelvis point (mid hip
    joints), head, ankles and toes (Foot and Toes heads) on every frame of a
    retarget result: {"hips", "pelvis", "head": (F, 3), "ankles", "toes":
    (F, 2, 3)}, unmapped joints left out. In chunks of frames (big rigs)."""
    g = np.asarray(setup.ground, dtype=np.float64)
    joints = setup.target.joints
    pick = {"hips": [joints["Hips"]], "pelvis": [joints["LeftUpperLeg"], joints["RightUpperLeg"]]}
    for key, joint in (("ankles", "Foot"), ("toes", "Toes")):
        if all(s + joint in joints for s in ("Left", "Right")):
            pick[key] = [joints["Left" + joint], joints["Right" + joint]]
    head = joints.get("Head", joints.get("Neck"))
    if head is not None:
        pick["head"] = [head]
    parts = {k: [] for k in pick}
    F = result.rotations.shape[0]
    for a in range(0, F, chunk):
        pose = rt_frames.target_frame_pose(setup.plan, rt_frames.slice_result(result, slice(a, a + chunk)))
        heads = pose[..., :3, 3] @ g[:3, :3].T + g[:3, 3]
        for k, idx in pick.items():
            parts[k].append(heads[:, idx])
    out = {k: np.concatenate(v) for k, v in parts.items()}
    for k in ("hips", "head"):
        if k in out:
            out[k] = out[k][:, 0]
    out["pelvis"] = out["pelvis"].mean(axis=1)
    return out


def check_result(setup, result, target, controller=None, frames=200):
    """core.measure.retarget_checks on the result in world space (on up to ``frames``
    frames spread over it unless a controller is given): [sentences]."""
    from ...core.measure import retarget_checks

    if controller is None and result.rotations.shape[0] > frames:
        pick = np.linspace(0, result.rotations.shape[0] - 1, frames).round().astype(np.int64)
        result = rt_frames.slice_result(result, pick)
    world = world_joints(setup, result)
    return retarget_checks.result_warnings(target.name, setup.plan.target_height, world, controller)


def write_action(target, setup, result, frames, name):
    """The result as a new action on ``target`` (assigned to it), in bulk:
    keyed bones switched to quaternions, every other pose channel put at
    rest, Rigify limbs whose FK controls got keys switched to FK, and the
    automatic mappings stored. On failure everything is put back and the
    error raised. Returns (action, names of the switched Rigify limbs)."""
    names = setup.target.names
    channels, columns = [], []
    for k, j in enumerate(result.keyed):
        for i in range(4):
            channels.append((armature_data.bone_path(names[j], "rotation_quaternion"), i, names[j]))
            columns.append(result.rotations[:, k, i])
    for k, j in enumerate(result.located):
        for i in range(3):
            channels.append((armature_data.bone_path(names[j], "location"), i, names[j]))
            columns.append(result.locations[:, k, i])
    values = np.stack(columns, axis=1)
    ad = target.animation_data
    old_action = ad.action if ad else None
    backup = _PoseBackup(target)
    new = None
    try:
        new = compat.new_action(target, name)
        for j in result.keyed:
            target.pose.bones[names[j]].rotation_mode = "QUATERNION"
        backup.reset_to_rest()
        compat.write_curves(new, target, channels, frames, values)
        switched = _switch_rigify_to_fk(target, [names[j] for j in result.keyed], backup)
    except Exception:
        backup.restore()
        if new is not None:
            if old_action is not None:
                compat.assign_action(target, old_action)
            else:
                target.animation_data.action = None
            bpy.data.actions.remove(new)
        raise
    return new, switched


def retarget(context, source, target, source_tpose="AUTO", source_frame=1, target_tpose="AUTO",
             target_frame=1, root_motion="HIPS", scale=None, prefer="DEF", action_name="",
             progress=None):
    """Retarget the source's action onto ``target`` as a new action assigned
    to it (see :func:`plan_for` and :func:`write_action`). Returns (action,
    sentence for the report, [warnings]); ``progress(fraction)`` is called
    along the way."""
    step = progress or (lambda f: None)
    setup = plan_for(context, source, target, source_tpose, source_frame, target_tpose, target_frame,
                     root_motion, scale, prefer)
    step(0.2)
    action, frames, _names, pose = source_motion(source)
    step(0.4)
    result = retarget_pose(setup, pose)
    step(0.6)
    checks = check_result(setup, result, target)
    new, switched = write_action(target, setup, result, frames,
                                 action_name or "%s on %s" % (action.name, target.name))
    target["mm_size_ratio"] = float(setup.plan.scale)      # shown in the Retarget panel
    if setup.source_auto:
        store_mapping(source, setup.source_map)
    if setup.target_auto:
        store_mapping(target, setup.target_map)
    step(1.0)
    plan = setup.plan
    inbetween = [lab for lab in plan.labels if lab not in humanoid_joints.CANONICAL]
    auto = [o.name for o, a in ((source, setup.source_auto), (target, setup.target_auto)) if a]
    sentence = ("Retargeted %d frames of %s onto %s as %s: %d bones keyed%s, translation scaled by %.3f; "
                "T-poses: source %s, target %s%s." % (
                    len(frames), action.name, target.name, new.name, len(result.keyed),
                    " (%d in-between)" % len(inbetween) if inbetween else "", plan.scale,
                    setup.tpose_words[0], setup.tpose_words[1],
                    "; mapped automatically: %s" % " and ".join(auto) if auto else ""))
    if switched:
        sentence += " Switched %s to FK (IK_FK = 1) so the FK keys drive them." % _join_short(switched)
    return new, sentence, setup.warnings + checks


def _join_short(items, limit=4):
    items = list(items)
    head = ", ".join(items[:limit])
    return head + (" and %d more" % (len(items) - limit) if len(items) > limit else "")


def _switch_rigify_to_fk(obj, keyed, backup):
    """Rigify limbs whose FK controls got keys: set their IK_FK switch
    (a custom property on '<limb>_parent.<side>') to FK."""
    keyed = set(keyed)
    switched = []
    for pb in obj.pose.bones:
        if "IK_FK" in pb.keys() and "_parent" in pb.name and pb.name.replace("_parent", "_fk") in keyed:
            backup.props.append((pb.name, "IK_FK", pb["IK_FK"]))
            pb["IK_FK"] = 1.0
            switched.append(pb.name)
    return switched
