"""Retargeting through T-pose correspondence (notes, section 9).

Both skeletons are mapped to the canonical humanoid joints (core.skeleton.humanoid).
With each skeleton's T-pose known as armature-space bone rotations, every
paired bone follows

    q_t = q_s * q_s0^-1 * q_t0

(q_s: source bone on this frame, q_s0: source bone in T-pose, q_t0: target
bone in T-pose, all armature-space rotations of the bones' pose matrices). The
rotations are then turned into each target bone's local (basis) rotation,
parents first, with Blender's rule pose = parent_pose @ offset @ basis.

Conventions and decisions
-------------------------
- The body frame: each skeleton may carry its object's matrix without the
  ground part (see :func:`split_object_matrix`): the tilt and uniform scale
  an importer gives (glTF and FBX imports of Mixamo characters: turned +90
  degrees about X, scale 0.01, bones Y up in centimetres). The maths runs in
  that frame (Z up, metres, facing -Y), so such a rig moves as it does with
  its transforms applied. Inputs and outputs stay armature-space: source
  rotations and heads, T-poses, the keys written (locations in the rig's
  own units). What remains of the object (its place and its turn about the
  vertical, the ground frame) carries the motion: a character moved or
  turned on the ground walks there.
- Pairs: every canonical joint mapped on both sides, plus the unmapped bones
  between two paired joints when both skeletons have the same number of them
  there (the sample's Chest3 between Chest2 and Chest4 and a fourth spine bone
  on the target, say), paired in order. Other target bones keep their rest
  pose (basis identity): fingers, face, twist segments, Rigify's mechanism.
- Translation: the target's pelvis point (the midpoint of its two hip
  joints, i.e. upper-leg heads) follows the source's, scaled about the
  armature origin (z = 0 is the ground of both, as for the virtual root and
  for rigs standing on their origin) by the ratio of the standing pelvis
  heights: pelvis above the lowest foot/toe point, each measured in its own
  T-pose, so it does not matter where a T-pose stands (a BVH rest pose has
  its hips at the origin). The target hips bone is placed to achieve that;
  the pelvis point, unlike the hips bone's head, is in the same place on
  every skeleton (Rigify's torso control starts 15 cm above the pelvis).
  With ``root_motion="ROOT"`` a target bone above the hips (its "root")
  also carries the source root's ground motion: the same turn about Z and
  the scaled ground position, at its own rest height; the hips then move
  relative to it.
- Target constraints: a keyed bone's local rotation is taken relative to its
  parent as Blender will evaluate it, so the constraints of unkeyed
  mechanism bones are followed (:class:`Constraint`: copy transforms,
  rotation, location, armature): Rigify's FK controls hang from such bones.
- A mapped target bone whose pose does not depend on the mapped joint it
  belongs under (Rigify's DEF-thigh hangs from ORG-spine, not DEF-spine)
  also gets a location key that keeps its head where it sits at rest in
  that joint's frame.
- The T-pose that make_tpose computes (:func:`compute_tpose`): from the rest
  pose, upper arm, forearm and hand turn by the shortest arc to point along
  +X (left) or -X (right), thighs and shins straight down, and with
  ``straighten_spine`` the spine, neck and head straight up; the feet keep
  their rest orientation in the armature (a rest pose stands on flat feet);
  shoulders (clavicles), hips and unmapped bones keep their rest relative to
  their parents. A bone's direction is from its head to the head of the next
  mapped joint of its chain, or to its own tail at the end of a chain. It
  follows the hierarchy only (constraints are not evaluated there).
"""

import numpy as np

from ..skeleton import humanoid
from ..maths import transforms as tf
from ..errors import MotionMatchingError

__all__ = [
    "RetargetError",
    "RetargetSkeleton",
    "TPose",
    "Constraint",
    "Plan",
    "Result",
    "shortest_arc",
    "slerp",
    "tpose_directions",
    "compute_tpose",
    "pair_bones",
    "standing_height",
    "arm_droop",
    "prepare",
    "retarget_frames",
    "target_pose",
    "target_frame_pose",
    "split_object_matrix",
    "slice_result",
]


class RetargetError(MotionMatchingError):
    """A retarget that cannot be set up or run."""


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
# The canonical joint each joint hangs from (the humanoid hierarchy).
_CANON_UP = {"Spine": "Hips", "Chest": "Spine", "UpperChest": "Chest", "Neck": "UpperChest", "Head": "Neck"}
for _s in ("Left", "Right"):
    _CANON_UP.update({
        _s + "Shoulder": "UpperChest", _s + "UpperArm": _s + "Shoulder", _s + "LowerArm": _s + "UpperArm",
        _s + "Hand": _s + "LowerArm", _s + "UpperLeg": "Hips", _s + "LowerLeg": _s + "UpperLeg",
        _s + "Foot": _s + "LowerLeg", _s + "Toes": _s + "Foot",
    })
