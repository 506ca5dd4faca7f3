import numpy as np
import pytest

from core.maths.ik import apply_two_bone_ik, two_bone_ik, two_bone_ik_positions
from core.maths.transforms import quat_conjugate, quat_mul, quat_rotate

FORWARD = np.array([0.0, -1.0, 0.0])  # the character faces -Y


def random_legs(n, seed=0):
    rng = np.random.default_rng(seed)
    hip = rng.normal(size=(n, 3))
    knee = hip + rng.normal(size=(n, 3)) * 0.3
    ankle = knee + rng.normal(size=(n, 3)) * 0.3
    return rng, hip, knee, ankle


def lengths(hip, knee, ankle):
    return np.linalg.norm(knee - hip, axis=-1), np.linalg.norm(ankle - knee, axis=-1)


def test_reachable_targets_are_reached_and_lengths_kept():
    n = 2000
    rng, hip, knee, ankle = random_legs(n)
    a, b = lengths(hip, knee, ankle)
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    lo, hi = np.abs(a - b), 0.9999 * (a + b)
    target = hip + d * (lo + (hi - lo) * rng.uniform(0.0, 1.0, n))[:, None]
    hd, kd = two_bone_ik(hip, knee, ankle, target, FORWARD)
    assert hd.shape == kd.shape == (n, 4)
    np.testing.assert_allclose(np.linalg.norm(hd, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(kd, axis=1), 1.0, atol=1e-12)
    h2, k2, a2 = apply_two_bone_ik(hip, knee, ankle, hd, kd)
    np.testing.assert_array_equal(h2, hip)
    assert np.abs(a2 - target).max() < 1e-6
    a_new, b_new = lengths(h2, k2, a2)
    assert np.abs(a_new - a).max() < 1e-9 and np.abs(b_new - b).max() < 1e-9


def test_target_at_the_ankle_changes_nothing():
    _, hip, knee, ankle = random_legs(200, seed=1)
    hd, kd = two_bone_ik(hip, knee, ankle, ankle, FORWARD)
    ident = np.array([1.0, 0, 0, 0])
    np.testing.assert_allclose(np.abs(hd), np.broadcast_to(ident, hd.shape), atol=1e-7)
    np.testing.assert_allclose(np.abs(kd), np.broadcast_to(ident, kd.shape), atol=1e-7)


def test_the_knee_only_turns_about_its_hinge():
    # Relative to the thigh, the shin turns about the old bend-plane normal only:
    # hip^-1 * knee maps the old normal to itself, so the leg does not twist.
    n = 500
    rng, hip, knee, ankle = random_legs(n, seed=2)
    target = ankle + rng.normal(size=(n, 3)) * 0.1
    hd, kd = two_bone_ik(hip, knee, ankle, target, FORWARD)
    normal = np.cross(knee - hip, ankle - knee)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    relative = quat_mul(quat_conjugate(hd), kd)
    np.testing.assert_allclose(quat_rotate(relative, normal), normal, atol=1e-9)


def test_target_in_the_leg_plane_keeps_the_knee_in_it_and_forward():
    hip = np.array([0.0, 0.0, 1.0])
    knee = np.array([0.0, -0.1, 0.55])  # bent forward (-Y) in the plane x = 0
    ankle = np.array([0.0, 0.0, 0.1])
    def side(k, a):  # which side of the hip-to-ankle line the knee is on (about +X)
        line = (a - hip) / np.linalg.norm(a - hip)
        return np.cross(line, k - hip)[0]

    before = side(knee, ankle)
    for target in ([0.0, -0.2, 0.3], [0.0, 0.2, 0.2], [0.0, -0.05, 0.5], [0.0, -0.4, 0.9]):
        _, k2, a2 = two_bone_ik_positions(hip, knee, ankle, np.array(target), FORWARD)
        np.testing.assert_allclose(a2, target, atol=1e-12)
        assert abs(k2[0]) < 1e-12
        assert np.sign(side(k2, a2)) == np.sign(before) != 0.0


def test_straight_leg_bends_toward_the_pole():
    hip = np.array([0.0, 0.0, 1.0])
    knee = np.array([0.0, 0.0, 0.55])
    ankle = np.array([0.0, 0.0, 0.1])
    target = np.array([0.0, 0.0, 0.4])
    for pole in (FORWARD, -FORWARD, np.array([1.0, 0.0, 0.0])):
        _, k2, a2 = two_bone_ik_positions(hip, knee, ankle, target, pole)
        np.testing.assert_allclose(a2, target, atol=1e-12)
        bend = (k2 - hip) - np.dot(k2 - hip, [0, 0, -1.0]) * np.array([0, 0, -1.0])
        assert np.dot(bend, pole) > 0.1 and np.linalg.norm(np.cross(bend, pole)) < 1e-12


def test_unreachable_targets_leave_the_leg_straight_toward_them():
    _, hip, knee, ankle = random_legs(300, seed=4)
    a, b = lengths(hip, knee, ankle)
    rng = np.random.default_rng(5)
    d = rng.normal(size=(300, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    target = hip + d * (a + b)[:, None] * rng.uniform(1.0, 5.0, 300)[:, None]
    h2, k2, a2 = two_bone_ik_positions(hip, knee, ankle, target, FORWARD)
    assert np.all(np.isfinite(k2)) and np.all(np.isfinite(a2))
    reach = np.linalg.norm(a2 - hip, axis=1)
    np.testing.assert_allclose(reach, 0.9999 * (a + b), rtol=1e-12)
    np.testing.assert_allclose((a2 - hip) / reach[:, None], d, atol=1e-9)
    # Almost straight: the knee is off the line by the hip angle the law of cosines
    # gives for 0.9999 of full reach (a few degrees at most).
    t = 0.9999 * (a + b)
    cos_h = (a * a + t * t - b * b) / (2 * a * t)
    off_line = np.linalg.norm(np.cross(k2 - hip, d), axis=1) / a
    np.testing.assert_allclose(off_line, np.sqrt(1 - cos_h ** 2), atol=1e-9)
    assert off_line.max() < 0.1
    # Closer than the bones allow (|a - b|): folded as far as it goes, no NaN.
    near = hip + d * (0.5 * np.abs(a - b))[:, None]
    _, k3, a3 = two_bone_ik_positions(hip, knee, ankle, near, FORWARD)
    np.testing.assert_allclose(np.linalg.norm(a3 - hip, axis=1), np.abs(a - b), atol=1e-9)


@pytest.mark.parametrize("case", [
    "all zero", "zero thigh", "zero shin", "target on hip", "straight leg, pole along it",
    "zero pole", "straight leg pointing at an opposite target", "knee folded on the hip",
])
def test_degenerate_input_gives_finite_output(case):
    hip = np.array([0.0, 0.0, 1.0])
    knee = np.array([0.0, -0.05, 0.55])
    ankle = np.array([0.0, 0.0, 0.1])
    target = np.array([0.1, -0.1, 0.2])
    pole = FORWARD
    if case == "all zero":
        hip = knee = ankle = target = pole = np.zeros(3)
    elif case == "zero thigh":
        knee = hip.copy()
    elif case == "zero shin":
        ankle = knee.copy()
    elif case == "target on hip":
        target = hip.copy()
    elif case == "straight leg, pole along it":
        knee, pole = np.array([0.0, 0.0, 0.55]), np.array([0.0, 0.0, -1.0])
    elif case == "zero pole":
        knee, pole = np.array([0.0, 0.0, 0.55]), np.zeros(3)
    elif case == "straight leg pointing at an opposite target":
        knee, target = np.array([0.0, 0.0, 0.55]), np.array([0.0, 0.0, 1.5])
    elif case == "knee folded on the hip":
        ankle = hip.copy()
    hd, kd = two_bone_ik(hip, knee, ankle, target, pole)
    assert np.all(np.isfinite(hd)) and np.all(np.isfinite(kd))
    np.testing.assert_allclose([np.linalg.norm(hd), np.linalg.norm(kd)], 1.0, atol=1e-12)
    _, k2, a2 = apply_two_bone_ik(hip, knee, ankle, hd, kd)
    assert np.all(np.isfinite(k2)) and np.all(np.isfinite(a2))
    a, b = lengths(hip, knee, ankle)
    np.testing.assert_allclose(lengths(hip, k2, a2), (a, b), atol=1e-12)
    if case in ("target on hip", "straight leg pointing at an opposite target"):
        # Still reachable in these two: the ankle gets as close as it can.
        want = np.clip(np.linalg.norm(target - hip), abs(a - b), 0.9999 * (a + b))
        assert np.linalg.norm(a2 - hip) == pytest.approx(want, abs=1e-9)


def test_broadcasting_a_single_leg_and_many_targets():
    hip = np.array([0.0, 0.0, 1.0])
    knee = np.array([0.0, -0.05, 0.55])
    ankle = np.array([0.0, 0.0, 0.1])
    targets = ankle + np.linspace(-0.2, 0.2, 7)[:, None] * np.array([1.0, 0.5, 0.0]) \
        + np.array([0.0, 0.0, 0.15])
    hd, kd = two_bone_ik(hip, knee, ankle, targets, FORWARD)
    assert hd.shape == (7, 4)
    _, _, a2 = apply_two_bone_ik(hip, knee, ankle, hd, kd)
    np.testing.assert_allclose(a2, targets, atol=1e-12)


def test_each_leg_of_a_batch_is_solved_as_alone_bit_for_bit():
    # Degenerate legs (their fallback directions used) among ordinary ones: each
    # leg's deltas are the bits of that leg solved alone (fallbacks are made only
    # for a batch that needs them; each row's maths is its own).
    rng, hip, knee, ankle = random_legs(12, seed=4)
    target = ankle + rng.normal(size=(12, 3)) * 0.1
    pole = np.tile(FORWARD, (12, 1))
    knee[2] = hip[2]                                     # zero thigh
    ankle[5] = knee[5]                                   # zero shin
    target[7] = hip[7]                                   # target on the hip
    knee[9] = hip[9] + 0.5 * (ankle[9] - hip[9])         # straight leg ...
    pole[9] = ankle[9] - hip[9]                          # ... with the pole along it
    both = two_bone_ik(hip, knee, ankle, target, pole, pole_blend=0.15)
    for i in range(12):
        alone = two_bone_ik(hip[i:i + 1], knee[i:i + 1], ankle[i:i + 1], target[i:i + 1], pole[i:i + 1],
                            pole_blend=0.15)
        assert all(b[i:i + 1].tobytes() == a.tobytes() for a, b in zip(alone, both))
