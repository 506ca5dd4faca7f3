"""core.maths.resample: values at fractional sample positions."""

import numpy as np

from core.maths import transforms as tf
from core.maths.resample import resample, sample_positions


def test_linear_between_neighbours_and_clamped_at_the_ends():
    values = np.array([[0.0, 0.0], [1.0, 10.0], [3.0, 30.0]])
    x = sample_positions([-1.0, 0.0, 0.25, 0.75, 1.0, 5.0], 0.5, len(values))
    np.testing.assert_allclose(x, [0.0, 0.0, 0.5, 1.5, 2.0, 2.0])
    np.testing.assert_allclose(resample(values, x), [[0, 0], [0, 0], [0.5, 5], [2, 20], [3, 30], [3, 30]])


def test_rotations_blend_along_the_short_arc_whatever_the_sign():
    z = np.array([0.0, 0.0, 1.0])
    q = tf.quat_from_axis_angle(z, np.array([0.0, 0.4]))
    flipped = q.copy()
    flipped[1] *= -1.0                       # the same rotation, the other sign
    half = resample(flipped, np.array([0.5]), rotations=True)[0]
    want = tf.quat_from_axis_angle(z, np.array([0.2]))[0]
    np.testing.assert_allclose(abs(np.dot(half, want)), 1.0, atol=1e-12)
    assert abs(np.linalg.norm(half) - 1.0) < 1e-12
    # Without the sign turn the two would nearly cancel: the blend would be far from a unit rotation.
    naive = 0.5 * (flipped[0] + flipped[1])
    assert np.linalg.norm(naive) < 0.3


def test_per_joint_channels_keep_their_shape():
    rng = np.random.default_rng(1)
    locs = rng.normal(size=(5, 4, 3))
    out = resample(locs, np.array([0.0, 1.5, 4.0]))
    assert out.shape == (3, 4, 3)
    np.testing.assert_allclose(out[1], 0.5 * (locs[1] + locs[2]))
    np.testing.assert_array_equal(out[2], locs[4])
