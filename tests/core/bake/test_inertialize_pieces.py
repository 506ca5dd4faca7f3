"""Inertialization fades each jump's offsets over its piece: computed with the
pieces one after another (each fade's last value only) and then every faded
step at once, it gives the bits of fading each piece in turn."""

import math

import numpy as np

from core.bake.pose import MAX_FADE_STRETCH, inertialize
from core.bake.rows import angular_velocities_of
from core.maths import same_everywhere
from core.maths import transforms as tf
from core.maths.springs import halflife_to_damping, spring_floats


def _piece_by_piece(pose_locations, pose_rotations, rows, jumped, hips, nxt, fps, halflife, fade_speeds=None):
    """Each piece faded in turn (the offsets of every step of a piece, then the next jump); the joints
    whose offset would turn faster than ``fade_speeds`` faded again at their slower rate."""
    dt = 1.0 / fps
    lin = (pose_locations[nxt, hips] - pose_locations[:, hips]) * fps
    locs = pose_locations[rows].astype(np.float64)
    rots = tf.quat_normalize(pose_rotations[rows].astype(np.float64))
    J = rots.shape[1]
    x, v, px, pv = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros(3), np.zeros(3)
    jumps = np.flatnonzero(jumped[1:]) + 1
    srcs, dsts = nxt[rows[jumps - 1]], rows[jumps]
    av_src = angular_velocities_of(pose_rotations, nxt, fps, srcs)
    av_dst = angular_velocities_of(pose_rotations, nxt, fps, dsts)
    for i, (a, b) in enumerate(zip(jumps, np.append(jumps[1:], len(rows)))):
        src, r = srcs[i], dsts[i]
        shown = tf.quat_mul(tf.quat_from_rotvec(x), tf.quat_normalize(pose_rotations[src].astype(np.float64)))
        x = tf.quat_to_rotvec(tf.quat_mul(shown, tf.quat_conjugate(tf.quat_normalize(
            pose_rotations[r].astype(np.float64)))))
        v = (av_src[i] + v) - av_dst[i]
        px = (pose_locations[src, hips] + px) - pose_locations[r, hips]
        pv = (lin[src] + pv) - lin[r]
        t = np.arange(0, b - a + 1) * dt
        y = halflife_to_damping(halflife)
        e = same_everywhere.exp(-y * t)
        xs, vs = spring_floats(x[None], v[None], 0.0, y, e[:, None, None], t[:, None, None])
        if fade_speeds is not None:
            size = tf.row_norm(x)
            slow = np.flatnonzero(y * size > math.e * fade_speeds)
            ys = np.maximum(math.e * fade_speeds[slow] / size[slow], y / MAX_FADE_STRETCH)
            es = same_everywhere.exp(-ys[None, :] * t[:, None])
            xs[:, slow], vs[:, slow] = spring_floats(x[None, slow], v[None, slow], 0.0, ys[None, :, None],
                                                     es[:, :, None], t[:, None, None])
        ps, pvs = spring_floats(px[None], pv[None], 0.0, y, e[:, None], t[:, None])
        rots[a:b] = tf.quat_mul(tf.quat_from_rotvec(xs[:-1]), rots[a:b])
        locs[a:b, hips] += ps[:-1]
        x, v, px, pv = xs[-1], vs[-1], ps[-1], pvs[-1]
    return locs, rots


def _two_clips(rng, N, J, first_end):
    """Random rows (float32 locations and wandering unit quaternions) of ``J`` joints in
    two clips, rows 0..``first_end`` and the rest; returns (locations, rotations, next rows)."""
    pose_locations = rng.normal(scale=0.2, size=(N, J, 3)).astype(np.float32)
    pose_rotations = tf.quat_normalize(np.cumsum(rng.normal(scale=0.05, size=(N, J, 4)), axis=0)
                                       + [1.0, 0.0, 0.0, 0.0]).astype(np.float32)
    nxt = np.minimum(np.arange(1, N + 1), N - 1)
    nxt[first_end] = first_end
    return pose_locations, pose_rotations, nxt


def test_inertialize_is_the_pieces_faded_in_turn_bit_for_bit():
    rng = np.random.default_rng(31)
    N, J, S = 400, 9, 300
    pose_locations, pose_rotations, nxt = _two_clips(rng, N, J, 199)
    # Rows played: pieces of 1 to 40 steps (jumps on consecutive steps among them).
    rows, jumped, r = [], [], 0
    for n in rng.integers(1, 40, size=60).tolist() + [1, 1, 1]:
        start = int(rng.integers(0, N - 45))
        for k in range(n):
            rows.append(start + k)
            jumped.append(k == 0)
        if len(rows) >= S:
            break
    rows, jumped = np.array(rows[:S]), np.array(jumped[:S])
    jumped[0] = False
    for fps, halflife in ((60.0, 0.1), (30.0, 0.05)):
        want = _piece_by_piece(pose_locations, pose_rotations, rows, jumped, 1, nxt, fps, halflife)
        got = inertialize(pose_locations, pose_rotations, rows, jumped, 1, nxt, fps, halflife)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
        # With each joint's fade held to a turn speed: some joints fade slower at some jumps.
        speeds = rng.uniform(0.5, 6.0, size=J)
        want = _piece_by_piece(pose_locations, pose_rotations, rows, jumped, 1, nxt, fps, halflife, speeds)
        got = inertialize(pose_locations, pose_rotations, rows, jumped, 1, nxt, fps, halflife, speeds)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
        plain = inertialize(pose_locations, pose_rotations, rows, jumped, 1, nxt, fps, halflife)[1]
        assert not np.array_equal(plain, got[1])         # the limit took effect somewhere
    # No jump at all: the played rows as they are.
    got = inertialize(pose_locations, pose_rotations, rows, np.zeros(S, dtype=bool), 1, nxt, 60.0, 0.1)
    assert got[0].tobytes() == pose_locations[rows].astype(np.float64).tobytes()


def test_warped_stand_ins_only_where_jumps_read_them_give_the_same_pose():
    # Under the time warp the stand-in rows one and two steps on are made only
    # around the jumps; the inertialized pose is the one made from them on every step.
    from core.bake import time_warp as twp

    rng = np.random.default_rng(32)
    N, J, S = 300, 7, 240
    pose_locations, pose_rotations, nxt = _two_clips(rng, N, J, 149)
    rows = rng.integers(0, N, size=S)
    phase = rng.random(S) * 0.99
    rate = 0.8 + 0.4 * rng.random(S)
    jumped = rng.random(S) < 0.15
    jumped[0] = False
    jumped[[40, 41, 42]] = True                      # jumps on consecutive steps
    all_locs, all_rots, all_rows, all_nxt = twp.warped_rows(pose_locations, pose_rotations, rows, phase, rate, nxt)
    every = inertialize(all_locs, all_rots, all_rows, jumped, 1, all_nxt, 60.0, 0.1)
    locs, rots, vrows, vnxt = twp.warped_rows(pose_locations, pose_rotations, rows, phase, rate, nxt, jumped)
    assert len(locs) < 3 * S
    some = inertialize(locs, rots, vrows, jumped, 1, vnxt, 60.0, 0.1)
    assert some[0].tobytes() == every[0].tobytes() and some[1].tobytes() == every[1].tobytes()
