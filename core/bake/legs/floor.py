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


# Lifts and bends ease in and out over this long either side of the steps that need them.
EASE_S = 0.1


def floor_ease_steps(dt):
    """How many steps of ``dt`` seconds :data:`EASE_S` spans (at least 1)."""
    return max(1, int(round(EASE_S / dt)))


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


def _in_world(pose, bone, points):
    """(S, n, 3) ``points`` (n, 3) of ``bone``'s frame through ``pose``."""
    m = pose[:, bone]
    return np.einsum("sij,nj->sni", m[:, :3, :3], points) + m[:, None, :3, 3]


def _bend_angle(ball, points, floor, heading):
    """Per step, the turn (rad) about the horizontal axis across the foot's
    ``heading`` (S, 3) that brings the lowest of ``points`` (S, n, 3) ahead of
    the ``ball`` up to ``floor`` (S, n), and that axis (S, 3); 0 where nothing
    is under it."""
    v = points - ball[:, None]
    flat = v - v[..., 2:3] * _UP
    reach = np.linalg.norm(v, axis=-1)
    along = np.linalg.norm(flat, axis=-1)
    # Only points ahead of the joint (the tip's way) rise as the toe bends up.
    ahead = np.einsum("sni,si->sn", flat, heading) > 0.0
    ok = (along > 1e-6) & (reach > 1e-9) & (points[..., 2] < floor - 1e-6) & ahead
    reach, along = np.where(ok, reach, 1.0), np.where(ok, along, 1.0)
    # Each point turns in the plane of its heading and up about the joint: heights within its reach only.
    want = np.clip(floor - ball[:, None, 2], -reach, reach)
    angle = np.arcsin(np.clip(want / reach, -1.0, 1.0)) - np.arcsin(np.clip(v[..., 2] / reach, -1.0, 1.0))
    angle = np.where(ok, angle, 0.0)
    pick = np.argmax(angle, axis=1)
    rows = np.arange(len(points))
    best = angle[rows, pick]
    # The turn's axis: across the foot's heading (ankle to ball), steady from step to step, where
    # the tip's own heading swings as a pointed foot brings the tip under the ball.
    h = heading - heading[:, 2:3] * _UP
    h = h / np.maximum(np.linalg.norm(h, axis=-1, keepdims=True), 1e-12)
    return best, np.cross(h, _UP)


def envelope(x, half):
    """A smooth upper envelope of ``x`` (S,): the largest value within
    ``half`` steps either side, then averaged over the same window. Every
    average takes in only maxima whose window holds the step itself, so the
    result never falls below ``x``; lifts and bends then ease in and out
    instead of popping on the one frame a foot dips. ``half`` 0: ``x``."""
    x = np.asarray(x, dtype=np.float64)
    if half <= 0 or len(x) < 2:
        return x
    padded = np.pad(x, half, mode="constant", constant_values=-np.inf)
    most = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1).max(axis=1)
    most = np.pad(most, half, mode="edge")
    return np.lib.stride_tricks.sliding_window_view(most, 2 * half + 1).mean(axis=1)


def _bend_toes(skeleton, rots, pose, toe_points, ground, clearance, half, forward):
    """Bend each toe up about its joint where one of its ``toe_points`` (per
    leg (n, 3) in the toe's frame, the tip first, kept ``clearance`` over the
    ground; the rest on it) is under ``ground`` (``rots`` in place), easing in
    and out over ``half`` steps (:func:`envelope`), about an axis across the
    foot and the body's ``forward`` (S, 3); returns how far each leg's lowest
    point was raised (S, 2)."""
    S = len(rots)
    raised = np.zeros((S, len(skeleton.legs)))
    for side, leg in enumerate(skeleton.legs):
        toe = leg[3]
        ball = pose[:, toe, :3, 3]
        pts = _in_world(pose, toe, toe_points[side])
        floor = ground(pts[..., :2])
        floor[:, 0] += clearance
        # The foot's heading (ankle to ball) where it lies along the ground; as the foot points
        # down (its heading shrinking to the vertical) the body's forward takes over, smoothly.
        foot = ball - pose[:, leg[2], :3, 3]
        foot = foot - foot[:, 2:3] * _UP
        reach = np.linalg.norm(ball - pose[:, leg[2], :3, 3], axis=-1, keepdims=True)
        angle, axis = _bend_angle(ball, pts, floor, foot + 0.5 * reach * forward)
        angle = envelope(angle, half)
        idx = np.flatnonzero(angle > 1e-9)
        if not len(idx):
            continue
        turn = tf.quat_from_axis_angle(axis[idx], angle[idx])
        world = tf.matrix_to_quat(pose[idx, toe, :3, :3])
        # The toe's world rotation turned: local q' = q conj(W) R W.
        change = tf.quat_mul(tf.quat_conjugate(world), tf.quat_mul(turn, world))
        rots[idx, toe] = tf.quat_normalize(tf.quat_mul(rots[idx, toe], change))
        raised[idx, side] = np.maximum((floor - pts[..., 2]).max(axis=1)[idx], 0.0)
    return raised


