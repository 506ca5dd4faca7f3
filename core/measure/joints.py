"""The joints the bake report measures, from pose channels: the baked frames
and the database's takes played at the scene's rate.

numpy only; forward kinematics is the bake's own (core.bake.pipeline).
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..bake import pipeline as core_bake
from ..bake.pose import joint_heads, leg_joints
from ..errors import MotionMatchingError
from ..maths.resample import resample
from ..skeleton import humanoid_map
from . import path_metrics as pm
from .bake_quality import Joints


@dataclass
class Take:
    """The database's rows as the report reads them (armature space, metres).

    ``clip_offsets`` (C + 1,) first row of each clip; ``clip_fps`` (C,);
    ``mirrored`` (C,) bool, the mirror images Mirror Takes added; ``clip_index``
    (N,) the clip of each row; ``contacts`` (N, 2) bool; ``toe_positions`` and
    ``foot_positions`` (N, 2, 3); ``root_positions`` (N, 3); ``root_quats``
    (N, 4); ``pose_locations`` (N, J, 3) and ``pose_rotations`` (N, J, 4)."""

    clip_offsets: np.ndarray
    clip_fps: np.ndarray
    mirrored: np.ndarray
    clip_index: np.ndarray
    contacts: np.ndarray
    toe_positions: np.ndarray
    foot_positions: np.ndarray
    root_positions: np.ndarray
    root_quats: np.ndarray
    pose_locations: np.ndarray
    pose_rotations: np.ndarray

    @property
    def fps(self):
        """The rate of the rows (the first clip's)."""
        return float(self.clip_fps[0])

    def clip_rows(self, c):
        """Row indices (n,) of clip ``c``."""
        return np.arange(self.clip_offsets[c], self.clip_offsets[c + 1])


def take_of(database):
    """The rows of a core MotionDatabase as the report measures them (a :class:`Take`)."""
    db = database.matching
    return Take(clip_offsets=np.asarray(db.clip_offsets), clip_fps=np.asarray(db.clip_fps, dtype=np.float64),
                mirrored=np.array([database.clips.is_mirror(c) for c in range(len(db.clip_names))], dtype=bool),
                clip_index=np.asarray(db.clip_index),
                contacts=db.contacts if db.contacts is not None else np.zeros((db.num_rows, 2), dtype=bool),
                toe_positions=np.asarray(database.toe_positions), foot_positions=np.asarray(database.foot_positions),
                root_positions=np.asarray(database.root.positions), root_quats=np.asarray(database.root.quats),
                pose_locations=np.asarray(database.poses.locations),
                pose_rotations=np.asarray(database.poses.rotations))


def upper_arms(skeleton):
    """[left, right] upper-arm bone indices of the skeleton by the humanoid
    mapping, or None when it has none (found once per skeleton: the last one's kept)."""
    key = (tuple(skeleton.names), np.asarray(skeleton.parents).tobytes(), np.asarray(skeleton.offsets).dtype.str,
           np.asarray(skeleton.offsets).tobytes())
    if _ARMS.get("key") != key:
        _ARMS["key"], _ARMS["arms"] = key, _find_upper_arms(skeleton)
    arms = _ARMS["arms"]
    return None if arms is None else list(arms)


_ARMS = {}      # upper_arms' last skeleton (its key) and what it found


def _find_upper_arms(skeleton):
    J = len(skeleton.names)
    rest = core_bake.forward_kinematics(skeleton, np.zeros((1, J, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (1, J, 1)))
    try:
        mapping = humanoid_map.auto_map(list(skeleton.names), np.asarray(skeleton.parents), rest[0, :, :3, 3])
    except MotionMatchingError:
        return None
    arms = [mapping.get(j) for j in ("LeftUpperArm", "RightUpperArm")]
    if not all(arms):
        return None
    return [list(skeleton.names).index(a) for a in arms]


def skeleton_joints(skeleton, locs, rots, fps, contacts, scale=1.0):
    """A :class:`core.measure.bake_quality.Joints` of pose channels (T, J, 3),
    (T, J, 4) in armature space (times ``scale``); the skeleton has two legs."""
    arms = upper_arms(skeleton)
    heads = joint_heads(skeleton, locs, rots, [skeleton.hips] + leg_joints(skeleton) + (arms or [])) * scale
    legs = skeleton.legs

    def pair(k):
        return heads[:, [legs[0][k], legs[1][k]]]

    return Joints(fps=float(fps), hips=heads[:, skeleton.hips], hip_joints=pair(0), ankles=pair(2),
                  toes=pair(3), contacts=np.asarray(contacts, dtype=bool),
                  shoulders=heads[:, arms] if arms else None)


def take_clips(take, skeleton, fps):
    """Every captured clip of ``take`` (mirror images left out: they slide as
    their takes do) played ``fps`` times a second, its rows blended on
    fractional frames, as :class:`Joints`; and the take's planted ankle height
    (:func:`path_metrics.planted_height` on the clips' own rows)."""
    locs_all, rots_all = np.asarray(take.pose_locations), np.asarray(take.pose_rotations)
    contacts = np.asarray(take.contacts, dtype=bool)
    takes = [c for c in range(len(take.clip_fps)) if not bool(take.mirrored[c])]
    keep = np.concatenate([take.clip_rows(c) for c in takes])
    full = skeleton_joints(skeleton, locs_all[keep].astype(np.float64), rots_all[keep].astype(np.float64),
                           take.fps, contacts[keep])
    floor = pm.planted_height(full.ankles, full.toes, take.fps)
    clips = []
    for c in takes:
        rows = take.clip_rows(c)
        if len(rows) < 2:
            continue
        step = float(take.clip_fps[c]) / fps
        x = np.arange(int(np.floor((len(rows) - 1) / step + 1e-9)) + 1) * step
        locs = resample(locs_all[rows], x)
        rots = resample(rots_all[rows].astype(np.float64), x, rotations=True)
        near = rows[np.clip(np.rint(x).astype(np.int64), 0, len(rows) - 1)]
        clips.append(skeleton_joints(skeleton, locs, rots, fps, contacts[near]))
    return clips, floor


def above_ground(joints, ground):
    """``joints`` with heights read over a ground instead of height 0:
    ``ground`` (T, 2) its height under each foot (m). Each foot's ankle and toe
    drop by the ground under it, the hips and hip joints by the mean of the two,
    so the planted measures judge feet on a hill as on the flat floor."""
    g = np.asarray(ground, dtype=np.float64)
    mid = g.mean(axis=1)

    def lowered(points, by):
        out = np.array(points, dtype=np.float64)
        out[..., 2] -= by
        return out

    return dataclasses.replace(joints, hips=lowered(joints.hips, mid),
                               hip_joints=lowered(joints.hip_joints, mid[:, None]),
                               ankles=lowered(joints.ankles, g), toes=lowered(joints.toes, g))
