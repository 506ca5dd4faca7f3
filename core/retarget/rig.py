"""What retargeting needs of one armature: its bones in the body frame
(:class:`RetargetSkeleton`), the pose constraints it follows
(:class:`Constraint`), a T-pose (:class:`TPose`), and an object's matrix split
into its ground and body frames."""

import numpy as np

from ..errors import MotionMatchingError
from ..maths import transforms as tf
from ..skeleton import humanoid_joints


class RetargetError(MotionMatchingError):
    """A retarget that cannot be set up or run."""


def join_names(items):
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
            humanoid_joints.check_mapping(mapping, self.names)
        except humanoid_joints.HumanoidError as ex:
            raise RetargetError("The bone mapping of the %s cannot be used: %s" % (label, ex)) from None
        index = {n: i for i, n in enumerate(self.names)}
        self.joints = {j: index[mapping[j]] for j in humanoid_joints.CANONICAL if j in mapping}
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
