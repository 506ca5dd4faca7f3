"""The per-frame solve: the target's local rotations and hips/root
translations from the source's armature-space pose, for a :class:`~.plan.Plan`,
and the target pose they give."""

import numpy as np

from ..maths import transforms as tf
from .constraints import apply_constraints
from .rig import RetargetError
from .rotations import inverse, rotate


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


def _source_pelvis(plan, q, hips):
    """Midpoint of the source's hip joints (F, 3) from its rotations and hips head."""
    src = plan.source
    out = np.zeros_like(hips)
    for path in plan.source_leg_paths:
        pos = hips
        parent = plan.source_hips
        for b in path:
            pos = pos + rotate(q[:, parent], src.offsets[b, :3, 3])
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
        turn = tf.quat_mul(tf.matrix_to_quat(source_root[:, :3, :3]), inverse(plan.source_root_rest))
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
            pos = head[p] + rotate(world[p], opos[j])
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
            want_pos = head[a] + rotate(world[a], rel)
        if want_rot is not None:
            local_rot[j] = tf.quat_mul(inverse(rot), want_rot)
        if want_pos is not None:
            frame_rot = np.broadcast_to(rot, (F, 4))
            local_pos[j] = rotate(inverse(frame_rot), want_pos - pos)
        rot = rot if want_rot is None else want_rot
        pos = pos if want_pos is None else want_pos
        stack = target.constraints.get(j)
        if stack:
            rot, pos = apply_constraints(stack, rot, pos, frames[j], world, head, frames, plan.rest_rot,
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


def retarget_pose(plan, pose):
    """:func:`retarget_frames` on source pose matrices (F, Js, 4, 4) in
    armature space: their rotations, the hips' positions and the root's pose."""
    rotations = tf.matrix_to_quat(pose[..., :3, :3])
    root_pose = pose[:, plan.source_root] if plan.source_root is not None else None
    return retarget_frames(plan, rotations, pose[:, plan.source_hips, :3, 3], root_pose)
