"""The pose stage's and the report's faster forms give the bits of the ones they
replaced (kept here as they were): inertialization, its quaternion steps, forward
kinematics (whole matrices and heads alone) and the report's figures."""

import pickle

import numpy as np
import pytest

from core.bake import pipeline as bake
from core.bake import pose
from core.maths import same_everywhere
from core.maths import transforms as tf
from core.maths.springs import halflife_to_damping, spring_floats
from core.measure import joints as mj
from core.measure import report as rp
from core.measure.joints import Take
from leg_skeleton import leg_skeleton

# ---------------------------------------------------------------------------
# The replaced code, as it was


def old_inertialize(pose_locations, pose_rotations, rows, jumped, hips, nxt, fps, halflife, fade_speeds=None):
    dt = 1.0 / fps
    lin = (pose_locations[nxt, hips] - pose_locations[:, hips]) * fps
    locs = pose_locations[rows].astype(np.float64)
    rots = tf.quat_normalize(pose_rotations[rows].astype(np.float64))
    J = rots.shape[1]
    x, v, px, pv = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros(3), np.zeros(3)
    jumps = np.flatnonzero(jumped[1:]) + 1
    srcs, dsts = nxt[rows[jumps - 1]], rows[jumps]
    av_src, av_dst = pose.angular_velocities_of(pose_rotations, nxt, fps, srcs), \
        pose.angular_velocities_of(pose_rotations, nxt, fps, dsts)
    ends = np.append(jumps[1:], len(rows))
    y = halflife_to_damping(halflife)
    norm_src = tf.quat_normalize(pose_rotations[srcs].astype(np.float64))
    conj_dst = tf.quat_conjugate(tf.quat_normalize(pose_rotations[dsts].astype(np.float64)))
    starts = []
    for i, (a, b) in enumerate(zip(jumps, ends)):
        src, r = srcs[i], dsts[i]
        shown = tf.quat_mul(tf.quat_from_rotvec(x), norm_src[i])
        x = tf.quat_to_rotvec(tf.quat_mul(shown, conj_dst[i]))
        v = (av_src[i] + v) - av_dst[i]
        px = (pose_locations[src, hips] + px) - pose_locations[r, hips]
        pv = (lin[src] + pv) - lin[r]
        yj = pose.fade_rates(x, y, fade_speeds)
        starts.append((x, v, px, pv, yj))
        t = float(b - a) * dt
        e = same_everywhere.exp_float(-y * t)
        x, v = spring_floats(x, v, 0.0, yj[:, None], pose._decays(yj, y, t, e)[:, None], t)
        px, pv = spring_floats(px, pv, 0.0, y, e, t)
    if len(jumps):
        k = np.concatenate([np.arange(0, b - a) for a, b in zip(jumps, ends)])
        piece = np.repeat(np.arange(len(jumps)), ends - jumps)
        steps = np.repeat(jumps, ends - jumps) + k
        t = k * dt
        e = same_everywhere.exp(-y * t)
        x0, v0, p0, pv0, y0 = (np.array(part)[piece] for part in zip(*starts))
        xs, _ = spring_floats(x0, v0, 0.0, y0[:, :, None], pose._decays(y0, y, t, e)[:, :, None], t[:, None, None])
        ps, _ = spring_floats(p0, pv0, 0.0, y, e[:, None], t[:, None])
        rots[steps] = tf.quat_mul(tf.quat_from_rotvec(xs), rots[steps])
        locs[steps, hips] += ps
    return locs, rots


def _old_mm4_last(a, b, out, term):
    np.multiply(a[:, 0, None], b[None, 0], out=out)
    for k in (1, 2, 3):
        np.multiply(a[:, k, None], b[None, k], out=term)
        np.add(out, term, out=out)


def old_pose_fk_frames_last(parents, offsets, basis_t, order):
    offsets = np.asarray(offsets, dtype=np.float64)
    order = list(order)
    out = np.empty((len(parents), 4, 4, basis_t.shape[-1]))
    if len(order) < len(parents):
        out[sorted(set(range(len(parents))) - set(order))] = np.nan
    step, term = np.empty(out.shape[1:]), np.empty(out.shape[1:])
    for b, j in zip(basis_t, order):
        p = parents[j]
        if p < 0:
            _old_mm4_last(offsets[j][:, :, None], b, out[j], term)
        else:
            _old_mm4_last(out[p], offsets[j][:, :, None], step, term)
            _old_mm4_last(step, b, out[j], term)
    return np.ascontiguousarray(np.moveaxis(out, -1, 0))