_FEET = ("LeftFoot", "RightFoot")
_FLOOR_JOINTS = ("LeftFoot", "RightFoot", "LeftToes", "RightToes")


def _join(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ----------------------------------------------------------------------------
# Small pieces


def shortest_arc(a, b):
    """Unit quaternions (..., 4) of the smallest rotations taking directions
    ``a`` onto ``b`` (..., 3); opposite directions turn half a turn about an
    axis perpendicular to ``a``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    a, b = np.broadcast_arrays(a, b)
    q = np.concatenate([1.0 + np.sum(a * b, axis=-1, keepdims=True), np.cross(a, b)], axis=-1)
    opposite = q[..., 0] < 1e-9
    if np.any(opposite):
        ax = a[opposite]
        # Any axis perpendicular to a: cross with the coordinate axis a is least along.
        helper = np.eye(3)[np.argmin(np.abs(ax), axis=-1)]
        perp = np.cross(ax, helper)
        q[opposite] = np.concatenate([np.zeros((len(ax), 1)), perp], axis=-1)
    return tf.quat_normalize(q)


def _rot(q, v):
    return tf.quat_rotate(q, v)


def _inv(q):
    return tf.quat_conjugate(q)


def tpose_directions(straighten_spine=False, side_sign=1.0):
    """{canonical joint: unit direction} of the canonical T-pose in armature
    space: the left arm along +X (the character faces -Y), the right along
    -X, thighs and shins down, and with ``straighten_spine`` the spine, neck
    and head up. ``side_sign`` -1 swaps the arms (a rig facing +Y)."""
    out = {}
    for side, sx in (("Left", side_sign), ("Right", -side_sign)):
        for j in ("UpperArm", "LowerArm", "Hand"):
            out[side + j] = np.array([sx, 0.0, 0.0])
        for j in ("UpperLeg", "LowerLeg"):
            out[side + j] = np.array([0.0, 0.0, -1.0])
    if straighten_spine:
        for j in _SPINE:
            out[j] = np.array([0.0, 0.0, 1.0])
    return out


def _check_order(parents):
    parents = np.asarray(parents, dtype=np.int64)
    if np.any(parents >= np.arange(len(parents))):
        raise RetargetError("The bones must be listed with every parent before its children.")
    return parents


def _rest_pose(parents, offsets):
    """Armature-space rest matrices (J, 4, 4) rebuilt from the offsets."""
    out = np.empty_like(offsets)
    for j, p in enumerate(parents):
        out[j] = offsets[j] if p < 0 else out[p] @ offsets[j]
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


# ----------------------------------------------------------------------------
# Object frames


def _frame_parts(frame, label):
    """(scale, 3x3 rotation, shift) of a body frame; identity for None."""
    if frame is None:
        return 1.0, np.eye(3), np.zeros(3)
    f = np.asarray(frame, dtype=np.float64)
    if f.shape != (4, 4) or not np.all(np.isfinite(f)):
        raise RetargetError("The frame of the %s must be a 4x4 matrix." % label)
    lin = f[:3, :3]
    det = np.linalg.det(lin)
    scale = abs(det) ** (1.0 / 3.0)
    if not scale > 1e-9:
        raise RetargetError("The object of the %s is scaled to nothing: give it a scale above zero." % label)
    turn = lin / scale
    if det < 0 or np.abs(turn.T @ turn - np.eye(3)).max() > 1e-4:
        raise RetargetError("The object of the %s is scaled unevenly or mirrored: apply its scale "
                            "(Ctrl-A, Scale) or give it the same scale on X, Y and Z." % label)
    return float(scale), turn, f[:3, 3].copy()


def split_object_matrix(matrix):
    """An object's world matrix split as ground @ body: ``ground`` (4, 4) its
    place and its turn about the vertical (what carries the motion), ``body``
    (4, 4) the rest: the tilt and uniform scale an importer gives the
    armature (Y-up bones: +90 degrees about X). The turn is read from where
    the object's X axis points (an importer's tilt keeps X level); with X
    nearly vertical there is no turn."""
    m = np.asarray(matrix, dtype=np.float64)
    x = m[:3, 0]
    ground = np.eye(4)
    ground[:3, 3] = m[:3, 3]
    if np.hypot(x[0], x[1]) > 0.3 * np.linalg.norm(x):
        a = np.arctan2(x[1], x[0])
        ground[:2, :2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    body = np.linalg.inv(ground) @ m
    body[:3, 3] = 0.0
    return ground, body


# ----------------------------------------------------------------------------
# Skeletons and T-poses


class RetargetSkeleton:
    """What retargeting needs of one armature.

    ``names`` (J,), ``parents`` (J,) with parents first, ``offsets`` (J, 4, 4)
    each bone's rest relative to its parent (a root bone's own rest; read
    them with armature_data.rest_offsets for Blender's exact values),
    ``lengths`` (J,), ``mapping`` {canonical joint: bone name}; ``label``
    names the skeleton in messages ("source 'Armature'"). ``constraints``
    {bone index: [:class:`Constraint` or (kind, targets, influence)]} are the
    pose constraints the retarget follows on the target (see :class:`Constraint`);
    a bone listed there is never keyed as an in-between bone.
    ``frame`` (4, 4): the body frame (tilt times uniform scale, see
    :func:`split_object_matrix`); ``offsets``, ``rest`` and ``lengths`` are
    then held in it (root offsets turned, every translation scaled), and
    ``scale``/``turn`` keep its parts for :meth:`to_frame`/:meth:`from_frame`.
    """

    def __init__(self, names, parents, offsets, lengths, mapping, label="skeleton", constraints=None,
                 frame=None):
        self.names = [str(n) for n in names]
        self.label = label
        J = len(self.names)
        self.parents = _check_order(parents)
        self.offsets = np.array(offsets, dtype=np.float64)
        self.lengths = np.array(lengths, dtype=np.float64)
        if self.parents.shape != (J,) or self.offsets.shape != (J, 4, 4) or self.lengths.shape != (J,):
            raise RetargetError("The %s has %d bones but parents %s, offsets %s and lengths %s."
                                % (label, J, self.parents.shape, self.offsets.shape, self.lengths.shape))
        self.scale, self.turn, self.shift = _frame_parts(frame, label)
        roots = self.parents < 0
        self.offsets[:, :3, 3] *= self.scale
        self.offsets[roots, :3, :3] = self.turn @ self.offsets[roots, :3, :3]
        self.offsets[roots, :3, 3] = self.offsets[roots, :3, 3] @ self.turn.T + self.shift
        self.lengths *= self.scale
        mapping = {k: v for k, v in dict(mapping).items() if v}
        try:
            humanoid.check_mapping(mapping, self.names)
        except humanoid.HumanoidError as ex:
            raise RetargetError("The bone mapping of the %s cannot be used: %s" % (label, ex)) from None
        index = {n: i for i, n in enumerate(self.names)}
        self.joints = {j: index[mapping[j]] for j in humanoid.CANONICAL if j in mapping}
        self.rest = _rest_pose(self.parents, self.offsets)
        self.constraints = {}
        for j, stack in dict(constraints or {}).items():
            checked = []
            for item in stack:
                c = item if isinstance(item, Constraint) else Constraint(*item)
                if any(not 0 <= t < J for t, _w in c.targets):
                    raise RetargetError("A constraint of %s targets a bone index out of range." % self.names[j])
                checked.append(c)
            if checked:
                self.constraints[int(j)] = checked

    def to_frame(self, pose):
        """Armature-space pose matrices (..., 4, 4) into the body frame."""
        pose = np.asarray(pose, dtype=np.float64)
        out = pose.copy()
        out[..., :3, :3] = self.turn @ pose[..., :3, :3]
        out[..., :3, 3] = self.scale * pose[..., :3, 3] @ self.turn.T + self.shift
        return out

    def from_frame(self, pose):
        """Body-frame pose matrices (..., 4, 4) back into armature space."""
        pose = np.asarray(pose, dtype=np.float64)
        out = pose.copy()
        out[..., :3, :3] = self.turn.T @ pose[..., :3, :3]
        out[..., :3, 3] = (pose[..., :3, 3] - self.shift) @ self.turn / self.scale
        return out

    def frame_tpose(self, tpose):
        """An armature-space :class:`TPose` in the body frame."""
        q = tf.quat_mul(tf.matrix_to_quat(self.turn), tpose.rotations)
        return TPose(q, self.scale * tpose.heads @ self.turn.T + self.shift)

    def side_sign(self):
        """+1 when the left arm is on +X at rest (facing -Y), -1 when mirrored."""
        left, right = self.joints.get("LeftUpperArm"), self.joints.get("RightUpperArm")
        if left is None or right is None:
            return 1.0
        dx = self.rest[left, 0, 3] - self.rest[right, 0, 3]
        return -1.0 if dx < 0 else 1.0


class Constraint:
    """A pose constraint as far as retargeting follows it, applied after the
    bone's own transform, in stack order, blended by ``influence`` the way
    Blender blends constraints (in armature space: rotation by the shortest
    slerp, position linearly).

    ``kind``: "COPY_TRANSFORMS", "COPY_ROTATION" or "COPY_LOCATION" (replace,
    every axis; ``targets`` [(bone, 1.0)]; ``space`` "WORLD" copies the
    target's pose, "LOCAL" its transform relative to its own rest, onto the
    owner's rest), or "ARMATURE" (the bone moves with its target bones as if
    skinned to them: ``targets`` [(bone, weight)], blended by slerp in list
    order), or "OTHER": a constraint that is not followed, kept only so that
    the bone is never keyed as an in-between bone. This covers the mechanism
    of Rigify's FK controls; report the others.
    """

    KINDS = ("COPY_TRANSFORMS", "COPY_ROTATION", "COPY_LOCATION", "ARMATURE", "OTHER")

    def __init__(self, kind, targets=(), influence=1.0, space="WORLD"):
        if kind not in self.KINDS:
            raise RetargetError("Constraint kind %r is not followed (only %s)." % (kind, ", ".join(self.KINDS)))
        if space not in ("WORLD", "LOCAL"):
            raise RetargetError("Constraint space %r is not followed (only WORLD and LOCAL)." % (space,))
        self.kind = kind
        self.targets = [(int(t), float(w)) for t, w in targets]
        if kind not in ("ARMATURE", "OTHER") and len(self.targets) != 1:
            raise RetargetError("A %s constraint has exactly one target." % kind)
        self.influence = float(influence)
        self.space = space

    def __repr__(self):
        return "Constraint(%r, %r, %r, %r)" % (self.kind, self.targets, self.influence, self.space)


def slerp(a, b, t):
    """Shortest-path spherical interpolation of unit quaternions, as Blender
    blends a constraint's rotation by its influence."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-9
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, sin))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, sin))
    return tf.quat_normalize(wa * a + wb * b)


