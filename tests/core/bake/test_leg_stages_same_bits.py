"""The legs' stages made faster give the bits they gave before: the foot lock
stepped on Python floats, the leg solver's quaternion products of all bones
at once, its solves of a few steps on Python floats and the IK's two bone
deltas made together, each against the code it replaced (kept here) on
random inputs, ties and degenerate legs included; likewise the releases'
corrections and the chain's points of a few steps on floats."""

import numpy as np
import pytest

from core.bake.legs import foot_lock as fl
from core.bake.legs import leg_release as lr
from core.bake.legs import solver
from core.bake.legs.solver import IK_POLE_BLEND, LegSolver, soft_reach
from core.bake.pose import forward_kinematics
from core.maths import ik, ik_floats, same_everywhere
from core.maths import transforms as tf
from core.maths.springs import spring_floats, step_decay
from leg_skeleton import leg_skeleton


class OldFootLock(fl.FootLock):
    """The foot lock as it was: numpy arrays for the toe and its state."""

    def _decay(self, dt):
        if self._rate_for != dt:
            self._rate_for, self._rate = dt, step_decay(self.blend_halflife, dt)
        y, e = self._rate
        off, vel = self.offset, self.offset_vel
        pv = [spring_floats(x, v, 0.0, y, e, dt) for x, v in zip(off if type(off) is list else off.tolist(),
                                                                  vel if type(vel) is list else vel.tolist())]
        return [p for p, _ in pv], [v for _, v in pv]

    def _advance(self, contact, toe, toe_speed, dt):
        toe = np.asarray(toe, dtype=np.float64)
        if self.offset is None or len(self.offset) != len(toe):
            self.offset, self.offset_vel = np.zeros(len(toe)), np.zeros(len(toe))
        prev = self._prev_toe
        if toe_speed is not None:
            speed = float(toe_speed)
        elif prev is not None:
            toe_vel = (toe - prev) / dt
            speed = float(np.sqrt(toe_vel[0] ** 2 + toe_vel[1] ** 2 + toe_vel[2] ** 2))
        else:
            speed = np.inf
        self._prev_toe = toe
        if not contact:
            self._wait_lift = False
        if self.locked:
            held = self.pinned.copy()
            if self.on_contact:
                held[2] = toe[2]
            d = held[:3] - toe[:3]
            drift = float(np.sqrt(d @ d))
            if contact and drift <= self.unlock_distance:
                return held, True
            self.offset = held - toe
            self.offset_vel = -(np.zeros(len(toe)) if prev is None else (toe - prev) / dt)
            if self.on_contact:
                self.offset_vel[2] = 0.0
            self._wait_lift = bool(contact)
            self.locked = False
            self.pinned = None
            return toe + self.offset, False
        self.offset, self.offset_vel = self._decay(dt)
        wanted = [t + o for t, o in zip(toe.tolist(), self.offset)]
        if contact and ((self.on_contact and not self._wait_lift) or (speed < self.lock_speed
                                            and np.linalg.norm(self.offset[:3]) < self.relock_offset)):
            self.locked = True
            self.pinned = np.array(wanted)
            self.offset = np.zeros(len(toe))
            self.offset_vel = np.zeros(len(toe))
            self.lock_count += 1
            return self.pinned.copy(), True
        return wanted, False


def old_run_foot_lock(contacts, toes, speeds, dt, **params):
    lock = OldFootLock(**params)
    out = [lock._advance(c, t, None if speeds is None else speeds[i], dt)
           for i, (c, t) in enumerate(zip(contacts, toes))]
    return np.array([w for w, _ in out], dtype=np.float64), np.array([k for _, k in out]), lock.lock_count


def _toe_walk(rng, S, width, grid):
    """A toe path (S, width) that stands still, slides and steps; on a coarse
    grid (``grid``) its drifts and speeds often equal the limits exactly."""
    steps = rng.normal(scale=0.03, size=(S, width)) * (rng.random((S, 1)) < 0.6)
    toes = np.cumsum(steps, axis=0) + rng.normal(scale=0.5, size=width)
    return np.round(toes / grid) * grid if grid else toes


