"""Raw features of one clip: one row of numbers per frame, before normalisation.

Root space of frame i: ``p_local = R_i^T (p - root_pos_i)``, where ``R_i`` is the
root's 3x3 yaw rotation; directions and velocities are only rotated. At yaw 0 the
character faces -Y, so a character walking forward sees its future positions at
negative local y.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..maths.transforms import quat_to_matrix
from ..skeleton.contacts import central_velocity
from .feature_spec import BONE_KINDS, FeatureError, is_number

__all__ = [
    "Clip",
    "frame_offset",
    "check_clip",
    "joint_index",
    "clip_features",
    "unchecked_clip_features",
    "clip_valid_rows",
]


@dataclass
class Clip:
    """One action sampled on every frame.

    ``positions`` (F, J, 3) world joint positions (bone heads) in metres;
    ``root_pos`` (F, 3) and ``root_rot`` (F, 4, w x y z, yaw only) the virtual root;
    ``excluded`` (F,) True for frames that must not be offered nor counted in the
    normalisation (they stay in the database so playback can run through them).
    """

    name: str
    fps: float
    joint_names: list
    positions: np.ndarray
    root_pos: np.ndarray
    root_rot: np.ndarray
    excluded: np.ndarray | None = None

    @property
    def num_frames(self):
        return int(np.shape(self.positions)[0])


def frame_offset(t, fps):
    """Seconds to a whole number of frames, rounding halves away from zero (so +0.5
    and -0.5 frame offsets are symmetric)."""
    x = float(t) * float(fps)
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def check_clip(spec, clip, extra_joints=()):
    """Raise FeatureError unless ``clip`` has the shapes, values and bones needed."""
    name = clip.name
    fps = clip.fps
    if not is_number(fps) or not math.isfinite(fps) or fps <= 0:
        raise FeatureError(f'Clip "{name}" has frame rate {fps!r}; it must be a positive number.')
    pos = np.asarray(clip.positions)
    if pos.ndim != 3 or pos.shape[2] != 3:
        raise FeatureError(
            f'Clip "{name}" has joint positions of shape {pos.shape}; expected (frames, joints, 3).')
    n_frames, n_joints = pos.shape[:2]
    if n_joints != len(clip.joint_names):
        raise FeatureError(
            f'Clip "{name}" has {n_joints} joints in its positions but '
            f"{len(clip.joint_names)} joint names.")
    if n_frames < 2:
        raise FeatureError(
            f'Clip "{name}" has {n_frames} frame(s); a clip needs at least 2 frames '
            "to have velocities.")
    root_pos = np.asarray(clip.root_pos)
    root_rot = np.asarray(clip.root_rot)
    if root_pos.shape != (n_frames, 3):
        raise FeatureError(
            f'Clip "{name}" has root positions of shape {root_pos.shape}; '
            f"expected ({n_frames}, 3), one per frame.")
    if root_rot.shape != (n_frames, 4):
        raise FeatureError(
            f'Clip "{name}" has root rotations of shape {root_rot.shape}; '
            f"expected ({n_frames}, 4) quaternions, one per frame.")
    finite = np.isfinite(pos).all(axis=2)
    if not finite.all():
        f, j = np.argwhere(~finite)[0]
        raise FeatureError(
            f'Clip "{name}" has a NaN or infinite position for bone '
            f'"{clip.joint_names[j]}" on frame {f}.')
    for label, arr in (("root position", root_pos), ("root rotation", root_rot)):
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            raise FeatureError(
                f'Clip "{name}" has a NaN or infinite {label} on frame {int(np.argmax(bad))}.')
    tiny = np.linalg.norm(root_rot, axis=1) < 1e-8
    if tiny.any():
        raise FeatureError(
            f'Clip "{name}" has a zero root rotation quaternion on frame {int(np.argmax(tiny))}.')
    if clip.excluded is not None and np.shape(clip.excluded) != (n_frames,):
        raise FeatureError(
            f'Clip "{name}" has an exclusion mask of shape {np.shape(clip.excluded)}; '
            f"expected ({n_frames},), one flag per frame.")
    spec.validate(joint_names=clip.joint_names, clip_name=name)
    known = set(clip.joint_names)
    for j in extra_joints:
        if j not in known:
            raise FeatureError(f'Clip "{name}" has no bone "{j}", which foot contacts need.')


def joint_index(clip):
    index = {}
    for i, n in enumerate(clip.joint_names):
        index.setdefault(n, i)  # the first of repeated names wins
    return index


def clip_features(spec, clip):
    """Raw (unnormalised) features of every frame of ``clip``: (F, D) float64.

    - bone position: ``R_i^T (p - root_pos_i)``;
    - bone velocity: world velocity by central differences (one-sided at the ends)
      times fps, then rotated by ``R_i^T`` (no translation);
    - trajectory position at t: the root of frame ``clamp(i + round(t * fps))`` in
      the root space of frame i, x and y;
    - trajectory direction at t: that root's facing ``R_j (0, -1, 0)`` rotated into
      the root space of frame i, x and y.
    """
    check_clip(spec, clip)
    return unchecked_clip_features(spec, clip)


def unchecked_clip_features(spec, clip):
    pos = np.asarray(clip.positions, dtype=np.float64)
    root_pos = np.asarray(clip.root_pos, dtype=np.float64)
    n = pos.shape[0]
    rot = quat_to_matrix(clip.root_rot)  # (F, 3, 3), normalises the quaternions
    # Rows times R equal (R^T p)^T: rotates row vectors into root space per frame.
    index = joint_index(clip)
    frames = np.arange(n)
    facing = -rot[:, :, 1]  # R @ (0, -1, 0)
    cols = []
    for g in spec.groups:
        if g.kind in BONE_KINDS:
            p = pos[:, [index[b] for b in g.bones]]  # (F, B, 3)
            if g.kind == "bone_position":
                v = p - root_pos[:, None, :]
            else:
                v = central_velocity(p, clip.fps)
            cols.append(np.matmul(v, rot).reshape(n, -1))
        else:
            offsets = np.array([frame_offset(t, clip.fps) for t in g.times_s])
            future = np.clip(frames[:, None] + offsets[None, :], 0, n - 1)  # (F, T)
            if g.kind == "trajectory_position":
                v = root_pos[future] - root_pos[:, None, :]
            else:
                v = facing[future]
            cols.append(np.matmul(v, rot)[:, :, :2].reshape(n, -1))
    return np.concatenate(cols, axis=1)


def clip_valid_rows(spec, n_frames, fps):
    """(F,) True for rows that may be offered as search results.

    Row i is valid when ``i + round(end_margin * fps) <= F - 1`` and
    ``i - round(start_margin * fps) >= 0``, i.e. none of its samples (with the default
    margins) had to be clamped to the clip's ends. At 60 fps with 1 s ahead this
    removes the last 60 frames.
    """
    end = frame_offset(spec.effective_end_margin_s(), fps)
    start = frame_offset(spec.effective_start_margin_s(), fps)
    i = np.arange(int(n_frames))
    return (i + end <= n_frames - 1) & (i - start >= 0)

