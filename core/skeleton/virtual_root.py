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


def root_trajectory(hips_pose, hips_forward_local, smooth=False,
                    position_window=31, position_order=3,
                    direction_window=61, direction_order=3):
    """Root position (F, 3) on z = 0 and yaw quaternion (F, 4) per frame.

    ``hips_pose`` (F, 4, 4): the hips (or chosen spine bone) in armature space;
    ``hips_forward_local`` (3,): the character's forward in that bone's own axes.
    Optional Savitzky-Golay smoothing of the position and of the direction
    (renormalised afterwards).
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
