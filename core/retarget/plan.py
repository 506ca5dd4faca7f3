"""The retarget plan: everything that does not change from frame to frame
(the bone pairs and their corrections, the scale, the bones that carry the
root motion, the order the target bones are posed in), made by :func:`prepare`."""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..maths import transforms as tf
from ..skeleton import humanoid_joints
from .pairing import pair_bones, path_between
from .rig import RetargetError, RetargetSkeleton, join_names
from .rotations import inverse
from .tpose import HIP_JOINTS, standing_height

# The canonical joint each joint hangs from (the humanoid hierarchy).
_CANON_UP = {"Spine": "Hips", "Chest": "Spine", "UpperChest": "Chest", "Neck": "UpperChest", "Head": "Neck"}
for _s in ("Left", "Right"):
    _CANON_UP.update({
        _s + "Shoulder": "UpperChest", _s + "UpperArm": _s + "Shoulder", _s + "LowerArm": _s + "UpperArm",
        _s + "Hand": _s + "LowerArm", _s + "UpperLeg": "Hips", _s + "LowerLeg": _s + "UpperLeg",
        _s + "Foot": _s + "LowerLeg", _s + "Toes": _s + "Foot",
    })


@dataclass(eq=False)
class Plan:
    """Everything that does not change from frame to frame; made by :func:`prepare`.

    Bone indices are rows of ``source.names`` or ``target.names``; P is the
    number of bone pairs, Jt the number of target bones. Rotations are unit
    quaternions (w, x, y, z), positions in the body frame (metres, Z up).
    """

    source: RetargetSkeleton
    target: RetargetSkeleton
    root_motion: str              # "HIPS": the hips carry the translation; "ROOT": a root bone carries the ground motion
    labels: list                  # (P,) the canonical joint of each pair, or "<joint>-<n>" for an in-between bone
    source_index: np.ndarray      # (P,) the source bone of each pair
    target_index: np.ndarray      # (P,) the target bone of each pair
    correction: np.ndarray        # (P, 4) per pair, the turn from the source's T-pose to the target's: q_s0^-1 q_t0
    source_height: float          # standing pelvis height of the source in its T-pose (body frame, metres)
    target_height: float          # the same of the target
    scale: float                  # source positions to target positions (target_height / source_height unless given)
    source_hips: int              # the source's Hips bone
    target_hips: int              # the target's Hips bone
    source_root: Optional[int]    # the source bone whose ground motion a "ROOT" plan carries, else None
    target_root: Optional[int]    # the target bone above the hips that carries it, else None
    anchor: dict                  # {target bone: (mapped bone it is kept under, (3,) its rest head in that bone's frame)}
    #                               for mapped bones that do not hang from their canonical parent
    walk: list                    # [(target bone, its parent or -1, its pair or None)]: parents and constraint targets first
    keyed: np.ndarray             # (K,) target bones that get a rotation key (the paired ones, then the root)
    located: np.ndarray           # (L,) target bones that also get a location key (hips, root, anchored bones)
    overridden: list              # names of keyed target bones whose own constraints replace what the keys say
    offset_rot: np.ndarray        # (Jt, 4) each target bone's rest rotation relative to its parent
    offset_pos: np.ndarray        # (Jt, 3) each target bone's rest head in its parent's frame
    rest_rot: np.ndarray          # (Jt, 4) each target bone's rest rotation in the body frame
    rest_pos: np.ndarray          # (Jt, 3) each target bone's rest head in the body frame
    source_root_rest: Optional[np.ndarray]  # (4,) the source root's rest rotation, None without root motion
    source_leg_paths: list        # per hip joint, the source bones from below the hips down to the upper leg
    source_offset_rot: np.ndarray  # (Js, 4) each source bone's rest rotation relative to its parent
    target_hip_joints: list       # the target's two upper-leg bones (their heads make the pelvis point)