def _apply_constraints(stack, rot, pos, frame, world, head, frames, rest_rot, rest_pos):
    """A bone's armature-space pose (rot, pos) after its constraints.
    ``frame`` is its own rest frame on this pose (parent pose @ offset);
    ``world``, ``head``, ``frames`` hold the same for bones done before."""
    for c in stack:
        w = c.influence
        if w <= 0.0 or c.kind == "OTHER":
            continue
        if c.kind == "ARMATURE":
            new_rot = new_pos = None
            total = 0.0
            for t, weight in c.targets:
                if weight <= 0.0:
                    continue
                move = tf.quat_mul(world[t], _inv(rest_rot[t]))
                r = tf.quat_mul(move, rot)
                p = _rot(move, pos - rest_pos[t]) + head[t]
                total += weight
                if new_rot is None:
                    new_rot, new_pos = r, p
                else:
                    new_rot = slerp(new_rot, r, weight / total)
                    new_pos = new_pos + (p - new_pos) * (weight / total)
            if new_rot is None:
                continue
        else:
            t = c.targets[0][0]
            if c.space == "WORLD":
                t_rot, t_pos = world[t], head[t]
            else:
                # The target's transform relative to its rest, put on the owner's rest.
                f_rot, f_pos = frames[t]
                l_rot = tf.quat_mul(_inv(f_rot), world[t])
                l_pos = _rot(_inv(f_rot), head[t] - f_pos)
                t_rot = tf.quat_mul(frame[0], l_rot)
                t_pos = frame[1] + _rot(frame[0], l_pos)
            new_rot = t_rot if c.kind in ("COPY_TRANSFORMS", "COPY_ROTATION") else rot
            new_pos = t_pos if c.kind in ("COPY_TRANSFORMS", "COPY_LOCATION") else pos
        if w >= 1.0:
            rot, pos = new_rot, new_pos
        else:
            rot = slerp(rot, new_rot, w)
            pos = pos + (new_pos - pos) * w
    return rot, pos


