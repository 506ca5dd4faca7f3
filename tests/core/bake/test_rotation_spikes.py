"""The largest per-frame joint rotation change (the bench's "rot x"): the three
causes of spikes the path suite showed, each held to the data's own pace.

- The leg IK bent a nearly straight knee the wrong way (and back a few frames
  later) when the data's knee sat slightly behind the hip-ankle line.
- The root's heading turned faster than the take ever does when the path's
  pull and the look-ahead's heading mend added to the data's own turn.
- The strafe warp's spine counter-turn, spread evenly, turned the stiff upper
  spine bones faster than the take turns them.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from core.bake import pipeline as bake, pose, root_motion, strafe
from core.maths import transforms as tf
from core.maths.ik import two_bone_ik_positions

FORWARD = np.array([0.0, -1.0, 0.0])   # the character faces -Y
Z = np.array([0.0, 0.0, 1.0])


def _leg_with_knee_at(offsets):
    """Hip at 1 m, thigh and shin 0.42 m, the ankle straight below; the knee
    moved ``offsets`` (n,) metres along -Y (forward; negative: behind the line)."""
    n = len(offsets)
    hip = np.tile([0.0, 0.0, 1.0], (n, 1))
    knee = np.tile([0.0, 0.0, 0.58], (n, 1))
    knee[:, 1] = -np.asarray(offsets)
    # Keep the thigh's length; the ankle 0.42 m from the knee, straight under the hip.
    knee = hip + 0.42 * (knee - hip) / np.linalg.norm(knee - hip, axis=1, keepdims=True)
    ankle = np.column_stack([np.zeros(n), np.zeros(n), knee[:, 2] - np.sqrt(0.42 ** 2 - knee[:, 1] ** 2)])
    return hip, knee, ankle


def test_the_ik_never_bends_a_nearly_straight_knee_backwards():
    # The data's knee goes from 1 cm in front of the line to 5 cm behind it
    # (a hyperextended stance); the IK shortens the leg by a few centimetres.
    offsets = np.linspace(0.01, -0.05, 61)
    hip, knee, ankle = _leg_with_knee_at(offsets)
    target = hip + (ankle - hip) * 0.95
    _, new_knee, new_ankle = two_bone_ik_positions(hip, knee, ankle, target, FORWARD, pole_blend=0.15)
    assert np.abs(new_ankle - target).max() < 1e-6
    forward = (new_knee - hip) @ FORWARD
    # Always bent forward, as a knee bends ...
    assert forward.min() > 0.05
    # ... and the knee moves smoothly while the data's knee drifts (the old
    # blend passed through no side at all and flipped it about 25 cm).
    assert np.linalg.norm(np.diff(new_knee, axis=0), axis=1).max() < 0.01


def _turning_take(n=300, turn=0.02):
    """A one-clip database whose root walks 1 cm and turns ``turn`` radians a row."""
    yaw = turn * np.arange(n)
    pos = np.column_stack([np.zeros(n), -0.01 * np.arange(n), np.zeros(n)])
    db = SimpleNamespace(num_rows=n, clip_offsets=np.array([0, n]), clip_index=np.zeros(n, dtype=np.int64),
                         contacts=np.zeros((n, 2), dtype=bool))
    return db, pos, tf.quat_from_axis_angle(Z, yaw)


@pytest.mark.parametrize("on", [True, False])
def test_corrections_do_not_turn_the_root_faster_than_the_data_turns(on):
    db, pos, quats = _turning_take()
    settings = bake.BakeSettings.of(turn_like_data=on)
    assert settings.look_ahead.on    # the heading mend is on
    root = root_motion.RootMotion(db, pos, quats, settings, 1.0 / 60.0)
    px = py = yaw = 0.0
    steps = []
    for row in range(100, 160):
        # The path asks for a heading well beyond the data's (half a radian on).
        _, _, new = root.advance(px, py, yaw, row, (0.0, 0.0), yaw + 0.5)
        steps.append(new - yaw)
        yaw = new
    steps = np.array(steps)
    if on:
        # The take's own turn is the fastest a step may take; corrections fill it.
        assert steps.max() == pytest.approx(0.02, abs=1e-9)
    else:
        assert steps.max() > 0.02 * 1.5
    assert steps.min() >= 0.02 - 1e-9       # never slower than the data here


def test_a_correction_may_slow_a_fast_turn_of_the_data():
    assert root_motion.capped_turn(0.05, -0.02, 0.02) == pytest.approx(0.03)
    assert root_motion.capped_turn(0.05, 0.02, 0.02) == pytest.approx(0.05)
    assert root_motion.capped_turn(-0.01, -0.03, 0.02) == pytest.approx(-0.02)


def _spine_skeleton():
    """root, hips, three spine bones and one leg (so the chain skips it)."""
    names = ["root", "hips", "spine", "chest", "neck", "up", "low", "foot", "toe"]
    parents = np.array([-1, 0, 1, 2, 3, 1, 5, 6, 7])
    offsets = np.tile(np.eye(4), (len(names), 1, 1))
    offsets[:, :3, 3] = [(0, 0, 0), (0, 0, 1), (0, 0, 0.2), (0, 0, 0.2), (0, 0, 0.2),
                         (0.1, 0, 0), (0, 0, -0.4), (0, 0, -0.4), (0, -0.1, 0)]
    return bake.BakeSkeleton(names=names, parents=parents, offsets=offsets, root=0, hips=1,
                             legs=[(5, 6, 7, 8)])


def test_the_strafe_counter_turn_spares_the_stiff_spine_bones():
    sk = _spine_skeleton()
    chain = strafe.upper_body_chain(sk)
    assert [sk.names[j] for j in chain] == ["spine", "chest", "neck"]
    # The data turns the spine bone 4x (and the chest 2x) as fast as the neck.
    n = 200
    t = np.arange(n)
    rots = np.tile([1.0, 0.0, 0.0, 0.0], (n, len(sk.names), 1))
    for bone, rate in zip(chain, (0.04, 0.02, 0.01)):
        rots[:, bone] = tf.quat_from_axis_angle(Z, rate * np.sin(t))
    nxt = np.minimum(t + 1, n - 1)
    shares = strafe.spine_shares(rots, nxt, chain)
    assert shares == pytest.approx([4 / 7, 2 / 7, 1 / 7], rel=0.05)
    # The upper body still turns by the whole angle, the neck by its small share.
    locs = np.zeros((3, len(sk.names), 3))
    still = np.tile([1.0, 0.0, 0.0, 0.0], (3, len(sk.names), 1))
    turned = still.copy()
    strafe.turn_upper_body(sk, locs, turned, np.full(3, 0.7), shares)
    angles = [2.0 * np.arccos(np.clip(turned[0, b, 0], -1, 1)) for b in chain]
    assert angles == pytest.approx(0.7 * shares, abs=1e-9)
    world = bake.forward_kinematics(sk, locs, turned)
    assert bake.yaw_of(tf.matrix_to_quat(world[:, chain[-1], :3, :3]))[0] == pytest.approx(0.7)


def test_a_jump_step_turns_a_joint_no_faster_than_the_data_playing():
    # Two clips of one joint turning about Z, at 0.05 and 0.03 rad a row; the
    # bake plays the first, then jumps into the second where the poses match.
    n = 100
    ang = np.concatenate([0.05 * np.arange(n), 0.03 * np.arange(n)])
    rots = tf.quat_from_axis_angle(Z, ang)[:, None]
    locs = np.zeros((2 * n, 1, 3))
    nxt = np.append(np.arange(1, 2 * n), 2 * n - 1)
    nxt[n - 1] = n - 1
    rows = np.concatenate([np.arange(10, 30), np.arange(150, 180)])
    jumped = np.zeros(len(rows), dtype=bool)
    jumped[20] = True
    _, out = pose.inertialize(locs, rots, rows, jumped, 0, nxt, 60.0, 0.1)
    steps = 2.0 * np.arccos(np.clip(np.abs(np.sum(out[1:, 0] * out[:-1, 0], axis=-1)), 0.0, 1.0))
    # The jump's step is one step of what was playing (the old fade began a
    # step late: it showed two steps' worth less the new clip's own turn).
    assert steps[19] == pytest.approx(0.05, abs=1e-6)
    assert steps[:19] == pytest.approx(0.05, abs=1e-6)
    # ... and the fade eases from there to the new clip's pace.
    assert steps.max() < 0.05 + 1e-6 and steps[-1] == pytest.approx(0.03, abs=0.005)


def test_the_stride_scale_changes_no_faster_than_its_rate():
    from core.bake.legs import stride_warp as sw

    dt = 1.0 / 60.0
    S = 120
    # The data walks 1.2 m/s throughout; the root starts at 0.8 m/s and speeds up to 1.8 in a tenth of a second.
    speed = np.where(np.arange(S) < 60, 0.8, 1.8)
    root = np.column_stack([np.zeros(S), -np.cumsum(speed * dt)])
    data = np.tile([0.0, -1.2 * dt], (S, 1))
    fast, _ = sw.stride_scale(root, data, dt)
    assert np.abs(np.diff(fast)).max() > 0.05          # the raw scale swings by 0.07 a step
    slow, _ = sw.stride_scale(root, data, dt, rate=3.0)
    assert np.abs(np.diff(slow)).max() <= 3.0 * dt + 1e-9
    assert slow[:30] == pytest.approx(fast[:30]) and slow[-30:] == pytest.approx(fast[-30:])
    assert bake.BakeSettings().stride_warp.stride_warp_rate > 0


def _jump_into_turned_clip(offset, fade_speeds, n=200):
    """One joint turning 0.01 rad a row about Z in two clips, the second turned
    ``offset`` radians from the first; the bake (60 fps) jumps from one to the other."""
    ang = np.concatenate([0.01 * np.arange(n), offset + 0.01 * np.arange(n)])
    rots = tf.quat_from_axis_angle(Z, ang)[:, None]
    nxt = np.append(np.arange(1, 2 * n), 2 * n - 1)
    nxt[n - 1] = n - 1
    rows = np.concatenate([np.arange(10, 30), np.arange(n + 30, n + 150)])
    jumped = np.zeros(len(rows), dtype=bool)
    jumped[20] = True
    _, out = pose.inertialize(np.zeros((2 * n, 1, 3)), rots, rows, jumped, 0, nxt, 60.0, 0.1, fade_speeds)
    steps = 2.0 * np.arccos(np.clip(np.abs(np.sum(out[1:, 0] * out[:-1, 0], axis=-1)), 0.0, 1.0))
    left = 2.0 * np.arccos(np.clip(np.abs(np.sum(out[:, 0] * rots[rows, 0], axis=-1)), 0.0, 1.0))
    return steps, left


def test_a_large_jump_offset_fades_no_faster_than_the_joint_turns():
    # A 0.4 rad (23 degree) offset fading over 0.1 s turns the joint at up to
    # y |x| / e = 2 rad/s on top of the data's 0.6 rad/s ...
    fast, _ = _jump_into_turned_clip(0.4, None)
    assert fast.max() > 0.03
    # ... held to the joint's own 0.6 rad/s, it turns at most twice the data's pace.
    steps, left = _jump_into_turned_clip(0.4, np.array([0.6]))
    assert steps.max() <= 0.02 + 1e-6
    assert left[20] == pytest.approx(0.4, abs=0.02) and left[-1] < 0.01       # still faded out
    # A small offset fades as before (no joint is slowed that need not be).
    small, _ = _jump_into_turned_clip(0.05, None)
    assert _jump_into_turned_clip(0.05, np.array([0.6]))[0] == pytest.approx(small, abs=0)


def test_a_still_joints_offset_still_fades_within_a_few_half_lives():
    # A joint the take never turns (speed 0): its fade lasts at most MAX_FADE_STRETCH half-lives' worth.
    _, left = _jump_into_turned_clip(0.4, np.array([0.0]))
    stretched = 0.1 * pose.MAX_FADE_STRETCH
    after = int(round(4 * stretched * 60))          # four stretched half-lives after the jump
    assert left[20 + after] < 0.4 * 0.25 and left[-1] < left[20 + after]
