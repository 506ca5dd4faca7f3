"""Two-joint IK of the legs (hip-knee-ankle), the foot keeping its world
orientation, with a soft reach near the straight leg."""

import math

import numpy as np

from ...maths import ik
from ...maths import ik_floats as fk
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

    def world_q_at(self, joint, idx):
        """:meth:`world_q` on steps ``idx``: made for those steps alone (not kept)
        when it is not made yet and they are under half of them (each step's
        quaternion is its own maths: the same bits)."""
        if joint not in self._world_q and 2 * len(idx) < len(self.pose):
            return tf.matrix_to_quat(self.pose[idx, joint, :3, :3])
        return self.world_q(joint)[idx]

    def solve(self, rots, side, idx, wanted, turn):
        """Pose channels ``rots`` of leg ``side`` on steps ``idx`` (in place) so the
        toe reaches ``wanted`` (n, 3) with the foot turned by ``turn`` (n,)."""
        self.solve_many(rots, [(side, idx, wanted, turn)])

    def solve_many(self, rots, parts):
        """:meth:`solve` of each ``(side, idx, wanted, turn)`` of ``parts``, by one IK
        over all their steps (each step's maths is its own, so each result is
        what solving its part alone gives, bit for bit)."""
        if sum(len(idx) for _, idx, _, _ in parts) <= FEW_STEPS:
            return self._solve_few(rots, parts)
        sk, pose, offset_q = self.skeleton, self.pose, self.offset_q
        legs = [sk.legs[side] for side, _, _, _ in parts]
        rows = [[pose[idx, toe, :3, 3] - pose[idx, foot, :3, 3]] + [pose[idx, b, :3, 3] for b in (up, low, foot)]
                + [self.world_q_at(j, idx) for j in (up, low, foot, sk.parents[up])] + [self.forward[idx], wanted, turn]
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

    def _solve_few(self, rots, parts):
        """:meth:`solve_many` on Python floats (core.maths.ik_floats; its cos and sin
        numpy's): the same bits, with far fewer numpy calls on a few steps."""
        sk, pose = self.skeleton, self.pose
        steps = []      # (leg, step, heel, hip, knee, ankle, q_up, q_low, q_foot, parent_up, forward, wanted)
        for side, idx, wanted, _ in parts:
            up, low, foot, toe = leg = sk.legs[side]
            points = pose[idx][:, [toe, foot, up, low, foot]][..., :3, 3].tolist()
            quats = np.stack([self.world_q(j)[idx] for j in (up, low, foot, sk.parents[up])], axis=1).tolist()
            steps += [(leg, i, fk.sub(p[0], p[1]), *p[2:], *q, f, w) for i, p, q, f, w in
                      zip(np.asarray(idx).tolist(), points, quats, self.forward[idx].tolist(),
                          np.asarray(wanted, dtype=np.float64).tolist())]
        half = 0.5 * np.concatenate([np.asarray(turn, dtype=np.float64) for _, _, _, turn in parts])
        spins = [[c, s * 0.0, s * 0.0, s] for c, s in zip(np.cos(half).tolist(), np.sin(half).tolist())]
        cos_bend = float(np.cos(self.min_bend)) if self.min_bend > 0 else None
        targets = [_soft_reach_row(st[3], st[4], st[5], fk.sub(st[11], _rotated(spin, st[2])), SOFT_REACH, cos_bend)
                   for st, spin in zip(steps, spins)]
        d_hip, d_knee = fk.two_bone_ik([st[3] for st in steps], [st[4] for st in steps], [st[5] for st in steps],
                                       targets, [st[10] for st in steps], pole_blend=IK_POLE_BLEND)
        offset_q = self.offset_q.tolist()
        for st, dh, dk, spin in zip(steps, d_hip, d_knee, spins):
            (up, low, foot, _), i, q_parent = st[0], st[1], st[9]
            world = [fk.quat_mul(dh, st[6]), fk.quat_mul(dk, st[7]), fk.quat_mul(spin, st[8])]
            # basis = (parent_world * offset)^-1 * world, for rotations.
            for bone, parent, w in zip((up, low, foot), (q_parent, world[0], world[1]), world):
                rots[i, bone] = fk.quat_mul(fk.quat_conjugate(fk.quat_mul(parent, offset_q[bone])), w)


FEW_STEPS = 8   # steps up to which solve_many works on Python floats


def _rotated(q, v):
    """tf.quat_rotate of one vector (lists)."""
    u = q[1:]
    t = [2.0 * x for x in fk.cross(u, v)]
    c = fk.cross(u, t)
    return [v[k] + q[0] * t[k] + c[k] for k in range(3)]


def _soft_reach_row(hip, knee, ankle, target, soft, cos_bend):
    """:func:`soft_reach` of one step (lists; ``cos_bend`` the cosine of its
    ``min_bend``, None for none): the same operations in the same order."""
    thigh, shin = fk.norm(fk.sub(knee, hip)), fk.norm(fk.sub(ankle, knee))
    length = thigh + shin
    d = fk.sub(target, hip)
    dist = fk.norm(d)
    own = fk.norm(fk.sub(ankle, hip))
    cap = length
    if cos_bend is not None:
        bent = math.sqrt(thigh * thigh + shin * shin + 2.0 * thigh * shin * cos_bend)
        cap = min(max(own, bent), length)
    start = min(max(soft * length, own), cap)
    room = max(cap - start, 1e-9)
    over = max(dist - start, 0.0)
    eased = start + room * (1.0 - same_everywhere.exp_float(-over / room)) if over > 0.0 else dist
    k = eased / max(dist, 1e-12)
    return [hip[0] + d[0] * k, hip[1] + d[1] * k, hip[2] + d[2] * k]


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
