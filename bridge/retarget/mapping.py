"""The humanoid mapping of an armature ({canonical joint: bone}): made
automatically, stored on the armature (``armature.motion_matching.bone_map``),
read back and checked (a preset)."""

from ...core.skeleton import humanoid_joints, humanoid_map
from .rig import skeleton_arrays


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
