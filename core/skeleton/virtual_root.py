"""The virtual root (simulation bone): where the character is and where it faces.

The root stands on the ground (z = 0) under the hips, turned about Z to the
hips' forward direction. At yaw 0 it faces -Y, Blender's front.

As a bone, the root points where the character faces: its Y axis (head to
tail) is the facing and its Z axis is up. The character frame used by the
features (yaw 0 faces -Y) is the bone's frame turned half a turn about Z.
"""

import numpy as np

from ..errors import MotionMatchingError
from ..maths.savgol import savgol_filter, check_window
from ..maths import same_everywhere, transforms as tf


class VirtualRootError(MotionMatchingError):
    """The virtual root cannot be placed."""


def forward_from_rest(heads, tails, parents, hips, up=(0.0, 0.0, 1.0)):
    """The character's forward direction (unit, on the ground) at rest.

    It is perpendicular to the line through the two hip joints (the two leg
    chains that leave the hips going down) and points the way the toes point.
    Returns None when the skeleton has no two legs below the hips.
    """
    heads = np.asarray(heads, dtype=np.float64)
    tails = np.asarray(tails, dtype=np.float64)
    up = np.asarray(up, dtype=np.float64)
    children = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            children[p].append(j)

    def chain_end(j):
        # Follow the lowest child down to a leaf: the toe end of a leg.
        while children[j]:
            j = min(children[j], key=lambda c: heads[c] @ up)
        return j

    # Leg candidates: descendants of the hips (children, or grandchildren when
    # the hips have a pelvis/hip-joint bone in between) whose chain goes down.
    cands = []
    for c in children[hips]:
        end = chain_end(c)
        drop = (heads[c] - heads[end]) @ up
        if drop > 1e-6:
            cands.append((drop, c, end))
    if len(cands) < 2:
        return None
    cands.sort(key=lambda t: -t[0])
    (_, a, ea), (_, b, eb) = cands[0], cands[1]
    across = heads[a] - heads[b]
    across -= up * (across @ up)
    if np.linalg.norm(across) < 1e-9:
        return None
    fwd = np.cross(across, up)
    fwd /= np.linalg.norm(fwd)
    # Toes point forward of their ankles: the leaf bone's direction decides the sign.
    toe_dir = (tails[ea] - heads[ea]) + (tails[eb] - heads[eb])
    if toe_dir @ fwd < 0:
        fwd = -fwd
    return fwd


def yaw_quaternions(facing):
    """Quaternions about Z that turn -Y (rest facing) to ``facing`` (F, 2 or 3)."""
    facing = np.asarray(facing, dtype=np.float64)
    yaw = same_everywhere.arctan2(facing[:, 0], -facing[:, 1])
    return tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw)


def _ground_unit(v):
    """Project (F, 3) vectors on the ground and normalise; degenerate samples take
    the nearest valid neighbour's direction."""
    g = np.array(v[:, :2], dtype=np.float64)
    n = np.linalg.norm(g, axis=1)
    ok = n > 1e-8
    if not ok.any():
        raise VirtualRootError("The hips never face a direction on the ground (their forward axis is vertical on every frame).")
    idx = np.where(ok, np.arange(len(g)), 0)
    np.maximum.accumulate(idx, out=idx)
    first = np.argmax(ok)
    idx[:first] = first
    g = g[idx] / n[idx, None]
    return g


POSITION_WINDOW_S = 0.5    # s: the root's position smoothing window (31 frames at 60 fps)
DIRECTION_WINDOW_S = 1.0   # s: its facing's (61 frames at 60 fps)


def window_frames(seconds, fps):
    """The odd number of frames of a smoothing window ``seconds`` long (first to
    last frame) at ``fps``, halves rounded up: 0.5 s is 31 frames at 60 fps, 17 at
    30, 61 at 120. The same stretch of time whatever the take's rate."""
    seconds, fps = float(seconds), float(fps)
    if not (np.isfinite(seconds) and seconds > 0.0):
        raise VirtualRootError("A smoothing window must be a positive number of seconds, not %s." % seconds)
    if not (np.isfinite(fps) and fps > 0.0):
        raise VirtualRootError("The frame rate must be a positive number, not %s." % fps)
    return 2 * int(np.floor(seconds * fps / 2.0 + 0.5)) + 1