def prepare(source, target, source_tpose, target_tpose, root_motion="HIPS", scale=None,
            source_root=None, target_root=None):
    """Pair the skeletons and fix the per-bone corrections.

    ``source``/``target``: :class:`RetargetSkeleton`; ``*_tpose``: :class:`TPose`.
    ``root_motion``: "HIPS" puts the whole translation on the target hips;
    "ROOT" also keys ``target_root`` (a target bone above the hips; default:
    the hips' topmost ancestor) with the ground motion of ``source_root``
    (the source's root bone index, required then). ``scale``: None for the
    ratio of standing hips heights, else that factor.
    """
    if root_motion not in ("HIPS", "ROOT"):
        raise RetargetError("root_motion must be \"HIPS\" or \"ROOT\" (got %r)." % (root_motion,))
    # 1. The bone pairs both T-poses know, and per pair the turn from the source's T-pose to the target's.
    labels, source_index, target_index = _pairs_in_tposes(source, target, source_tpose, target_tpose)
    q_s0 = tf.quat_normalize(source.frame_tpose(source_tpose).rotations[source_index])
    q_t0 = tf.quat_normalize(target.frame_tpose(target_tpose).rotations[target_index])
    correction = tf.quat_mul(inverse(q_s0), q_t0)
    # 2. The scale of the translation.
    source_height = standing_height(source, source_tpose)[0]
    target_height = standing_height(target, target_tpose)[0]
    if scale is None:
        scale = target_height / source_height
    else:
        given = scale
        scale = float(scale)
        if not scale > 0:
            raise RetargetError("The scale must be above zero (got %r)." % (given,))
    source_hips = source.joints["Hips"]
    target_hips = target.joints["Hips"]
    # 3. The bones that carry the root motion (none with "HIPS").
    if root_motion == "ROOT":
        source_root, target_root = _root_bones(target, target_index, target_hips, source_root, target_root)
    else:
        source_root = target_root = None
    # 4. The target bones to walk, in order, and those keyed and located.
    walk = _plan_walk(target, labels, target_index, target_hips, target_root)
    # 5. What the solve reads every frame: rest rotations and offsets, the source's hip joints.
    rest = _plan_rest_data(source, target, source_hips, source_root)
    return Plan(source=source, target=target, root_motion=root_motion, labels=labels, source_index=source_index,
                target_index=target_index, correction=correction, source_height=source_height,
                target_height=target_height, scale=scale, source_hips=source_hips, target_hips=target_hips,
                source_root=source_root, target_root=target_root, **walk, **rest)


def _pairs_in_tposes(source, target, source_tpose, target_tpose):
    """(labels, source indices, target indices) of the paired bones both T-poses
    know. Canonical pairs need both T-poses; in-between ones are dropped without
    them."""
    labels, s_idx, t_idx = pair_bones(source, target)
    keep, missing = [], []
    for k, (lab, s, t) in enumerate(zip(labels, s_idx, t_idx)):
        ok_s, ok_t = source_tpose.known(s), target_tpose.known(t)
        if ok_s and ok_t:
            keep.append(k)
        elif lab in humanoid_joints.CANONICAL:
            if not ok_s:
                missing.append("%s (%s of the %s)" % (source.names[s], lab, source.label))
            if not ok_t:
                missing.append("%s (%s of the %s)" % (target.names[t], lab, target.label))
    if missing:
        raise RetargetError("The T-pose lacks %s: store a T-pose that covers them, or use the rest pose "
                            "or a frame as the T-pose." % join_names(missing))
    return [labels[k] for k in keep], s_idx[keep], t_idx[keep]


def _root_bones(target, target_index, target_hips, source_root, target_root):
    """(source root, target root) bone indices for root motion onto a root bone."""
    if source_root is None:
        raise RetargetError("Root motion onto a root bone needs the source's root bone "
                            "(add a virtual root to the source first), or put the motion on the hips.")
    above = _dependencies(target, target_hips) - {target_hips}
    if target_root is None:
        # A top bone the hips hang from, through parents or constraints
        # (Rigify's torso follows 'root' through an Armature constraint).
        tops = [j for j in sorted(above) if target.parents[j] < 0 and j not in target.constraints]
        named = [j for j in tops if target.names[j].lower() == "root"]
        target_root = (named or tops or [None])[0]
    if target_root is None or target_root not in above:
        raise RetargetError("The %s has no bone above its hips (%s) to carry the root motion: "
                            "put the motion on the hips." % (target.label, target.names[target_hips]))
    if target_root in set(target_index.tolist()):
        raise RetargetError("The root bone %s of the %s is also a mapped joint."
                            % (target.names[target_root], target.label))
    return int(source_root), int(target_root)