@pytest.mark.parametrize("seed", range(12))
def test_foot_lock_on_floats_is_the_old_lock_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    S = 400
    width = 3 + seed % 2                    # with a held heading on odd seeds
    toes = _toe_walk(rng, S, width, 0.05 if seed % 3 == 0 else 0.0)
    contacts = np.repeat(rng.random(S // 8) < 0.6, 8)
    speeds = None if seed % 4 < 2 else np.round(rng.random(S) * 4) * 0.05
    params = dict(lock_speed=[0.15, 0.5, 3.0][seed % 3], unlock_distance=[0.2, 0.05, 0.1][seed % 3],
                  blend_halflife=0.1, relock_offset=[0.02, 0.05][seed % 2], on_contact=seed % 5 < 2)
    dt = [1 / 60, 1 / 30, 0.05][seed % 3]
    new = fl.run_foot_lock(contacts, toes, speeds, dt, **params)
    old = old_run_foot_lock(contacts, toes, speeds, dt, **params)
    assert new[0].tobytes() == old[0].tobytes()
    assert np.array_equal(new[1], old[1]) and new[2] == old[2]
    assert old[2] > 0 and not old[1].all()       # the case locks and releases


def test_foot_lock_step_is_the_old_step():
    rng = np.random.default_rng(3)
    toes = _toe_walk(rng, 200, 3, 0.1)
    contacts = np.repeat(rng.random(25) < 0.7, 8)
    new, old = fl.FootLock(unlock_distance=0.1), OldFootLock(unlock_distance=0.1)
    for c, t in zip(contacts, toes):
        (w_new, k_new), (w_old, k_old) = new.step(c, t, None, 0.1), old.step(c, t, None, 0.1)
        assert w_new.tobytes() == w_old.tobytes() and k_new == k_old


@pytest.mark.parametrize("limit", [0.2, 0.05, 1e-3])
def test_length_below_is_numpy_at_the_limit(limit):
    rng = np.random.default_rng(int(limit * 1000))
    d = rng.normal(size=(2000, 3))
    d *= limit / np.linalg.norm(d, axis=1)[:, None]       # lengths at the limit, give or take an ulp
    for v in d.tolist():
        length = float(np.sqrt(np.array(v) @ np.array(v)))
        assert fl._length_below(v, limit, True) == (length <= limit)
        assert fl._length_below(v, limit, False) == (length < limit)


def old_two_bone_ik(hip, knee, ankle, target, pole, max_extension=0.9999, straight_tolerance=1e-3,
                    pole_blend=0.0):
    """ik.two_bone_ik as it was, each bone's delta made alone."""
    thigh, shin = knee - hip, ankle - knee
    a, b = ik._norm(thigh), ik._norm(shin)
    u0 = ik._unit(ankle - hip, lambda: ik._unit(thigh, np.broadcast_to(np.array([0.0, 0.0, -1.0]), hip.shape)))
    knee_side = thigh - ik._dot(thigh, u0) * u0
    bent = ik._norm(knee_side) > straight_tolerance * np.maximum(a, ik._TINY)
    side_p = ik._perp_unit(pole, u0)
    w0 = np.where(bent, ik._unit(knee_side, u0), side_p)
    if pole_blend > 0:
        knee_side = knee_side - np.minimum(ik._dot(knee_side, side_p), 0.0) * side_p
        own = knee_side / (pole_blend * np.maximum(a, ik._TINY))
        own = own / np.maximum(ik._norm(own), 1.0)
        w0 = ik._unit(own + (1.0 - ik._norm(own)) * side_p, side_p)
    w0 = ik._perp_unit(w0, u0)
    n0 = tf.cross3(u0, w0)
    to_target = target - hip
    u = ik._unit(to_target, u0)
    axis = tf.cross3(u0, u)
    angle = same_everywhere.arctan2(ik._norm(axis), ik._dot(u0, u))
    axis = ik._unit(axis, n0)
    w = ik._perp_unit(ik._rotate(w0, axis, angle), u)
    n = tf.cross3(u, w)
    reach = max_extension * (a + b)
    t = np.clip(ik._norm(to_target), np.minimum(np.abs(a - b), reach), reach)
    cos_h = np.clip((a * a + t * t - b * b) / np.maximum(2.0 * a * t, ik._TINY), -1.0, 1.0)
    sin_h = np.sqrt(np.maximum(1.0 - cos_h * cos_h, 0.0))
    new_thigh_dir = cos_h * u + sin_h * w
    new_shin_dir = ik._unit(t * u - a * new_thigh_dir, u)

    def delta(old_dir, new_dir):
        return ik._frame(new_dir, n) @ np.swapaxes(ik._frame(old_dir, n0), -1, -2)

    return (tf.matrix_to_quat(delta(ik._unit(thigh, u0), new_thigh_dir)),
            tf.matrix_to_quat(delta(ik._unit(shin, u0), new_shin_dir)))


def _legs(rng, n):
    """Random legs (hip, knee, ankle, target, pole), a few straight, folded,
    zero-length or aimed at the hip."""
    hip = rng.normal(scale=0.1, size=(n, 3)) + [0.0, 0.0, 0.9]
    knee = hip + rng.normal(scale=0.25, size=(n, 3))
    ankle = knee + rng.normal(scale=0.25, size=(n, 3))
    target = ankle + rng.normal(scale=0.2, size=(n, 3))
    pole = rng.normal(size=(n, 3))
    k = max(1, n // 8)
    ankle[:k] = hip[:k] + 2.0 * (knee[:k] - hip[:k])            # straight
    ankle[k:2 * k] = hip[k:2 * k]                               # folded onto the hip
    knee[2 * k:3 * k] = hip[2 * k:3 * k]                        # no thigh
    target[3 * k:4 * k] = hip[3 * k:4 * k]                      # aimed at the hip
    pole[4 * k:5 * k] = ankle[4 * k:5 * k] - hip[4 * k:5 * k]   # pole along the leg
    return hip, knee, ankle, target, pole


@pytest.mark.parametrize("n", [1, 2, 4, 7, 64, 1000])
def test_two_bone_ik_is_the_old_ik_bit_for_bit(n):
    rng = np.random.default_rng(n)
    for blend in (0.0, IK_POLE_BLEND):
        legs = _legs(rng, n)
        new, old = ik.two_bone_ik(*legs, pole_blend=blend), old_two_bone_ik(*legs, pole_blend=blend)
        assert new[0].tobytes() == old[0].tobytes() and new[1].tobytes() == old[1].tobytes()
        floats = ik_floats.two_bone_ik(*(v.tolist() for v in legs), pole_blend=blend)
        assert np.array(floats[0]).tobytes() == old[0].tobytes() and np.array(floats[1]).tobytes() == old[1].tobytes()


def old_solve_many(solver, rots, parts):
    """LegSolver.solve_many as it was: each leg's quaternions made leg by leg."""
    sk, pose, offset_q = solver.skeleton, solver.pose, solver.offset_q
    legs = [sk.legs[side] for side, _, _, _ in parts]
    rows = [[pose[idx, toe, :3, 3] - pose[idx, foot, :3, 3]] + [pose[idx, b, :3, 3] for b in (up, low, foot)]
            + [solver.world_q(j)[idx] for j in (up, low, foot, sk.parents[up])] + [solver.forward[idx], wanted, turn]
            for (up, low, foot, toe), (_, idx, wanted, turn) in zip(legs, parts)]
    heel, hip_p, knee_p, ankle_p, q_up, q_low, q_foot, parent_up, forward, wanted, turn = \
        rows[0] if len(parts) == 1 else [np.concatenate(c) for c in zip(*rows)]
    spin = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), turn)
    target = soft_reach(hip_p, knee_p, ankle_p, wanted - tf.quat_rotate(spin, heel), min_bend=solver.min_bend)
    d_hip, d_knee = old_two_bone_ik(hip_p, knee_p, ankle_p, target, forward, pole_blend=IK_POLE_BLEND)
    up_w, low_w, foot_w = tf.quat_mul(d_hip, q_up), tf.quat_mul(d_knee, q_low), tf.quat_mul(spin, q_foot)
    at = 0
    for (up, low, foot, _), (_, idx, _, _) in zip(legs, parts):
        n = slice(at, at + len(idx))
        at += len(idx)
        rots[idx, up] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent_up[n], offset_q[up])), up_w[n])
        rots[idx, low] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(up_w[n], offset_q[low])), low_w[n])
        rots[idx, foot] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(low_w[n], offset_q[foot])), foot_w[n])