def root_trajectory(hips_pose, hips_forward_local, smooth=False,
                    position_window=31, position_order=3,
                    direction_window=61, direction_order=3):
    """Root position (F, 3) on z = 0 and yaw quaternion (F, 4) per frame.

    ``hips_pose`` (F, 4, 4): the hips (or chosen spine bone) in armature space;
    ``hips_forward_local`` (3,): the character's forward in that bone's own axes.
    Optional Savitzky-Golay smoothing of the position and of the direction
    (renormalised afterwards); the windows are frames (:func:`window_frames`
    turns seconds into them).
    """
    hips_pose = np.asarray(hips_pose, dtype=np.float64)
    if hips_pose.ndim != 3 or hips_pose.shape[1:] != (4, 4) or len(hips_pose) == 0:
        raise VirtualRootError("The hips have no frames to follow.")
    if not np.all(np.isfinite(hips_pose)):
        raise VirtualRootError("The hips' animation holds NaN or infinite values.")
    if smooth:
        check_window(position_window, position_order)
        check_window(direction_window, direction_order)
    pos = hips_pose[:, :3, 3].copy()
    pos[:, 2] = 0.0
    fwd = np.einsum("fij,j->fi", hips_pose[:, :3, :3], hips_forward_local)
    facing = _ground_unit(fwd)
    if smooth:
        pos[:, :2] = savgol_filter(pos[:, :2], position_window, position_order)
        facing = _ground_unit(np.column_stack([savgol_filter(facing, direction_window, direction_order),
                                               np.zeros(len(facing))]))
    return pos, tf.quat_unroll(yaw_quaternions(facing), axis=0)


# Bone axes (Y forward, Z up) to the character frame (-Y forward, Z up).
BONE_TO_CHARACTER = np.diag([-1.0, -1.0, 1.0, 1.0])


def root_bone_matrices(pos, quat):
    """Armature-space matrices (F, 4, 4) of the root bone from the character
    frame: position (F, 3) and yaw quaternion (F, 4)."""
    return tf.compose(pos, tf.quat_to_matrix(quat)) @ BONE_TO_CHARACTER


def character_frames(root_bone):
    """Character frames (F, 4, 4) (yaw 0 faces -Y) from root bone matrices."""
    return np.asarray(root_bone, dtype=np.float64) @ BONE_TO_CHARACTER


def reparent_under_root(root_offset, hips_offset, root_pose, hips_pose):
    """Bases for the new root and for the hips beneath it such that the hips keep
    their armature-space pose. With Blender's rule pose = parent_pose @ offset @
    basis: root_basis = root_offset^-1 root_pose and hips_basis =
    hips_offset^-1 root_pose^-1 hips_pose, the offsets being each bone's rest
    relative to its parent (the root's is its own rest)."""
    root_basis = np.linalg.inv(root_offset) @ root_pose
    hips_basis = np.linalg.inv(hips_offset) @ tf.rigid_inverse(root_pose) @ hips_pose
    return root_basis, hips_basis


