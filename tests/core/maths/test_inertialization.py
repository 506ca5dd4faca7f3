import numpy as np
import pytest

from core.errors import MotionMatchingError
from core.maths.inertialization import (
    InertializationError,
    Inertializer,
    angular_velocities,
    angular_velocity,
)
from core.maths.transforms import (
    quat_conjugate,
    quat_from_axis_angle,
    quat_from_rotvec,
    quat_mul,
    quat_to_rotvec,
)

DT = 1.0 / 60.0
LN2 = np.log(2.0)


def angle_between(q0, q1):
    """Angle (...) of the rotation taking q0 to q1; q and -q alike."""
    return np.linalg.norm(quat_to_rotvec(quat_mul(q1, quat_conjugate(q0))), axis=-1)


def same_rotation(q0, q1, atol=1e-12):
    np.testing.assert_allclose(angle_between(q0, q1), 0.0, atol=atol)


class Clip:
    """Joints turning at constant world angular velocities, a root moving steadily."""

    def __init__(self, start_rotvecs, omegas, pos0, vel):
        self.q0 = quat_from_rotvec(np.asarray(start_rotvecs, dtype=float))
        self.w = np.asarray(omegas, dtype=float)
        self.p0 = np.asarray(pos0, dtype=float)
        self.v = np.asarray(vel, dtype=float)

    def __call__(self, t):
        rot = quat_mul(quat_from_rotvec(self.w * t), self.q0)
        return rot, self.w.copy(), self.p0 + self.v * t, self.v.copy()


# -- angular velocity ----------------------------------------------------------


def test_angular_velocity_of_a_steady_turn():
    rng = np.random.default_rng(3)
    q0 = quat_from_rotvec(rng.normal(size=(4, 3)))
    w = rng.normal(size=(4, 3))
    q1 = quat_mul(quat_from_rotvec(w * DT), q0)
    np.testing.assert_allclose(angular_velocity(q0, q1, DT), w, atol=1e-10)
    np.testing.assert_allclose(angular_velocity(q0, -q1, DT), w, atol=1e-10)  # sign-blind
    # Not the body-frame rate: the same turn applied on the right gives another vector.
    q1_body = quat_mul(q0, quat_from_rotvec(w * DT))
    assert np.abs(angular_velocity(q0, q1_body, DT) - w).max() > 1e-3

    seq = quat_mul(quat_from_rotvec(w[None] * (np.arange(6) * DT)[:, None, None]), q0[None])
    seq[3] *= -1.0  # a sign flip in the data must not matter
    np.testing.assert_allclose(angular_velocities(seq, DT), np.broadcast_to(w, (6, 4, 3)),
                               atol=1e-9)
    with pytest.raises(InertializationError):
        angular_velocity(q0, q1, 0.0)


# -- transitions ---------------------------------------------------------------------


def test_output_equals_the_source_at_the_transition_including_a_live_offset():
    a = Clip([[0.3, 0, 0], [0, 1.0, 0]], [[0, 0, 1.0], [1.0, 0, 0]], [0, 0, 1], [1, 0, 0])
    b = Clip([[0, 2.0, 0], [0, 0, -2.5]], [[0, 2.0, 0], [0, 0, 0.5]], [0.5, 0, 1], [0, 1, 0])
    c = Clip([[1.5, 0, 0], [0, 0, 3.0]], [[0, -1, 0], [1, 1, 0]], [-1, 0, 1], [0, 0, 0])
    inert = Inertializer(2)
    inert.transition(*a(0.2)[:2], *b(0.0)[:2], *a(0.2)[2:], *b(0.0)[2:])
    rot, pos = inert.apply(b(0.0)[0], b(0.0)[2])
    same_rotation(rot, a(0.2)[0])
    np.testing.assert_allclose(pos, a(0.2)[2], atol=1e-15)
    np.testing.assert_allclose(inert.rot_offset, quat_to_rotvec(
        quat_mul(a(0.2)[0], quat_conjugate(b(0.0)[0]))), atol=1e-12)

    for _ in range(3):  # part of the way through the decay
        shown = inert.update(*b(0.05), None, DT)
    shown_rot, shown_pos = inert.apply(b(0.05)[0], b(0.05)[2])
    assert angle_between(shown_rot, b(0.05)[0]).max() > 0.5  # a big offset is still live
    inert.transition(*b(0.05)[:2], *c(0.0)[:2], *b(0.05)[2:], *c(0.0)[2:])
    rot, pos = inert.update(*c(0.0), None, 0.0)  # dt 0: only apply
    same_rotation(rot, shown_rot)
    np.testing.assert_allclose(pos, shown_pos, atol=1e-14)
    np.testing.assert_allclose(shown[1], shown_pos)


