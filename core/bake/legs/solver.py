"""Two-joint IK of the legs (hip-knee-ankle), the foot keeping its world
orientation, with a soft reach near the straight leg."""

import numpy as np

from ...maths import ik
from ...maths import transforms as tf
from ...maths import same_everywhere


class LegSolver:
    """Two-joint IK of the legs of one pose (S, J, 4, 4): the ankle moved so the
    toe lands where wanted, the foot turned about the vertical by a heading
    difference (pivoting on its toe), keeping its own world orientation."""

    def __init__(self, skeleton, pose, forward, min_bend=0.0):
        self.skeleton, self.pose, self.forward, self.min_bend = skeleton, pose, forward, min_bend
        self._world_q = {}
        self.offset_q = tf.matrix_to_quat(skeleton.offsets[:, :3, :3])

    def world_q(self, joint):
        """(S, 4) world rotations of ``joint`` on every step (made when first asked;
        the IK needs the legs and their parents only)."""
        q = self._world_q.get(joint)
        if q is None:
            q = self._world_q[joint] = tf.matrix_to_quat(self.pose[:, joint, :3, :3])
        return q

    def solve(self, rots, side, idx, wanted, turn):
        """Pose channels ``rots`` of leg ``side`` on steps ``idx`` (in place) so the
        toe reaches ``wanted`` (n, 3) with the foot turned by ``turn`` (n,)."""
        self.solve_many(rots, [(side, idx, wanted, turn)])

    def solve_many(self, rots, parts):
        """:meth:`solve` of each ``(side, idx, wanted, turn)`` of ``parts``, by one IK
        over all their steps (each step's maths is its own, so each result is
        what solving its part alone gives, bit for bit)."""
        sk, pose, offset_q = self.skeleton, self.pose, self.offset_q
        legs = [sk.legs[side] for side, _, _, _ in parts]
        rows = [[pose[idx, toe, :3, 3] - pose[idx, foot, :3, 3]] + [pose[idx, b, :3, 3] for b in (up, low, foot)]
                + [self.world_q(j)[idx] for j in (up, low, foot, sk.parents[up])] + [self.forward[idx], wanted, turn]
                for (up, low, foot, toe), (_, idx, wanted, turn) in zip(legs, parts)]
        heel, hip_p, knee_p, ankle_p, q_up, q_low, q_foot, parent_up, forward, wanted, turn = \
            rows[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*rows)]
        # The ankle goes where the turned foot puts it.
        spin = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), turn)
        target = soft_reach(hip_p, knee_p, ankle_p, wanted - tf.quat_rotate(spin, heel), min_bend=self.min_bend)
        d_hip, d_knee = ik.two_bone_ik(hip_p, knee_p, ankle_p, target, forward, pole_blend=IK_POLE_BLEND)
        # New world rotations: upper and lower leg turned, the foot keeps its own
        # world orientation (turned by the held heading). Each quat_mul below
        # works on the three bones of every step at once (elementwise: the same bits).
        world = tf.quat_mul(np.stack([d_hip, d_knee, spin]), np.stack([q_up, q_low, q_foot]))
        # basis = (parent_world * offset)^-1 * world, for rotations.
        sizes = [len(idx) for _, idx, _, _ in parts]
        offsets = np.stack([np.repeat(offset_q[[leg[k] for leg in legs]], sizes, axis=0) for k in range(3)])
        parent = np.stack([parent_up, world[0], world[1]])
        local = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent, offsets)), world)
        at = 0
        for (up, low, foot, _), (_, idx, _, _) in zip(legs, parts):
            n = slice(at, at + len(idx))
            at += len(idx)
            rots[idx, up], rots[idx, low], rots[idx, foot] = local[:, n]


IK_POLE_BLEND = 0.15   # a knee off the hip-ankle line by under this share of the thigh bends toward forward


SOFT_REACH = 0.97   # share of the leg's length beyond which a target is eased in (soft IK)


def soft_reach(hip, knee, ankle, target, soft=SOFT_REACH, min_bend=0.0):
    """Ankle targets (n, 3) eased toward the hip near the leg's full length: the
    last few percent of reach are approached exponentially, so a held foot that
    the body moves away from stretches the knee smoothly instead of snapping it
    straight (the analytic IK's knee angle changes fastest there). Targets no
    farther than the animated ankle are left as they are. ``min_bend`` > 0
    (radians): the knee is never eased straighter than this or the animation's
    own bend, whichever is less (near straight, each millimetre of reach turns
    the knee by degrees)."""
    thigh, shin = tf.row_norm(knee - hip), tf.row_norm(ankle - knee)
    length = thigh + shin
    d = target - hip
    dist = tf.row_norm(d)
    own = tf.row_norm(ankle - hip)
    # The farthest reach: the straight leg, or the reach at the least bend.
    cap = length
    if min_bend > 0:
        bent = np.sqrt(thigh ** 2 + shin ** 2 + 2.0 * thigh * shin * np.cos(min_bend))
        cap = np.minimum(np.maximum(own, bent), length)
    # Never short of the animation's own reach (a standing leg keeps its foot down).
    start = np.minimum(np.maximum(soft * length, own), cap)
    room = np.maximum(cap - start, 1e-9)
    over = np.maximum(dist - start, 0.0)
    eased = np.where(over > 0.0, start + room * (1.0 - same_everywhere.exp(-over / room)), dist)
    return hip + d * (eased / np.maximum(dist, 1e-12))[:, None]


def leg_points(skeleton, pose):
    """(toes, ankles): (S, 2, 3) positions of both legs' toe and ankle (foot)
    bones in ``pose`` (S, J, 4, 4); (None, None) when the skeleton has no legs."""
    if not skeleton.legs:
        return None, None
    toes = pose[:, [leg[3] for leg in skeleton.legs]][:, :, :3, 3]
    ankles = pose[:, [leg[2] for leg in skeleton.legs]][:, :, :3, 3]
    return toes, ankles