class TPose:
    """A skeleton's T-pose: armature-space rotations (J, 4) and heads (J, 3)
    of every bone; rows of NaN for bones it does not know."""

    def __init__(self, rotations, heads):
        self.rotations = np.asarray(rotations, dtype=np.float64)
        self.heads = np.asarray(heads, dtype=np.float64)

    @classmethod
    def from_matrices(cls, pose):
        pose = np.asarray(pose, dtype=np.float64)
        return cls(tf.matrix_to_quat(pose[:, :3, :3]), pose[:, :3, 3])

    def known(self, j):
        return bool(np.all(np.isfinite(self.rotations[j])) and np.all(np.isfinite(self.heads[j])))


def compute_tpose(skeleton, straighten_spine=False):
    """The canonical T-pose of ``skeleton`` built from its rest pose (see the
    module notes). Returns (basis rotations (J, 4) local quaternions, pose
    matrices (J, 4, 4) in armature space)."""
    sk = skeleton
    J = len(sk.names)
    dirs = tpose_directions(straighten_spine, sk.side_sign())
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
    keep = {sk.joints[f] for f in _FEET if f in sk.joints}
    basis = np.tile(_IDENTITY, (J, 1))
    pose = np.empty((J, 4, 4))
    for j, p in enumerate(sk.parents):
        pose[j] = sk.offsets[j] if p < 0 else pose[p] @ sk.offsets[j]
        if j in turn:
            end, d = turn[j]
            v = pose[j, :3, :3] @ end
            new = tf.quat_to_matrix(shortest_arc(v, d)) @ pose[j, :3, :3]
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