def _plan_walk(target, labels, target_index, target_hips, target_root):
    """The target bones to walk (the keyed ones, their ancestors and whatever
    their ancestors' constraints follow, each after its parent and targets), the
    anchored bones, and the bones keyed, located and overridden: the
    :class:`Plan` fields ``anchor``, ``walk``, ``keyed``, ``located``, ``overridden``."""
    pair_of = {int(t): k for k, t in enumerate(target_index)}
    start = set(pair_of) | {target_hips}
    if target_root is not None:
        start.add(target_root)
    # Mapped bones that do not hang from the joint they belong under (Rigify's
    # DEF-thigh hangs from ORG-spine, not from DEF-spine): keep their head
    # where it sits at rest in that joint's frame, with a location key.
    anchor = {}
    rest_inv = tf.rigid_inverse(target.rest)
    for lab, j in zip(labels, target_index):
        up = _CANON_UP.get(lab)
        while up is not None and up not in target.joints:
            up = _CANON_UP.get(up)
        if up is None:
            continue
        a = target.joints[up]
        if a in _dependencies(target, int(j)) or int(j) in _dependencies(target, a):
            continue
        anchor[int(j)] = (a, (rest_inv[a] @ target.rest[j])[:3, 3])
    needed = set()
    for j in start | {a for a, _rel in anchor.values()}:
        needed |= _dependencies(target, j)
    order = _dependency_order(target, needed, {j: a for j, (a, _rel) in anchor.items()})
    walk = [(j, int(target.parents[j]), pair_of.get(j)) for j in order]
    keyed = [int(t) for t in target_index]
    if target_root is not None:
        keyed.append(target_root)
    located = [target_hips] + ([target_root] if target_root is not None else [])
    located += [j for j in target_index.tolist() if j in anchor]
    # Keyed bones whose own constraints replace what the keys say.
    overridden = [target.names[j] for j in keyed if any(c.influence > 0 for c in target.constraints.get(j, ()))]
    return dict(anchor=anchor, walk=walk, keyed=np.asarray(keyed, dtype=np.int64),
                located=np.asarray(located, dtype=np.int64), overridden=overridden)


def _plan_rest_data(source, target, source_hips, source_root):
    """Rest rotations and offsets of the target, the source root's rest, and
    the source's hip joints (the bones from below its hips down to each upper
    leg): the :class:`Plan` fields from ``offset_rot`` on."""
    off = target.offsets
    leg_paths = []
    for joint in HIP_JOINTS:
        leg = source.joints[joint]
        path = path_between(source.parents, source_hips, leg)
        if path is None:
            raise RetargetError("The %s %s of the %s does not hang from its hips (%s)." % (
                joint, source.names[leg], source.label, source.names[source_hips]))
        leg_paths.append(path + [leg])
    return dict(
        offset_rot=tf.matrix_to_quat(off[:, :3, :3]),
        offset_pos=off[:, :3, 3].copy(),
        rest_rot=tf.matrix_to_quat(target.rest[:, :3, :3]),
        rest_pos=target.rest[:, :3, 3].copy(),
        source_root_rest=(tf.matrix_to_quat(source.rest[source_root, :3, :3]) if source_root is not None else None),
        source_leg_paths=leg_paths,
        source_offset_rot=tf.matrix_to_quat(source.offsets[:, :3, :3]),
        target_hip_joints=[target.joints[j] for j in HIP_JOINTS])


def _dependencies(skeleton, bone):
    """``bone`` and every bone its pose depends on: ancestors and constraint
    targets, recursively."""
    out, stack = set(), [bone]
    while stack:
        j = stack.pop()
        if j in out:
            continue
        out.add(j)
        if skeleton.parents[j] >= 0:
            stack.append(int(skeleton.parents[j]))
        for c in skeleton.constraints.get(j, ()):
            stack.extend(t for t, _w in c.targets)
    return out


def _dependency_order(skeleton, bones, extra=None):
    """``bones`` ordered so that parents, constraint targets and ``extra``
    {bone: bone it needs} come first."""
    bones = set(bones)
    deps = {j: set() for j in bones}
    for j, a in (extra or {}).items():
        deps[j].add(a)
    for j in bones:
        p = skeleton.parents[j]
        if p >= 0:
            deps[j].add(int(p))
        for c in skeleton.constraints.get(j, ()):
            deps[j].update(t for t, _w in c.targets if t != j)
    order, done = [], set()
    ready = sorted(j for j in bones if not deps[j])
    while ready:
        j = ready.pop(0)
        order.append(j)
        done.add(j)
        for k in bones:
            if k not in done and k not in ready and deps[k] <= done:
                ready.append(k)
        ready.sort()
    if len(order) != len(bones):
        stuck = sorted(bones - done)
        raise RetargetError("The bones and constraints of the %s form a loop through %s."
                            % (skeleton.label, join_names(skeleton.names[j] for j in stuck[:4])))
    return order
