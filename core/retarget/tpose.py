"""T-poses: the canonical T-pose directions, a skeleton's T-pose computed
from its rest pose, how far its arms hang (an A-pose), and how tall it stands
in its T-pose (the retarget's scale)."""

import numpy as np

from ..maths import transforms as tf
from .rig import RetargetError, join_names
from .rotations import shortest_arc

_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])

# The joints a chain joint points at, nearest first (the first one mapped wins).
_CHAIN_NEXT = {
    "Spine": ("Chest", "UpperChest", "Neck", "Head"),
    "Chest": ("UpperChest", "Neck", "Head"),
    "UpperChest": ("Neck", "Head"),
    "Neck": ("Head",),
    "Head": (),
}
for _s in ("Left", "Right"):
    _CHAIN_NEXT.update({
        _s + "UpperArm": (_s + "LowerArm", _s + "Hand"),
        _s + "LowerArm": (_s + "Hand",),
        _s + "Hand": (),
        _s + "UpperLeg": (_s + "LowerLeg", _s + "Foot"),
        _s + "LowerLeg": (_s + "Foot",),
    })
_SPINE = ("Spine", "Chest", "UpperChest", "Neck", "Head")
# A rest pose that is no T-pose at all (the whole body turned from the bone
# directions): the hips, collars and feet are turned too.
_CHAIN_NEXT.update({"Hips": ("Spine", "Chest", "UpperChest", "Neck", "Head")})
for _s in ("Left", "Right"):
    _CHAIN_NEXT.update({_s + "Shoulder": (_s + "UpperArm",), _s + "Foot": (_s + "Toes",), _s + "Toes": ()})
# Where a foot points in a built T-pose: forward (-Y) and down, as a standing
# foot's ankle-to-ball line does (most takes and characters: 20-35 degrees).
FOOT_DOWN_DEGREES = 25.0
_FEET = ("LeftFoot", "RightFoot")
_FLOOR_JOINTS = ("LeftFoot", "RightFoot", "LeftToes", "RightToes")
# The canonical joints whose heads make the pelvis point.
HIP_JOINTS = ("LeftUpperLeg", "RightUpperLeg")


def tpose_directions(straighten_spine=False, side_sign=1.0, whole_body=False):
    """{canonical joint: unit direction} of the canonical T-pose in armature
    space: the left arm along +X (the character faces -Y), the right along
    -X, thighs and shins down, and with ``straighten_spine`` the spine, neck
    and head up. ``side_sign`` -1 swaps the arms (a rig facing +Y).
    ``whole_body`` also turns the hips up, the collars out and the feet and
    toes forward (a rest pose that is not a T-pose at all)."""
    out = {}
    if whole_body:
        straighten_spine = True
        out["Hips"] = np.array([0.0, 0.0, 1.0])
        down = np.radians(FOOT_DOWN_DEGREES)
        for side, sx in (("Left", side_sign), ("Right", -side_sign)):
            out[side + "Shoulder"] = np.array([sx, 0.0, 0.0])
            out[side + "Foot"] = np.array([0.0, -side_sign * np.cos(down), -np.sin(down)])
            out[side + "Toes"] = np.array([0.0, -side_sign, 0.0])
    for side, sx in (("Left", side_sign), ("Right", -side_sign)):
        for j in ("UpperArm", "LowerArm", "Hand"):
            out[side + j] = np.array([sx, 0.0, 0.0])
        for j in ("UpperLeg", "LowerLeg"):
            out[side + j] = np.array([0.0, 0.0, -1.0])
    if straighten_spine:
        for j in _SPINE:
            out[j] = np.array([0.0, 0.0, 1.0])
    return out


def _descendant_point(parents, offsets, top, bone):
    """Head of ``bone`` in the frame of its ancestor ``top`` with everything
    between at rest; None if ``bone`` is not below ``top``."""
    m = offsets[bone]
    p = parents[bone]
    while p >= 0 and p != top:
        m = offsets[p] @ m
        p = parents[p]
    return m[:3, 3] if p == top else None


def _turn(v, d):
    """The least turn taking ``v`` onto ``d``; a bone pointing the opposite way
    turns half a turn about the vertical (it keeps its top side up), or about
    X when it is vertical itself."""
    v = np.asarray(v, dtype=np.float64) / np.linalg.norm(v)
    if v @ d > -1.0 + 1e-9:
        return tf.quat_to_matrix(shortest_arc(v, d))
    axis = np.array([1.0, 0.0, 0.0]) if abs(d[2]) > 0.9 else np.array([0.0, 0.0, 1.0])
    axis = axis - (axis @ d) * d
    return tf.quat_to_matrix(tf.quat_from_axis_angle(axis / np.linalg.norm(axis), np.pi))


