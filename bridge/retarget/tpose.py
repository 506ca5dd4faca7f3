"""T-poses: the pose Blender shows on a frame, the T-pose stored on an
armature, the one a retarget uses by source (stored, rest, a frame; the rest
pose unless it is an A-pose), and Make T-Pose (computed, rest or a frame,
stored and posed)."""

import os

import numpy as np

from ...core.retarget import rig as rt_rig, tpose as rt_tpose
from ...core.maths import transforms as tf
from ...core.errors import MotionMatchingError
from ..blender import armature_data
from .mapping import mapping_for, store_mapping
from .rig import skeleton


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


def unless_a_pose(sk, tpose, words, notes, source=False):
    """The rest pose as the T-pose, unless its arms hang down (an A-pose) or,
    for a ``source`` take, it does not stand at all (see core
    tpose.rest_not_standing): then the computed T-pose (Make T-Pose's; the
    whole body turned for a rest that does not stand), not stored, and a
    note. A target that does not stand is refused later (its mesh would lie)."""
    why = rt_tpose.rest_not_standing(sk) if source else None
    if why is not None:
        notes.append("the rest pose of %s is not a T-pose (%s), so its T-pose was built from its bone directions "
                     "(legs down, spine up, arms out)" % (sk.label, why))
        pose = rt_tpose.compute_tpose(sk, whole_body=True)[1]
        return rt_rig.TPose.from_matrices(pose), "T-pose built from the bone directions"
    droop = rt_tpose.arm_droop(sk)
    if droop is None or droop < rt_tpose.A_POSE_DEGREES:
        return tpose, words
    notes.append("the rest pose of %s is an A-pose (arms %.0f degrees below level), so its T-pose was computed "
                 "(Make T-Pose stores one to check or edit)" % (sk.label, droop))
    return rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(sk)[1]), "computed T-pose (A-pose rest)"


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