def _joint_need(skeleton, pose, toes, side, ground, clearance, foot_points):
    """(S,) how far leg ``side``'s foot must rise: its toe joint to ``clearance``
    over the ground, its ``foot_points`` (n, 3, the foot's frame) onto it."""
    need = ground(toes[:, side, :2]) + clearance - toes[:, side, 2]
    if foot_points is not None and len(foot_points[side]):
        pts = _in_world(pose, skeleton.legs[side][2], foot_points[side])
        need = np.maximum(need, (ground(pts[..., :2]) - pts[..., 2]).max(axis=1))
    return need


def clear_floor(skeleton, locs, rots, root_quat, tips, ground=flat_ground, min_bend=0.0, clearance=0.0,
                foot_points=None, toe_points=None, half=0):
    """Keep every toe joint and toe tip (``tips`` (2, 3): each toe bone's tip
    in its own frame) of ``skeleton``'s legs ``clearance`` (m) or more over
    ``ground`` (see the module notes), and a skinned mesh's sole points
    (per leg (n, 3) in the foot's and in the toe's frame; None: none) on or
    above it; ``rots`` changes in place. Each lift and bend eases in and out
    over ``half`` steps either side (:func:`envelope`; 0: on its steps only).
    Returns :class:`FloorLifts`."""
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    toes, _ = leg_points(skeleton, pose)
    S = len(rots)
    joint = np.zeros((S, len(skeleton.legs)))
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    moved = False
    for side in range(len(skeleton.legs)):
        need = envelope(np.maximum(_joint_need(skeleton, pose, toes, side, ground, clearance, foot_points), 0.0),
                        half)
        idx = _raise_foot(legs, rots, side, toes, need, 1e-6)
        joint[idx, side] = need[idx]
        moved = moved or bool(len(idx))
    if moved:
        pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    tips = np.asarray(tips, dtype=np.float64)
    points = [np.vstack([tips[side:side + 1]] + ([] if toe_points is None else [np.reshape(toe_points[side], (-1, 3))]))
              for side in range(len(skeleton.legs))]
    forward = tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0]))
    tip = _bend_toes(skeleton, rots, pose, points, ground, clearance, half, forward)
    joint += _lift_rest(skeleton, locs, rots, root_quat, min_bend, points, ground, clearance, half)
    return FloorLifts(joint=joint, tip=tip)


def _lift_rest(skeleton, locs, rots, root_quat, min_bend, toe_points, ground, clearance, half=0):
    """What bending left under the ground (toe points behind the joint, a toe
    bent as far as it goes) lifted with the whole foot by the leg's IK;
    returns the lifts (S, 2)."""
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    toes, _ = leg_points(skeleton, pose)
    out = np.zeros((len(rots), len(skeleton.legs)))
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    for side, leg in enumerate(skeleton.legs):
        pts = _in_world(pose, leg[3], toe_points[side])
        floor = ground(pts[..., :2])
        floor[:, 0] += clearance
        need = envelope(np.maximum((floor - pts[..., 2]).max(axis=1), 0.0), half)
        idx = _raise_foot(legs, rots, side, toes, need, 1e-4)
        out[idx, side] = need[idx]
    return out


def _raise_foot(legs, rots, side, toes, need, least):
    """Raise leg ``side``'s toe joint by ``need`` (S,) where it is over ``least``
    (m), by the leg's IK (``rots`` in place); returns those steps."""
    idx = np.flatnonzero(need > least)
    if len(idx):
        wanted = toes[idx, side].copy()
        wanted[:, 2] += need[idx]
        legs.solve(rots, side, idx, wanted, np.zeros(len(idx)))
    return idx


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
