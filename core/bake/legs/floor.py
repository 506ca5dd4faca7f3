"""The floor clearance: the last of the legs' stages. No toe joint and no toe
tip goes under the ground: a toe joint under it is lifted by the leg's IK
(the ankle rises), a toe tip under it is bent up about the toe joint (the
push-off keeps its look: the toe bends instead of going through).

The ground is a function of the points under the feet: ``ground(xy)``
(..., 2) -> heights (...,). The floor is :func:`flat_ground` (height 0
everywhere); a terrain's height field plugs in there."""

from dataclasses import dataclass

import numpy as np

from ...maths import transforms as tf
from ..pose import forward_kinematics, leg_joints
from .solver import LegSolver, leg_points

_UP = np.array([0.0, 0.0, 1.0])


def flat_ground(xy):
    """The flat floor: height 0 under every point ``xy`` (..., 2)."""
    return np.zeros(np.shape(xy)[:-1])


@dataclass
class FloorLifts:
    """How far the floor clearance raised each foot on each step (m, >= 0)."""

    joint: np.ndarray        # (S, 2) the toe joint, by the leg's IK
    tip: np.ndarray          # (S, 2) the toe tip, by bending the toe

    def raised(self):
        """(S, 2) the larger of the two per foot and step."""
        return np.maximum(self.joint, self.tip)


def tip_offsets(parents, offsets, lengths, legs):
    """(2, 3) each leg's toe tip in its toe bone's frame: the head of the toe's
    first child (a toe-end bone) when it has one, else its tail (Blender's
    bones run along Y; ``lengths`` None or NaN: the toe joint itself)."""
    parents = np.asarray(parents)
    out = np.zeros((len(legs), 3))
    for side, leg in enumerate(legs):
        kids = np.flatnonzero(parents == leg[3])
        if len(kids):
            out[side] = offsets[kids[0], :3, 3]
        elif lengths is not None and np.isfinite(lengths[leg[3]]):
            out[side, 1] = lengths[leg[3]]
    return out


def toe_tips(skeleton, pose, tips):
    """(S, 2, 3) the toe tips: each leg's toe bone's ``tips`` (2, 3) point in
    its own frame, through ``pose`` (S, J, 4, 4)."""
    out = np.empty((len(pose), len(skeleton.legs), 3))
    for side, leg in enumerate(skeleton.legs):
        m = pose[:, leg[3]]
        out[:, side] = m[:, :3, :3] @ tips[side] + m[:, :3, 3]
    return out


def _bend_toes(skeleton, rots, pose, tips, ground):
    """Bend each toe up about its joint where its tip is under ``ground``
    (``rots`` in place); returns how far each tip was raised (S, 2)."""
    S = len(rots)
    raised = np.zeros((S, len(skeleton.legs)))
    points = toe_tips(skeleton, pose, tips)
    for side, leg in enumerate(skeleton.legs):
        toe = leg[3]
        ball = pose[:, toe, :3, 3]
        tip = points[:, side]
        floor = ground(tip[:, :2])
        idx = np.flatnonzero(tip[:, 2] < floor - 1e-6)
        if not len(idx):
            continue
        v = tip[idx] - ball[idx]
        flat = v - v[:, 2:3] * _UP
        reach = np.linalg.norm(v, axis=1)
        along = np.linalg.norm(flat, axis=1)
        ok = (along > 1e-6) & (reach > 1e-9)
        idx, v, flat, reach, along = idx[ok], v[ok], flat[ok], reach[ok], along[ok]
        if not len(idx):
            continue
        h = flat / along[:, None]
        axis = np.cross(h, _UP)
        # The tip turns in the plane of h and up about the joint: heights
        # within reach of the joint only.
        want = np.clip(floor[idx] - ball[idx, 2], -reach, reach)
        angle = np.arcsin(np.clip(want / reach, -1.0, 1.0)) - np.arcsin(np.clip(v[:, 2] / reach, -1.0, 1.0))
        turn = tf.quat_from_axis_angle(axis, angle)
        world = tf.matrix_to_quat(pose[idx, toe, :3, :3])
        # The toe's world rotation turned: local q' = q conj(W) R W.
        change = tf.quat_mul(tf.quat_conjugate(world), tf.quat_mul(turn, world))
        rots[idx, toe] = tf.quat_normalize(tf.quat_mul(rots[idx, toe], change))
        raised[idx, side] = want - v[:, 2]
    return raised


def clear_floor(skeleton, locs, rots, root_quat, tips, ground=flat_ground, min_bend=0.0):
    """Keep every toe joint and toe tip (``tips`` (2, 3): each toe bone's tip
    in its own frame) of ``skeleton``'s legs on or above ``ground`` (see the
    module notes); ``rots`` changes in place. Returns :class:`FloorLifts`."""
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    toes, _ = leg_points(skeleton, pose)
    S = len(rots)
    joint = np.zeros((S, len(skeleton.legs)))
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    moved = False
    for side in range(len(skeleton.legs)):
        need = ground(toes[:, side, :2]) - toes[:, side, 2]
        idx = np.flatnonzero(need > 1e-6)
        if len(idx):
            wanted = toes[idx, side].copy()
            wanted[:, 2] += need[idx]
            legs.solve(rots, side, idx, wanted, np.zeros(len(idx)))
            joint[idx, side] = need[idx]
            moved = True
    if moved:
        pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    tip = _bend_toes(skeleton, rots, pose, np.asarray(tips, dtype=np.float64), ground)
    return FloorLifts(joint=joint, tip=tip)


def lift_summary(lifts, at):
    """(frames on which a foot was raised more than 1 mm, the most it was
    raised in metres) over the steps ``at`` (one per frame); (0, 0.0) for none."""
    if lifts is None:
        return 0, 0.0
    raised = lifts.raised()[at]
    return int((raised > 1e-3).any(axis=1).sum()), float(raised.max()) if raised.size else 0.0


def lift_words(frames, metres):
    """The report's line for :func:`lift_summary`'s figures."""
    return "%d frames, up to %.1f cm" % (frames, 100.0 * metres)