# ----------------------------------------------------------------------------
# Pairing


def _path_between(parents, top, bone):
    """Bones strictly between ancestor ``top`` and ``bone`` (top first), or
    None when ``top`` is not an ancestor of ``bone``."""
    out = []
    p = parents[bone]
    while p >= 0 and p != top:
        out.append(p)
        p = parents[p]
    return out[::-1] if p == top else None


def pair_bones(source, target):
    """Bone pairs (labels, source indices, target indices): the canonical
    joints mapped on both skeletons, then the unmapped bones between two
    paired joints where both skeletons have the same number of them (target
    bones with constraints excepted: a constraint would override their keys)."""
    common = [j for j in humanoid.CANONICAL if j in source.joints and j in target.joints]
    labels = list(common)
    src = [source.joints[j] for j in common]
    tgt = [target.joints[j] for j in common]
    s_bone = {source.joints[j]: j for j in common}
    t_bone = {target.joints[j]: j for j in common}
    used_s, used_t = set(src), set(tgt)
    for joint in common:
        s, t = source.joints[joint], target.joints[joint]
        # Walk up to the nearest ancestor that is a paired joint, on each side.
        sp = source.parents[s]
        while sp >= 0 and sp not in s_bone:
            sp = source.parents[sp]
        tp = target.parents[t]
        while tp >= 0 and tp not in t_bone:
            tp = target.parents[tp]
        if sp < 0 or tp < 0 or s_bone[sp] != t_bone[tp]:
            continue
        s_mid = _path_between(source.parents, sp, s)
        t_mid = _path_between(target.parents, tp, t)
        if not s_mid or s_mid is None or t_mid is None or len(s_mid) != len(t_mid):
            continue
        for k, (a, b) in enumerate(zip(s_mid, t_mid)):
            if a in used_s or b in used_t or b in target.constraints:
                continue
            labels.append("%s-%d" % (joint, len(s_mid) - k))
            src.append(a)
            tgt.append(b)
            used_s.add(a)
            used_t.add(b)
    return labels, np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64)


_HIP_JOINTS = ("LeftUpperLeg", "RightUpperLeg")


def standing_height(skeleton, tpose):
    """(pelvis height above the floor, floor height) in the T-pose. The
    pelvis point is the midpoint of the two hip joints (upper-leg heads),
    which every skeleton has in the same place whatever its hips bone looks
    like (Rigify's torso control starts 15 cm higher); the floor is the
    lowest head of the mapped feet and toes. Joints are heads: where an
    importer put a bone's tail is a guess (glTF's default puts a foot's tail
    metres away), so no tail is measured."""
    sk = skeleton
    hips = [sk.joints[j] for j in _HIP_JOINTS]
    feet = [sk.joints[j] for j in _FLOOR_JOINTS if j in sk.joints]
    unknown = [sk.names[j] for j in hips + feet if not tpose.known(j)]
    if unknown:
        raise RetargetError("The T-pose of the %s does not hold %s." % (sk.label, _join(unknown)))
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


# ----------------------------------------------------------------------------
# The plan and the frames


class Plan:
    """Everything that does not change from frame to frame; made by :func:`prepare`.

    Public attributes: ``labels``, ``source_index``, ``target_index`` (the
    pairs), ``scale``, ``source_height``, ``target_height`` (standing pelvis
    heights), ``root_motion``, ``anchor`` ({target bone: (the mapped bone it
    is kept under, its rest head in that bone's frame)} for mapped bones that
    do not hang from their canonical parent),
    ``target_root`` (index or None), ``keyed`` (target bones that get a
    rotation key), ``located`` (target bones that also get a location key).
    """