@pytest.mark.parametrize("seed", range(16))
def test_solve_many_is_the_old_solve_bit_for_bit(seed):
    """On a few steps (Python floats) and on many (numpy)."""
    sk = leg_skeleton()
    rng = np.random.default_rng(100 + seed)
    S, J = 80, len(sk.parents)
    locs = np.zeros((S, J, 3))
    locs[:, 1] = rng.normal(scale=0.05, size=(S, 3))
    rots = tf.quat_normalize(np.array([1.0, 0.0, 0.0, 0.0]) + rng.normal(scale=0.3, size=(S, J, 4)))
    pose = forward_kinematics(sk, locs, rots)
    forward = tf.quat_rotate(tf.quat_normalize(rng.normal(size=(S, 4)) * [1, 0, 0, 1]), np.array([0.0, -1.0, 0.0]))
    parts = []
    for side in ([0], [1], [0, 1], [1, 0])[seed % 4]:
        toe = sk.legs[side][3]
        idx = np.sort(rng.choice(S, size=[1, 2, 3, 40][seed % 4] + side, replace=False))
        wanted = pose[idx, toe, :3, 3] + rng.normal(scale=[0.01, 0.1, 0.4][seed % 3], size=(len(idx), 3))
        turn = rng.normal(scale=0.3, size=len(idx)) * (seed % 2)
        parts.append((side, idx, wanted, turn))
    bend = [0.0, 0.1, 0.3, 0.0][seed // 4 % 4]
    new, old = rots.copy(), rots.copy()
    LegSolver(sk, pose, forward, bend).solve_many(new, parts)
    old_solve_many(LegSolver(sk, pose, forward, bend), old, parts)
    assert new.tobytes() == old.tobytes()
    assert not np.array_equal(new, rots)


@pytest.mark.parametrize("min_bend", [0.0, 0.05, 0.4])
def test_soft_reach_of_one_step_is_soft_reach(min_bend):
    rng = np.random.default_rng(int(min_bend * 100))
    hip, knee, ankle, target, _ = _legs(rng, 400)
    target = hip + (target - hip) * rng.uniform(0.5, 3.0, size=(400, 1))      # many beyond the soft reach
    whole = soft_reach(hip, knee, ankle, target, min_bend=min_bend)
    cos_bend = float(np.cos(min_bend)) if min_bend > 0 else None
    rows = [solver._soft_reach_row(*row, solver.SOFT_REACH, cos_bend)
            for row in zip(hip.tolist(), knee.tolist(), ankle.tolist(), target.tolist())]
    assert np.array(rows).tobytes() == whole.tobytes()
    assert not np.array_equal(whole, target)       # some were eased


def test_few_steps_rotate_the_heel_as_quat_rotate():
    rng = np.random.default_rng(5)
    q, v = tf.quat_normalize(rng.normal(size=(300, 4))), rng.normal(size=(300, 3))
    rows = [solver._rotated(a, b) for a, b in zip(q.tolist(), v.tolist())]
    assert np.array(rows).tobytes() == tf.quat_rotate(q, v).tobytes()


def test_corrections_on_floats_are_the_old_corrections():
    rng = np.random.default_rng(8)
    anim = tf.quat_normalize(rng.normal(size=(50, 3, 4)))
    out = tf.quat_normalize(rng.normal(size=(50, 3, 4)))
    out[:10] = anim[:10]                                                  # no correction at all
    out[10:20] = -anim[10:20]                                             # the same rotation, the other sign
    out[20:30] = tf.quat_mul(tf.quat_from_rotvec(rng.normal(scale=1e-9, size=(10, 3, 3))), anim[20:30])
    old = tf.quat_to_rotvec(tf.quat_mul(out, tf.quat_conjugate(anim)))
    assert lr.corrections(out, anim).tobytes() == old.tobytes()
    assert lr.corrections(out[:2], anim[:2]).tobytes() == old[:2].tobytes()


@pytest.mark.parametrize("rows", [1, 2, lr.FEW_ROWS])
def test_chain_points_of_a_few_rows_are_the_old_ones(rows):
    rng = np.random.default_rng(rows)
    parent = forward_kinematics(leg_skeleton(), rng.normal(size=(rows, 10, 3)),
                                tf.quat_normalize(rng.normal(size=(rows, 10, 4))))[:, 1]
    offsets = leg_skeleton().offsets[2:6]
    locs, rots = rng.normal(size=(rows, 4, 3)), rng.normal(size=(rows, 4, 4))     # unnormalised on purpose
    heads, mats = lr.chain_points(parent, offsets, locs, rots)
    m, old_heads, old_mats = parent, [], []
    basis = tf.compose(locs, tf.quat_to_matrix(rots))
    for b in range(4):
        m = m @ offsets[b] @ basis[:, b]
        old_heads.append(m[:, :3, 3])
        old_mats.append(m[:, :3, :3])
    assert heads.tobytes() == np.stack(old_heads, axis=1).tobytes()
    assert mats.tobytes() == np.stack(old_mats, axis=1).tobytes()


def old_slew_limited(x, step):
    x = np.asarray(x, dtype=np.float64)

    def one_way(v):
        out = np.empty_like(v)
        y = float(v[0]) if len(v) else 0.0
        for i, t in enumerate(v.tolist()):
            y += min(max(t - y, -step), step)
            out[i] = y
        return out

    return 0.5 * (one_way(x) + one_way(x[::-1])[::-1])


@pytest.mark.parametrize("size", [0, 1, 2, 500])
def test_slew_limited_on_a_list_is_the_old_one(size):
    rng = np.random.default_rng(size)
    x = np.cumsum(rng.normal(scale=0.05, size=size)) + np.repeat(rng.random(size // 50 + 1), 50)[:size]
    for step in (0.01, 0.2, np.float64(0.03)):
        assert lr.slew_limited(x, step).tobytes() == old_slew_limited(x, step).tobytes()


def test_world_rotations_of_some_steps_are_those_of_all_steps():
    sk = leg_skeleton()
    rng = np.random.default_rng(21)
    S = 300
    rots = tf.quat_normalize(rng.normal(size=(S, len(sk.parents), 4)))
    rots[:100] = [1.0, 0.0, 0.0, 0.0]                      # steps that all pick the same pivot
    pose = forward_kinematics(sk, np.zeros((S, len(sk.parents), 3)), rots)
    forward = np.tile([0.0, -1.0, 0.0], (S, 1))
    for idx in (np.arange(50), np.sort(rng.choice(S, size=120, replace=False)), np.arange(100, 300)):
        some, every = LegSolver(sk, pose, forward), LegSolver(sk, pose, forward)
        for j in range(len(sk.parents)):
            assert some.world_q_at(j, idx).tobytes() == every.world_q(j)[idx].tobytes()
        parts = [(side, idx, pose[idx, sk.legs[side][3], :3, 3] + rng.normal(scale=0.05, size=(len(idx), 3)),
                  rng.normal(scale=0.2, size=len(idx))) for side in (0, 1)]
        new, old = rots.copy(), rots.copy()
        LegSolver(sk, pose, forward).solve_many(new, parts)
        old_solve_many(LegSolver(sk, pose, forward), old, parts)
        assert new.tobytes() == old.tobytes()