def old_forward_kinematics(skeleton, locs, rots, joints=None):
    need = list(range(len(skeleton.parents))) if joints is None else tf.with_ancestors(skeleton.parents, joints)
    locs, rots = np.asarray(locs)[:, need], np.asarray(rots)[:, need]
    q = tf.quat_normalize(rots)
    basis = np.zeros((len(need), 4, 4, len(q)))
    for k, e in enumerate(tf.rotation_elements(*(q[:, :, c].T for c in range(4)))):
        basis[:, k // 3, k % 3] = e
    basis[:, :3, 3] = np.moveaxis(locs, 0, -1)
    basis[:, 3, 3] = 1.0
    return old_pose_fk_frames_last(skeleton.parents, skeleton.offsets, basis, need)


def old_skeleton_joints(skeleton, locs, rots, fps, contacts, scale=1.0):
    arms = mj._find_upper_arms(skeleton)
    pose_ = old_forward_kinematics(skeleton, locs, rots, [skeleton.hips] + pose.leg_joints(skeleton) + (arms or []))
    heads = pose_[:, :, :3, 3] * scale
    legs = skeleton.legs

    def pair(k):
        return heads[:, [legs[0][k], legs[1][k]]]

    return mj.Joints(fps=float(fps), hips=heads[:, skeleton.hips], hip_joints=pair(0), ankles=pair(2),
                     toes=pair(3), contacts=np.asarray(contacts, dtype=bool),
                     shoulders=heads[:, arms] if arms else None)


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes()


# ---------------------------------------------------------------------------
# Inertialization


def _rows_case(rng, N=300, J=7, S=400, dtype=np.float64, jump_share=0.08):
    """Poses of N rows in three clips, S steps playing them with jumps (some on
    consecutive steps, one on step 1)."""
    ends = np.array([0, 120, 210, N])
    nxt = np.arange(1, N + 1)
    nxt[ends[1:] - 1] = ends[1:] - 1                   # each clip's last row holds
    locs = np.cumsum(rng.normal(scale=0.02, size=(N, J, 3)), axis=0).astype(dtype)
    rots = tf.quat_normalize(np.cumsum(rng.normal(scale=0.2, size=(N, J, 4)), axis=0) + [3.0, 0, 0, 0])
    rots[rng.random(N) < 0.2] *= -1.0
    rots = rots.astype(dtype)
    jumped = rng.random(S) < jump_share
    jumped[[1, 2, 3, 50, 51]] = True
    rows = np.empty(S, dtype=np.int64)
    rows[0] = rng.integers(N)
    for s in range(1, S):
        rows[s] = rng.integers(N) if jumped[s] else nxt[rows[s - 1]]
    return locs, rots, rows, jumped, nxt


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(4))
def test_inertialize_is_the_old_one_bit_for_bit(dtype, seed):
    rng = np.random.default_rng(seed)
    locs, rots, rows, jumped, nxt = _rows_case(rng, dtype=dtype)
    J = locs.shape[1]
    speeds = [None, np.full(J, 1e9), _fade_speeds(rng, J)]
    for fade in speeds:
        for halflife, fps in ((0.1, 60.0), (0.05, 30.0)):
            old = old_inertialize(locs, rots, rows, jumped, 1, nxt, fps, halflife, fade)
            new = pose.inertialize(locs, rots, rows, jumped, 1, nxt, fps, halflife, fade)
            assert _same(old[0], new[0]) and _same(old[1], new[1])
    none = np.zeros(len(rows), dtype=bool)
    old, new = old_inertialize(locs, rots, rows, none, 2, nxt, 60.0, 0.1), \
        pose.inertialize(locs, rots, rows, none, 2, nxt, 60.0, 0.1)
    assert _same(old[0], new[0]) and _same(old[1], new[1])


def test_the_slow_fades_are_exercised():
    # The fade speeds of the test above do lower some joints' rates (else it could not fail there).
    rng = np.random.default_rng(0)
    locs, rots, rows, jumped, nxt = _rows_case(rng)
    fade = _fade_speeds(rng, locs.shape[1])
    jumps = np.flatnonzero(jumped[1:]) + 1
    lengths = np.append(jumps[1:], len(rows)) - jumps
    _, _, rates = pose._rotation_offsets(rots, nxt, 60.0, nxt[rows[jumps - 1]], rows[jumps], lengths,
                                         halflife_to_damping(0.1), fade)
    y = halflife_to_damping(0.1)
    assert (rates == y).any() and (rates == y / pose.MAX_FADE_STRETCH).any()
    assert ((rates > y / pose.MAX_FADE_STRETCH) & (rates < y)).any()