def compute_tpose(skeleton, straighten_spine=False, whole_body=False):
    """The canonical T-pose of ``skeleton`` built from its rest pose (see the
    module notes; ``whole_body``: see :func:`tpose_directions`). Returns
    (basis rotations (J, 4) local quaternions, pose matrices (J, 4, 4) in
    armature space)."""
    sk = skeleton
    J = len(sk.names)
    dirs = tpose_directions(straighten_spine, sk.side_sign(), whole_body)
    turn = {}
    for joint, d in dirs.items():
        j = sk.joints.get(joint)
        if j is None:
            continue
        end = None
        for nxt in _CHAIN_NEXT[joint]:
            k = sk.joints.get(nxt)
            if k is not None:
                end = _descendant_point(sk.parents, sk.offsets, j, k)
                if end is not None:
                    break
        if end is None or np.linalg.norm(end) < 1e-9:
            end = np.array([0.0, max(sk.lengths[j], 1e-6), 0.0])
        turn[j] = (end, d)
    keep = set() if whole_body else {sk.joints[f] for f in _FEET if f in sk.joints}
    basis = np.tile(_IDENTITY, (J, 1))
    pose = np.empty((J, 4, 4))
    for j, p in enumerate(sk.parents):
        pose[j] = sk.offsets[j] if p < 0 else pose[p] @ sk.offsets[j]
        if j in turn:
            end, d = turn[j]
            v = pose[j, :3, :3] @ end
            turn_by = _turn(v, d) if whole_body else tf.quat_to_matrix(shortest_arc(v, d))
            new = turn_by @ pose[j, :3, :3]
        elif j in keep:
            new = sk.rest[j, :3, :3]
        else:
            continue
        basis[j] = tf.matrix_to_quat(pose[j, :3, :3].T @ new)
        pose[j, :3, :3] = new
    return basis, sk.from_frame(pose)


# Upper arms hanging further below level than this at rest make an A-pose.
A_POSE_DEGREES = 25.0


def arm_droop(skeleton):
    """Mean angle (degrees) of the upper arms below level in the rest pose
    (body frame; from the upper arm's head to the forearm's), or None when
    the arms are not mapped."""
    sk = skeleton
    out = []
    for side in ("Left", "Right"):
        a, b = sk.joints.get(side + "UpperArm"), sk.joints.get(side + "LowerArm")
        if a is None or b is None:
            continue
        d = sk.rest[b, :3, 3] - sk.rest[a, :3, 3]
        n = np.linalg.norm(d)
        if n > 1e-9:
            out.append(np.degrees(np.arcsin(np.clip(-d[2] / n, -1.0, 1.0))))
    return float(np.mean(out)) if out else None


def rest_not_standing(skeleton):
    """Why the rest pose of ``skeleton`` cannot be read as a T-pose (a short
    phrase), or None when it stands: its head above its hips and its legs
    hanging down (body frame). A rest with every bone along its parent's X
    axis, as some takes come, is neither."""
    sk = skeleton
    hips = [sk.joints[j] for j in HIP_JOINTS]
    pelvis = sk.rest[hips, :3, 3].mean(axis=0)
    head = sk.joints.get("Head", sk.joints.get("Neck"))
    if head is not None:
        up = sk.rest[head, :3, 3] - pelvis
        if not up[2] >= 0.5 * np.linalg.norm(up) or not np.linalg.norm(up) > 1e-9:
            return "its head is not above its hips"
    for side in ("Left", "Right"):
        a, b = sk.joints[side + "UpperLeg"], sk.joints.get(side + "Foot")
        if b is None:
            continue
        leg = sk.rest[b, :3, 3] - sk.rest[a, :3, 3]
        if not -leg[2] >= 0.5 * np.linalg.norm(leg) or not np.linalg.norm(leg) > 1e-9:
            return "its legs do not hang down"
    return None


def standing_height(skeleton, tpose):
    """(pelvis height above the floor, floor height) in the T-pose. The
    pelvis point is the midpoint of the two hip joints (upper-leg heads),
    which every skeleton has in the same place whatever its hips bone looks
    like (Rigify's torso control starts 15 cm higher); the floor is the
    lowest head of the mapped feet and toes. Joints are heads: where an
    importer put a bone's tail is a guess (glTF's default puts a foot's tail
    metres away), so no tail is measured."""
    sk = skeleton
    hips = [sk.joints[j] for j in HIP_JOINTS]
    feet = [sk.joints[j] for j in _FLOOR_JOINTS if j in sk.joints]
    unknown = [sk.names[j] for j in hips + feet if not tpose.known(j)]
    if unknown:
        raise RetargetError("The T-pose of the %s does not hold %s." % (sk.label, join_names(unknown)))
    tpose = sk.frame_tpose(tpose)
    head = sk.joints.get("Head", sk.joints.get("Neck"))
    if head is not None and tpose.known(head):
        up = tpose.heads[head] - tpose.heads[hips].mean(axis=0)
        if up[2] < 0.5 * np.linalg.norm(up):
            raise RetargetError(
                "The %s does not stand upright (its head is not above its hips once its object's tilt and "
                "scale are taken in): it lies on its side or upside down; turn it upright (its object or, in "
                "Edit Mode, its bones) and try again." % sk.label)
    floor = float(tpose.heads[feet, 2].min())
    pelvis = float(tpose.heads[hips, 2].mean())
    height = pelvis - floor
    if not height > 1e-6:
        raise RetargetError("In the T-pose of the %s the hip joints (%.3f) are not above the feet (%.3f)."
                            % (sk.label, pelvis, floor))
    return height, floor