def test_rotation_offsets_take_the_short_way():
    inert = Inertializer(1)
    src = quat_from_axis_angle([0, 0, 1], np.radians(350.0))[None]
    dst = np.array([[1.0, 0, 0, 0]])
    z = np.zeros((1, 3))
    inert.transition(src, z, dst, z, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(inert.rot_offset, [[0, 0, -np.radians(10.0)]], atol=1e-12)


def test_decay_after_five_halflives_matches_the_closed_form():
    h = 0.1
    inert = Inertializer(3, halflife=h)
    rng = np.random.default_rng(7)
    src = quat_from_rotvec(rng.normal(size=(3, 3)))
    dst = quat_from_rotvec(rng.normal(size=(3, 3)))
    w = rng.normal(size=(3, 3))  # same angular velocity on both: no velocity offset
    inert.transition(src, w, dst, w, [0, 0, 1.0], [1, 0, 0], [0.3, 0, 1.0], [1, 0, 0])
    x0 = np.linalg.norm(inert.rot_offset, axis=1)
    assert x0.min() > 0.1

    for k in range(30):  # 30 frames at 60 fps = 0.5 s = 5 half-lives
        anim = quat_mul(quat_from_rotvec(w * (k + 1) * DT), dst)
        rot, pos = inert.update(anim, w, np.array([0.3 + (k + 1) * DT, 0, 1.0]), [1, 0, 0],
                                None, DT)
    # From a still offset: x(t) = x0 (1 + y t) exp(-y t), y t = 10 ln 2 at five half-lives.
    remaining = (1.0 + 10.0 * LN2) / 1024.0
    assert remaining < 1.0 / 20.0 and remaining == pytest.approx(0.00774, abs=1e-5)
    np.testing.assert_allclose(angle_between(anim, rot), x0 * remaining, rtol=1e-9)
    np.testing.assert_allclose(pos - [0.3 + 0.5, 0, 1.0], [-0.3 * remaining, 0, 0],
                               atol=1e-12)


def test_decay_with_a_velocity_offset_matches_the_closed_form():
    h, t = 0.1, 0.25
    inert = Inertializer(1, halflife=h)
    ident = np.array([[1.0, 0, 0, 0]])
    z3 = np.zeros(3)
    inert.transition(ident, [[0, 0, 2.0]], ident, [[0, 0, 0.0]],
                     [0.2, 0, 0], z3, z3, [0, -1.0, 0])
    steps = int(round(t / DT))
    for _ in range(steps):
        inert.update(ident, np.zeros((1, 3)), z3, z3, None, DT)
    y = 2 * LN2 / h
    e = np.exp(-y * t)
    np.testing.assert_allclose(inert.rot_offset, [[0, 0, e * (2.0 * t)]], atol=1e-12)
    np.testing.assert_allclose(inert.pos_offset, [e * (0.2 + 0.2 * y * t), e * t, 0],
                               atol=1e-12)
    np.testing.assert_allclose(inert.vel_offset[:2], [e * (-0.2 * y * y * t),
                                                      e * (1.0 - y * t)], atol=1e-12)


def _run(skip_live_offset=False):
    """Play A, jump to B at frame 20, jump to C at frame 23 (mid-decay). Returns the
    output per frame."""
    a = Clip([[0, 0, 0]] * 3, [[0, 0, 1.0], [0.5, 0, 0], [0, 1, 0]], [0, 0, 1], [1, 0, 0])
    b = Clip([[2.0, 0, 0], [0, 0, 2.5], [0, -2, 0]], [[0, 2.0, 0], [0, 0, 1], [1, 0, 0]],
             [0.5, 0, 1], [0, 1, 0])
    c = Clip([[0, 0, -1.5], [1.5, 1.5, 0], [0, 0, 2.0]], [[-1.5, 0, 0], [0, 1, 1], [0, 0, -1]],
             [-0.5, 0.5, 1], [0, 0, 0.2])
    inert = Inertializer(3)
    clip, t = a, 0.0
    rots, poss = [], []
    for frame in range(40):
        if frame in (20, 23):
            new = b if frame == 20 else c
            if skip_live_offset:
                inert.reset()  # wrong on purpose: forgets the offset still decaying
            inert.transition(*clip(t)[:2], *new(0.0)[:2], *clip(t)[2:], *new(0.0)[2:])
            clip, t = new, 0.0
        t += DT
        rot, pos = inert.update(*clip(t), None, DT)
        rots.append(rot)
        poss.append(pos)
    return np.array(rots), np.array(poss)


def test_second_transition_mid_decay_does_not_pop():
    rots, poss = _run()
    rot_steps = angle_between(rots[:-1], rots[1:]).max(axis=1)  # step into frame i + 1
    pos_steps = np.linalg.norm(np.diff(poss, axis=0), axis=1)
    for jump in (20, 23):
        # The step into the first frame after a jump is an ordinary step: no larger
        # than the larger of the steps just before and just after it (the decay of
        # a large offset speeds up over a few frames, so steps do grow).
        step = rot_steps[jump - 1]
        assert step <= 1.5 * max(rot_steps[jump - 2], rot_steps[jump])
        assert pos_steps[jump - 1] <= 1.5 * max(pos_steps[jump - 2], pos_steps[jump])
        assert step < 0.25  # while the offsets recorded are radians big
    assert rot_steps[18] == pytest.approx(DT, rel=1e-6)  # clip A: 1 rad/s at most

    # The test can fail: forgetting the live offset at the second jump pops.
    bad_rots, _ = _run(skip_live_offset=True)
    bad_steps = angle_between(bad_rots[:-1], bad_rots[1:]).max(axis=1)
    np.testing.assert_allclose(bad_steps[:22], rot_steps[:22])
    assert bad_steps[22] > 10 * rot_steps[22]


def test_bad_input_is_refused_with_a_sentence():
    inert = Inertializer(2)
    z = np.zeros((2, 3))
    q = np.tile([1.0, 0, 0, 0], (2, 1))
    with pytest.raises(InertializationError) as info:
        inert.transition(q[:1], z, q, z, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    assert "joint rotations" in str(info.value)
    with pytest.raises(InertializationError):
        inert.update(q, z, np.zeros(2), np.zeros(3), None, DT)
    with pytest.raises(MotionMatchingError):
        Inertializer(2, halflife=0.0)
    assert np.all(inert.rot_offset == 0.0)  # refused calls changed nothing