class Result:
    """Output of :func:`retarget_frames` for F frames.

    ``keyed`` (K,) target bone indices and ``rotations`` (F, K, 4) their local
    (basis) quaternions, continuous over frames; ``located`` (L,) and
    ``locations`` (F, L, 3) their local (basis) translations. Every other
    target bone stays at rest (identity basis).
    """

    def __init__(self, keyed, rotations, located, locations, names):
        self.keyed = keyed
        self.rotations = rotations
        self.located = located
        self.locations = locations
        self.names = names

    def bone_names(self, which="keyed"):
        return [self.names[j] for j in getattr(self, which)]


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
    plan = Plan()
    plan.source, plan.target, plan.root_motion = source, target, root_motion
    # 1. The bone pairs both T-poses know, and per pair the turn from the source's T-pose to the target's.
    plan.labels, plan.source_index, plan.target_index = _pairs_in_tposes(source, target, source_tpose, target_tpose)
    q_s0 = tf.quat_normalize(source.frame_tpose(source_tpose).rotations[plan.source_index])
    q_t0 = tf.quat_normalize(target.frame_tpose(target_tpose).rotations[plan.target_index])
    plan.correction = tf.quat_mul(_inv(q_s0), q_t0)
    # 2. The scale of the translation.
    plan.source_height = standing_height(source, source_tpose)[0]
    plan.target_height = standing_height(target, target_tpose)[0]
    if scale is None:
        plan.scale = plan.target_height / plan.source_height
    else:
        plan.scale = float(scale)
        if not plan.scale > 0:
            raise RetargetError("The scale must be above zero (got %r)." % (scale,))
    plan.source_hips = source.joints["Hips"]
    plan.target_hips = target.joints["Hips"]
    # 3. The bones that carry the root motion (none with "HIPS").
    plan.source_root = plan.target_root = None
    if root_motion == "ROOT":
        plan.source_root, plan.target_root = _root_bones(plan, source_root, target_root)
    # 4. The target bones to walk, in order, and those keyed and located.
    _plan_walk(plan)
    # 5. What the solve reads every frame: rest rotations and offsets, the source's hip joints.
    _plan_rest_data(plan)
    return plan


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
        elif lab in humanoid.CANONICAL:
            if not ok_s:
                missing.append("%s (%s of the %s)" % (source.names[s], lab, source.label))
            if not ok_t:
                missing.append("%s (%s of the %s)" % (target.names[t], lab, target.label))
    if missing:
        raise RetargetError("The T-pose lacks %s: store a T-pose that covers them, or use the rest pose "
                            "or a frame as the T-pose." % _join(missing))
    return [labels[k] for k in keep], s_idx[keep], t_idx[keep]


def _root_bones(plan, source_root, target_root):
    """(source root, target root) bone indices for root motion onto a root bone."""
    target = plan.target
    if source_root is None:
        raise RetargetError("Root motion onto a root bone needs the source's root bone "
                            "(add a virtual root to the source first), or put the motion on the hips.")
    above = _dependencies(target, plan.target_hips) - {plan.target_hips}
    if target_root is None:
        # A top bone the hips hang from, through parents or constraints
        # (Rigify's torso follows 'root' through an Armature constraint).
        tops = [j for j in sorted(above) if target.parents[j] < 0 and j not in target.constraints]
        named = [j for j in tops if target.names[j].lower() == "root"]
        target_root = (named or tops or [None])[0]
    if target_root is None or target_root not in above:
        raise RetargetError("The %s has no bone above its hips (%s) to carry the root motion: "
                            "put the motion on the hips." % (target.label, target.names[plan.target_hips]))
    if target_root in set(plan.target_index.tolist()):
        raise RetargetError("The root bone %s of the %s is also a mapped joint."
                            % (target.names[target_root], target.label))
    return int(source_root), int(target_root)


def _plan_walk(plan):
    """The target bones to walk (the keyed ones, their ancestors and whatever
    their ancestors' constraints follow, each after its parent and targets), the
    anchored bones, and the bones keyed, located and overridden."""
    target = plan.target
    pair_of = {int(t): k for k, t in enumerate(plan.target_index)}
    start = set(pair_of) | {plan.target_hips}
    if plan.target_root is not None:
        start.add(plan.target_root)
    # Mapped bones that do not hang from the joint they belong under (Rigify's
    # DEF-thigh hangs from ORG-spine, not from DEF-spine): keep their head
    # where it sits at rest in that joint's frame, with a location key.
    plan.anchor = {}
    rest_inv = tf.rigid_inverse(target.rest)
    for lab, j in zip(plan.labels, plan.target_index):
        up = _CANON_UP.get(lab)
        while up is not None and up not in target.joints:
            up = _CANON_UP.get(up)
        if up is None:
            continue
        a = target.joints[up]
        if a in _dependencies(target, int(j)) or int(j) in _dependencies(target, a):
            continue
        plan.anchor[int(j)] = (a, (rest_inv[a] @ target.rest[j])[:3, 3])
    needed = set()
    for j in start | {a for a, _rel in plan.anchor.values()}:
        needed |= _dependencies(target, j)
    order = _dependency_order(target, needed, {j: a for j, (a, _rel) in plan.anchor.items()})
    plan.walk = [(j, int(target.parents[j]), pair_of.get(j)) for j in order]
    keyed = [int(t) for t in plan.target_index]
    if plan.target_root is not None:
        keyed.append(plan.target_root)
    plan.keyed = np.asarray(keyed, dtype=np.int64)
    located = [plan.target_hips] + ([plan.target_root] if plan.target_root is not None else [])
    located += [j for j in plan.target_index.tolist() if j in plan.anchor]
    plan.located = np.asarray(located, dtype=np.int64)
    # Keyed bones whose own constraints replace what the keys say.
    plan.overridden = [target.names[j] for j in keyed if any(
        c.influence > 0 for c in target.constraints.get(j, ()))]