def forward_from_pose(heads, tails, parents, hips, hips_rotation, every=None):
    """The character's forward in the hips' own axes (3,), from posed joints
    when the rest pose has no legs going down (bones laid along one axis).

    ``heads``, ``tails`` (F, J, 3) posed, in armature space; ``hips_rotation``
    (F, 3, 3). :func:`forward_from_rest` is asked on up to 16 evenly spaced
    frames; each answer is turned into the hips' axes and they are averaged.
    Returns None when no frame shows two legs.
    """
    count = len(heads)
    step = every or max(1, count // 16)
    total = np.zeros(3)
    for f in range(0, count, step):
        fwd = forward_from_rest(heads[f], tails[f], parents, hips)
        if fwd is not None:
            total += np.asarray(hips_rotation[f]).T @ fwd
    n = np.linalg.norm(total)
    return total / n if n > 1e-9 else None


# How near a top bone must stay to count as carrying the trajectory, as
# fractions of the hips' median height: on the ground, under the hips.
GROUND_HEIGHT = 0.15
UNDER_HIPS = 0.3
FOLLOW_DEGREES = 30.0
STILL_METRES, STILL_DEGREES = 0.01, 1.0


def top_bone_role(top_pose, hips_facing, hips_pose):
    """Whether a bone above the hips carries the trajectory.

    ``top_pose`` (F, 4, 4) the top bone in armature space, ``hips_facing`` (F, 3)
    the hips' facing on the ground (unit), ``hips_pose`` (F, 4, 4). Returns
    (role, facing_local): role "trajectory" when the bone stays on the ground
    (within 15% of the hips' height), under the hips (95% of frames within 30%
    of it) and its yaw follows theirs (95% of frames within 30 degrees), with
    ``facing_local`` its own axis that points forward; "static" when it neither
    moves 1 cm nor turns 1 degree; else "other". "off_ground" when the bone's
    median height is over 15% of the hips': not a ground root at all.
    """
    top_pose = np.asarray(top_pose, dtype=np.float64)
    pos, rot = top_pose[:, :3, 3], top_pose[:, :3, :3]
    height = max(float(np.median(hips_pose[:, 2, 3])), 1e-6)
    if abs(float(np.median(pos[:, 2]))) > GROUND_HEIGHT * height:
        return "off_ground", None
    turn = np.abs(rot - rot[:1]).max()
    if np.ptp(pos, axis=0).max() < STILL_METRES and turn < np.radians(STILL_DEGREES):
        return "static", None
    local = np.einsum("fji,fj->i", rot, hips_facing)       # mean facing in the bone's axes
    if np.linalg.norm(local) < 1e-9:
        return "other", None
    local /= np.linalg.norm(local)
    facing = np.einsum("fij,j->fi", rot, local)
    flat = np.linalg.norm(facing[:, :2], axis=1)
    cos = np.sum(facing[:, :2] * hips_facing[:, :2], axis=1) / np.maximum(flat, 1e-9)
    off = np.linalg.norm(pos[:, :2] - hips_pose[:, :2, 3], axis=1)
    follows = (np.abs(pos[:, 2]).max() <= GROUND_HEIGHT * height
               and np.percentile(off, 95) <= UNDER_HIPS * height
               and flat.min() > 0.5
               and np.percentile(cos, 5) >= np.cos(np.radians(FOLLOW_DEGREES)))
    return ("trajectory", local) if follows else ("other", None)


def trajectory_of_bone(top_pose, facing_local):
    """Position (F, 3) on z = 0 and yaw quaternion (F, 4) of a bone that carries
    the trajectory, its axis ``facing_local`` being the forward."""
    top_pose = np.asarray(top_pose, dtype=np.float64)
    pos = top_pose[:, :3, 3].copy()
    pos[:, 2] = 0.0
    facing = _ground_unit(np.einsum("fij,j->fi", top_pose[:, :3, :3], facing_local))
    return pos, tf.quat_unroll(yaw_quaternions(facing), axis=0)


def rekey_under_root(offsets, root_pose, child_poses):
    """Bases of a top bone given the armature-space pose ``root_pose`` (F, 4, 4)
    and of its children (offsets (C, 4, 4) relative to it) keeping their poses
    ``child_poses`` (F, C, 4, 4): basis = offset^-1 root_pose^-1 pose."""
    inv_root = tf.rigid_inverse(root_pose)
    return np.linalg.inv(offsets)[None] @ inv_root[:, None] @ np.asarray(child_poses, dtype=np.float64)