def _fade_speeds(rng, J):
    """Fade speeds (J,): the odd joints' never reached, the even ones' now and then."""
    return np.where(np.arange(J) % 2, 100.0, rng.random(J) * 4.0)


def _quats(rng, n):
    q = rng.normal(size=(n, 4))
    q[: n // 8] = [1.0, 0.0, 0.0, 0.0]                       # no turn
    q[n // 8: n // 4, 1:] *= 1e-14                           # tiny turns (the 1e-12 switch)
    q[n // 4: n // 3, 0] = 0.0                               # half turns
    q[n // 3: n // 2] *= -1.0
    special = [[0.5, 0.5, 0.5, 0.5], [-0.0, 1.0, 0.0, -0.0], [0.0, 0.0, -1.0, 0.0], [1, -0.0, 0, 0]]
    q[n // 2: n // 2 + 4] = special[:len(q[n // 2: n // 2 + 4])]
    return q


def test_quaternion_steps_are_the_transforms_bit_for_bit():
    rng = np.random.default_rng(5)
    for n in (1, 7, 24, 300):
        a, b = tf.quat_normalize(_quats(rng, n)), tf.quat_normalize(_quats(rng, n)[::-1])
        assert _same(pose.quat_mul_by(a, pose.quat_mul_terms(b)), tf.quat_mul(a, b))
        big = rng.normal(size=(n, 4)) * 1e3
        assert _same(pose.quat_mul_by(big, pose.quat_mul_terms(a)), tf.quat_mul(big, a))
        assert _same(tf.quat_to_rotvec(a * 3.0), old_quat_to_rotvec(a * 3.0))
        r = rng.normal(size=(n, 3)) * rng.choice([1e-15, 1e-6, 1.0, 4.0], size=(n, 1))
        r[0] = 0.0
        assert _same(tf.quat_from_rotvec(r), old_quat_from_rotvec(r))
        assert _same(tf.quat_from_rotvec(r.reshape(1, n, 3)), old_quat_from_rotvec(r.reshape(1, n, 3)))


def old_quat_to_rotvec(q):
    """transforms.quat_to_rotvec with np.linalg.norm, as it was."""
    q = tf.quat_normalize(q)
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * same_everywhere.arctan2(s, q[..., :1])
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)
    return v * scale


def old_quat_from_rotvec(r):
    """transforms.quat_from_rotvec with np.linalg.norm, as it was."""
    r = np.asarray(r, dtype=np.float64)
    angle = np.linalg.norm(r, axis=-1, keepdims=True)
    half = 0.5 * angle
    k = np.where(angle > 1e-12, np.sin(half) / np.maximum(angle, 1e-300), 0.5)
    return np.concatenate([np.cos(half), r * k], axis=-1)


def test_faded_is_the_spring_offset_bit_for_bit():
    rng = np.random.default_rng(6)
    x, v = rng.normal(size=(50, 6, 3)), rng.normal(size=(50, 6, 3))
    x[0] = -0.0
    y, e, t = rng.random((50, 6, 1)) * 20, rng.random((50, 6, 1)), rng.random((50, 1, 1))
    assert _same(pose._faded(x.copy(), v, y, e, t), spring_floats(x, v, 0.0, y, e, t)[0])
    assert _same(pose._faded(x[:, 0].copy(), v[:, 0], 13.0, e[:, 0], t[:, 0]),
                 spring_floats(x[:, 0], v[:, 0], 0.0, 13.0, e[:, 0], t[:, 0])[0])


# ---------------------------------------------------------------------------
# Forward kinematics


def _skeleton(rng, last_row=(0.0, 0.0, 0.0, 1.0)):
    parents = np.array([-1, 0, 1, 2, 3, 1, 5, 6, 7, 1, 9, 10, 11, 12, 11, 11])
    offsets = np.zeros((len(parents), 4, 4))
    offsets[:, :3, :3] = tf.quat_to_matrix(tf.quat_normalize(rng.normal(size=(len(parents), 4))))
    offsets[:, :3, 3] = rng.normal(scale=0.3, size=(len(parents), 3))
    offsets[:, 3] = last_row
    return bake.BakeSkeleton(names=["j%d" % j for j in range(len(parents))], parents=parents, offsets=offsets,
                             root=0, hips=1, legs=[(2, 3, 4, 4), (5, 6, 7, 8)])


@pytest.mark.parametrize("last_row", [(0.0, 0.0, 0.0, 1.0), (-0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 2.0)])
def test_forward_kinematics_is_the_old_one_bit_for_bit(last_row):
    rng = np.random.default_rng(7)
    sk = _skeleton(rng, last_row)
    S, J = 130, len(sk.parents)
    locs = rng.normal(scale=0.1, size=(S, J, 3))
    rots = rng.normal(size=(S, J, 4))
    rots[:5] = [1.0, -0.0, 0.0, -0.0]
    for joints in (None, pose.leg_joints(sk), [13], [1, 15, 3]):
        old = old_forward_kinematics(sk, locs, rots, joints)
        assert _same(pose.forward_kinematics(sk, locs, rots, joints), old)
        assert _same(pose.joint_heads(sk, locs, rots, joints), np.ascontiguousarray(old[:, :, :3, 3]))
    locs[3, 4] = np.inf                              # not finite: the last rows are worked out
    locs[7, 2] = np.nan
    with np.errstate(invalid="ignore"):
        old, new = old_forward_kinematics(sk, locs, rots), pose.forward_kinematics(sk, locs, rots)
    assert _same(new, old) and np.isnan(old[3, 4, 3, 3])


def test_pose_fk_of_any_basis_is_the_old_one_bit_for_bit():
    rng = np.random.default_rng(8)
    sk = _skeleton(rng)
    J = len(sk.parents)
    basis = rng.normal(size=(40, J, 4, 4))               # last rows not (0, 0, 0, 1)
    for b in (basis, tf.compose(rng.normal(size=(40, J, 3)), tf.quat_to_matrix(rng.normal(size=(40, J, 4))))):
        for order in (list(range(J)), tf.with_ancestors(sk.parents, [4, 8])):
            bt = np.moveaxis(b, 0, -1)[order]
            assert _same(tf.pose_fk_frames_last(sk.parents, sk.offsets, bt, order),
                         old_pose_fk_frames_last(sk.parents, sk.offsets, bt, order))


# ---------------------------------------------------------------------------
# The report


def _arms_skeleton():
    """leg_skeleton with a spine, a neck and two arms (so the humanoid mapping finds upper arms)."""
    sk = leg_skeleton()
    names = sk.names + ["spine", "chest", "neck", "head", "l_shoulder", "l_arm", "l_fore", "l_hand",
                        "r_shoulder", "r_arm", "r_fore", "r_hand"]
    parents = np.concatenate([sk.parents, [1, 10, 11, 12, 11, 14, 15, 16, 11, 18, 19, 20]])
    offs = [(0, 0, 0.15), (0, 0, 0.2), (0, 0, 0.2), (0, 0, 0.1), (0.05, 0, 0.15), (0.12, 0, 0), (0.28, 0, 0),
            (0.25, 0, 0), (-0.05, 0, 0.15), (-0.12, 0, 0), (-0.28, 0, 0), (-0.25, 0, 0)]
    offsets = np.concatenate([sk.offsets, np.tile(np.eye(4), (len(offs), 1, 1))])
    offsets[len(sk.names):, :3, 3] = offs
    return bake.BakeSkeleton(names=names, parents=parents, offsets=offsets, root=0, hips=1, legs=sk.legs)


def _random_bake(skeleton, rng, n=600, S=500, fps=60.0, scene_fps=24.0):
    J = len(skeleton.names)
    root = np.cumsum(rng.normal(scale=0.01, size=(n, 3)) + [0.0, -0.012, 0.0], axis=0)
    root[:, 2] = 0.0
    locs = rng.normal(scale=0.003, size=(n, J, 3))
    locs[:, skeleton.root] = root
    rots = tf.quat_normalize(rng.normal(scale=0.08, size=(n, J, 4)) + [1.0, 0.0, 0.0, 0.0])
    heads = old_forward_kinematics(skeleton, locs, rots)[:, :, :3, 3]
    contacts = rng.random((n, 2)) < 0.6
    take = Take(clip_offsets=np.array([0, n // 2, n]), clip_fps=np.array([fps, fps]),
                mirrored=np.array([False, True]), clip_index=(np.arange(n) >= n // 2).astype(np.int64),
                contacts=contacts, toe_positions=heads[:, [5, 9]], foot_positions=heads[:, [4, 8]],
                root_positions=root, root_quats=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
                pose_locations=locs.astype(np.float32), pose_rotations=rots.astype(np.float32))
    rows = np.minimum(np.arange(S) + rng.integers(0, 3, size=S).cumsum() // 4, n - 1)
    searched = rng.random(S) < 0.1
    result = bake.BakeResult(
        dt=1.0 / fps, locations=locs[rows], rotations=rots[rows], rows=rows, searched=searched,
        jumped=searched & (rng.random(S) < 0.5), cost=np.where(searched, rng.random(S), 0.0),
        contacts=contacts[rows], locked=rng.random((S, 2)) < 0.3, lock_count=4, root_pos=root[rows],
        root_quat=np.tile([1.0, 0.0, 0.0, 0.0], (S, 1)), sim_pos=root[rows] + 0.01,
        controller=root[rows] + rng.normal(scale=0.02, size=(S, 3)))
    frames = np.arange(1, int((S - 1) / fps * scene_fps) + 2, dtype=np.float64)
    times = (frames - 1) / scene_fps
    baked = rp.BakeFrames(frames, times, scene_fps, bake.resample(result, times)[0], bake.resample(result, times)[1])
    return take, result, baked


def _old_leg_points(skeleton, locs, rots):
    return bake.leg_points(skeleton, old_forward_kinematics(skeleton, locs, rots, pose.leg_joints(skeleton)))


@pytest.mark.parametrize("arms", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_report_is_the_old_one(monkeypatch, arms, seed):
    sk = _arms_skeleton() if arms else leg_skeleton()
    take, result, baked = _random_bake(sk, np.random.default_rng(seed))
    allowed = np.ones(len(take.clip_index), bool)
    facing = np.column_stack([np.zeros(len(result.rows)), -np.ones(len(result.rows))])
    new = rp.measure_bake(take, sk, result, baked, allowed, facing, 0.5, path_scale=1.3)
    with monkeypatch.context() as m:
        m.setattr(rp, "_leg_points", _old_leg_points)
        m.setattr(rp, "skeleton_joints", old_skeleton_joints)
        m.setattr(mj, "skeleton_joints", old_skeleton_joints)
        old = rp.measure_bake(take, sk, result, baked, allowed, facing, 0.5, path_scale=1.3)
    assert new.foot_sliding_cm_per_foot_per_moving_s > 0.0
    assert (mj.upper_arms(sk) is not None) == arms
    assert pickle.dumps(new) == pickle.dumps(old)


def test_upper_arms_follow_the_skeleton():
    with_arms, legs_only = _arms_skeleton(), leg_skeleton()
    assert mj.upper_arms(with_arms) == [15, 19]
    assert mj.upper_arms(legs_only) is None
    assert mj.upper_arms(with_arms) == [15, 19]
    moved = _arms_skeleton()
    moved.names = list(moved.names)
    moved.names[15], moved.names[19] = "l_upper", "r_upper"
    assert mj.upper_arms(moved) == mj._find_upper_arms(moved)


def test_the_report_leg_points_keep_their_values_and_layout():
    # The sums over them add in the order their strides give (the bench's sliding figures moved in
    # the last digits with contiguous points): the same strides as leg_points of the matrices.
    sk = _arms_skeleton()
    _, result, _ = _random_bake(sk, np.random.default_rng(4))
    for new, old in zip(rp._leg_points(sk, result.locations, result.rotations),
                        _old_leg_points(sk, result.locations, result.rotations)):
        assert _same(new, old) and new.strides == old.strides


def test_the_report_through_a_cache_is_the_same():
    sk = _arms_skeleton()
    take, result, baked = _random_bake(sk, np.random.default_rng(9))
    allowed = np.ones(len(take.clip_index), bool)
    kept = {}

    def cache(key, make):
        if key not in kept:
            kept[key] = make()
        return kept[key]

    alone = rp.measure_bake(take, sk, result, baked, allowed, None, 0.5)
    first, again = (rp.measure_bake(take, sk, result, baked, allowed, None, 0.5, cache=cache) for _ in range(2))
    assert any(key.startswith("raw_low_sliding_") for key in kept)
    assert pickle.dumps(alone) == pickle.dumps(first) == pickle.dumps(again)