def _plan_rest_data(plan):
    """Rest rotations and offsets of the target, the source root's rest, and
    the source's hip joints (the bones from below its hips down to each upper leg)."""
    source, target = plan.source, plan.target
    off = target.offsets
    plan.offset_rot = tf.matrix_to_quat(off[:, :3, :3])
    plan.offset_pos = off[:, :3, 3].copy()
    plan.rest_rot = tf.matrix_to_quat(target.rest[:, :3, :3])
    plan.rest_pos = target.rest[:, :3, 3].copy()
    plan.source_root_rest = (tf.matrix_to_quat(source.rest[plan.source_root, :3, :3])
                             if plan.source_root is not None else None)
    plan.source_leg_paths = []
    for joint in _HIP_JOINTS:
        leg = source.joints[joint]
        path = _path_between(source.parents, plan.source_hips, leg)
        if path is None:
            raise RetargetError("The %s %s of the %s does not hang from its hips (%s)." % (
                joint, source.names[leg], source.label, source.names[plan.source_hips]))
        plan.source_leg_paths.append(path + [leg])
    plan.source_offset_rot = tf.matrix_to_quat(source.offsets[:, :3, :3])
    plan.target_hip_joints = [target.joints[j] for j in _HIP_JOINTS]


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
                            % (skeleton.label, _join(skeleton.names[j] for j in stuck[:4])))
    return order


def _source_pelvis(plan, q, hips):
    """Midpoint of the source's hip joints (F, 3) from its rotations and hips head."""
    src = plan.source
    out = np.zeros_like(hips)
    for path in plan.source_leg_paths:
        pos = hips
        parent = plan.source_hips
        for b in path:
            pos = pos + _rot(q[:, parent], src.offsets[b, :3, 3])
            parent = b
        out += 0.5 * pos
    return out


def retarget_frames(plan, source_rotations, source_hips, source_root=None):
    """Target local rotations and hips/root translations for F frames.

    ``source_rotations`` (F, Js, 4): armature-space rotations of every source
    bone (unit quaternions, the rotation of each pose bone's ``matrix``);
    ``source_hips`` (F, 3): the source hips' armature-space head;
    ``source_root`` (F, 4, 4): the source root bone's armature-space pose
    matrix, needed when the plan carries root motion. Returns a :class:`Result`.

    The target's pelvis point (the midpoint of its hip joints) follows the
    source's, scaled about the origin of the body frames (each object's
    place); the target hips bone is placed so. Inputs are read into the body
    frames; the locations returned are in the target's own units.
    """
    q = np.asarray(source_rotations, dtype=np.float64)
    hips = np.asarray(source_hips, dtype=np.float64)
    if q.ndim != 3 or q.shape[1:] != (len(plan.source.names), 4):
        raise RetargetError("source_rotations must be (frames, %d, 4), got %s."
                            % (len(plan.source.names), q.shape))
    F = len(q)
    if hips.shape != (F, 3):
        raise RetargetError("source_hips must be (%d, 3), got %s." % (F, hips.shape))
    if plan.target_root is not None:
        if source_root is None or np.shape(source_root) != (F, 4, 4):
            raise RetargetError("This plan moves the target's root bone: pass source_root (%d, 4, 4)." % F)
        source_root = np.asarray(source_root, dtype=np.float64)
    # Into the body frames (the maths runs there; see the module notes).
    src = plan.source
    q = tf.quat_normalize(tf.quat_mul(tf.matrix_to_quat(src.turn), tf.quat_normalize(q)))
    hips = src.scale * hips @ src.turn.T + src.shift
    if source_root is not None:
        source_root = src.to_frame(source_root)
    # Body-frame rotations of the paired target bones.
    world_pair = tf.quat_mul(q[:, plan.source_index], plan.correction)
    root = None
    if plan.target_root is not None:
        turn = tf.quat_mul(tf.matrix_to_quat(source_root[:, :3, :3]), _inv(plan.source_root_rest))
        ground = source_root[:, :3, 3] * plan.scale
        ground[:, 2] = plan.rest_pos[plan.target_root, 2]
        root = (tf.quat_mul(turn, plan.rest_rot[plan.target_root]), ground)
    pelvis = _source_pelvis(plan, q, hips) * plan.scale
    # The hips head goes where it puts the target's pelvis point on the
    # source's; everything below the hips moves with it, so one correction
    # settles it (a second guards against constraints that do not).
    hips_pos = hips * plan.scale
    for _ in range(3):
        walk = _walk(plan, world_pair, hips_pos, root, F)
        head = walk[1]
        miss = pelvis - 0.5 * (head[plan.target_hip_joints[0]] + head[plan.target_hip_joints[1]])
        if np.abs(miss).max() < 1e-9:
            break
        hips_pos = hips_pos + miss
    _world, _head, local_rot, local_pos = walk
    rotations = np.stack([np.broadcast_to(local_rot[j], (F, 4)) for j in plan.keyed], axis=1)
    rotations = tf.quat_unroll(tf.quat_normalize(rotations), axis=0)
    locations = np.stack([np.broadcast_to(local_pos[j], (F, 3)) for j in plan.located], axis=1)
    locations = locations / plan.target.scale       # the rig's own units
    return Result(plan.keyed.copy(), rotations, plan.located.copy(), np.ascontiguousarray(locations),
                  plan.target.names)


