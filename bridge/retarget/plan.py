"""The retarget plan made from two armatures (or from the source a database
recorded): mappings, T-poses and the target's constraints read, the core plan
made (core.retarget.plan) and the warnings it calls for. Changes nothing in
the file."""

from dataclasses import dataclass, field

import numpy as np

from ...core.retarget import plan as rt_plan, rig as rt_rig
from ...core.database.motion_database import SourceRecord
from ...core.errors import MotionMatchingError
from ..blender import armature_data
from .mapping import mapping_for
from .meshes import mesh_size_note
from .rig import object_frames, read_constraints, skeleton, skeleton_arrays
from .tpose import tpose_for, unless_a_pose


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
            tpose, words = unless_a_pose(src, tpose, words, notes, source=True)
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
        src_tp, src_words = unless_a_pose(src, src_tp, src_words, notes, source=True)
    if target_tpose == "AUTO" and tgt_words == "rest pose":
        tgt_tp, tgt_words = unless_a_pose(tgt, tgt_tp, tgt_words, notes)
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
                        "target's constraints muted" % (len(plan.overridden), join_short(plan.overridden)))
        tgt = skeleton(target, tgt_label, target_map)
        plan = make_plan(tgt)
        others = []
    walked = {tgt.names[j] for j, _p, _k in plan.walk}
    ignored = sorted({"%s (%s)" % (b, t.replace("_", " ").title()) for b, t in others if b in walked})
    if ignored:
        warnings.append("constraints not followed, so these bones may move the result: %s"
                        % join_short(ignored))
    size = mesh_size_note(target, plan.target_height)
    if size:
        warnings.append(size)
    return Setup(plan=plan, source=src, target=tgt, source_map=source_map, source_auto=source_auto,
                 target_map=target_map, target_auto=target_auto, ground=object_frames(target)[0],
                 tpose_words=(src_words, tgt_words), warnings=warnings)


def join_short(items, limit=4):
    items = list(items)
    head = ", ".join(items[:limit])
    return head + (" and %d more" % (len(items) - limit) if len(items) > limit else "")
