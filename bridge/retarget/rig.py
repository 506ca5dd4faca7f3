"""Armatures as core's retargeting reads them (core.retarget.rig): bone
arrays, the object's ground and body frames, the skeleton in its body frame,
and the target's pose constraints that retargeting can follow."""

import numpy as np

from ...core.retarget import rig as rt_rig
from ..blender import armature_data


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