def _walk(plan, world_pair, hips_pos, root, F):
    """Pose the target bones of the plan, parents and constraint targets
    first: (rotations, heads, local rotations, local positions) by bone."""
    target = plan.target
    world = {}     # bone -> (F, 4) or (4,): armature-space rotation
    head = {}      # bone -> (F, 3) or (3,): armature-space head
    frames = {}    # bone -> its rest frame on the pose (parent pose @ offset)
    local_rot, local_pos = {}, {}
    orot, opos = plan.offset_rot, plan.offset_pos
    for j, p, k in plan.walk:
        # The bone's frame with a rest basis: parent pose @ offset.
        if p < 0:
            rot, pos = orot[j], opos[j]
        else:
            rot = tf.quat_mul(world[p], orot[j])
            pos = head[p] + _rot(world[p], opos[j])
        frames[j] = (rot, pos)
        want_rot = want_pos = None
        if k is not None:
            want_rot = world_pair[:, k]
        elif j == plan.target_root:
            want_rot, want_pos = root
        if j == plan.target_hips:
            want_pos = hips_pos
        elif j in plan.anchor:
            a, rel = plan.anchor[j]
            want_pos = head[a] + _rot(world[a], rel)
        if want_rot is not None:
            local_rot[j] = tf.quat_mul(_inv(rot), want_rot)
        if want_pos is not None:
            frame_rot = np.broadcast_to(rot, (F, 4))
            local_pos[j] = _rot(_inv(frame_rot), want_pos - pos)
        rot = rot if want_rot is None else want_rot
        pos = pos if want_pos is None else want_pos
        stack = target.constraints.get(j)
        if stack:
            rot, pos = _apply_constraints(stack, rot, pos, frames[j], world, head, frames, plan.rest_rot,
                                          plan.rest_pos)
        world[j], head[j] = rot, pos
    return world, head, local_rot, local_pos


def target_pose(plan, result):
    """Armature-space pose matrices (F, Jt, 4, 4) of every target bone for a
    :class:`Result` (for checks and for IK after retargeting; memory grows
    with frames x bones, so pass a slice of frames for big rigs)."""
    return plan.target.from_frame(target_frame_pose(plan, result))


def target_frame_pose(plan, result):
    """As :func:`target_pose`, in the target's body frame (metres, Z up:
    the ground frame of its object takes them to world space)."""
    F = result.rotations.shape[0]
    J = len(plan.target.names)
    basis = np.zeros((F, J, 4, 4))
    basis[:] = np.eye(4)
    basis[:, result.keyed, :3, :3] = tf.quat_to_matrix(result.rotations)
    basis[..., 3][:, result.located, :3] = result.locations * plan.target.scale
    return tf.pose_fk(plan.target.parents, None, basis, plan.target.offsets)


def slice_result(result, frames):
    """The result on a subset of frames (an index or a slice)."""
    return Result(result.keyed, result.rotations[frames], result.located, result.locations[frames],
                  result.names)
