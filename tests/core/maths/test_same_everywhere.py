"""core.maths.same_everywhere: the C library's functions, broadcast like numpy's."""

import math

import numpy as np

from core.maths import same_everywhere


def test_arctan2_is_the_c_librarys_value_by_value_and_broadcasts():
    rng = np.random.default_rng(3)
    y, x = rng.uniform(-2, 2, (50, 3)), rng.uniform(-2, 2, 3)
    got = same_everywhere.arctan2(y, x)
    assert got.shape == (50, 3) and got.dtype == np.float64
    want = [[math.atan2(a, b) for a, b in zip(row, x)] for row in y.tolist()]
    assert np.array_equal(got, np.array(want))
    assert np.allclose(got, np.arctan2(y, x), rtol=1e-15, atol=0)
    assert same_everywhere.arctan2(1.0, -1.0) == math.atan2(1.0, -1.0)


def test_exp_is_the_c_librarys_value_and_overflows_to_inf_as_numpys():
    x = np.array([[-800.0, -1.5, 0.0], [0.25, 3.0, 800.0]])
    got = same_everywhere.exp(x)
    assert got.shape == (2, 3)
    assert got[0, 0] == 0.0 and got[1, 2] == np.inf
    assert np.array_equal(got[:, 1:2].ravel(), [math.exp(-1.5), math.exp(3.0)])
    assert np.allclose(got[:, :2], np.exp(x[:, :2]), rtol=1e-15, atol=0)
