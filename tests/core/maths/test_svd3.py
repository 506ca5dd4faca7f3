"""The 3x3 SVD whose bits do not depend on numpy or the processor: it agrees with
LAPACK's to rounding, and its answers are the ones asked for."""

import numpy as np
import pytest

from core.maths import svd3


def _random(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 3, 3))


def test_the_decomposition_rebuilds_the_matrix():
    m = _random(300)
    u, s, v = svd3.svd(m)
    assert np.allclose(u @ (s[..., :, None] * np.swapaxes(v, -1, -2)), m, atol=1e-12)
    assert np.allclose(np.swapaxes(u, -1, -2) @ u, np.eye(3), atol=1e-12)
    assert np.allclose(np.swapaxes(v, -1, -2) @ v, np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(u), 1.0)
    assert np.allclose(np.abs(s), np.linalg.svd(m, compute_uv=False), atol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e-6])
def test_the_nearest_orthogonal_matrix_is_lapacks_polar_factor(scale):
    m = _random(300, 1)
    q = np.linalg.qr(m)[0] + scale * 1e-3 * m          # nearly orthogonal, rotations and reflections
    u, _s, vt = np.linalg.svd(q)
    assert np.allclose(svd3.nearest_orthogonal(q), u @ vt, atol=1e-12)
    assert np.allclose(svd3.nearest_orthogonal(m), np.linalg.svd(m)[0] @ np.linalg.svd(m)[2], atol=1e-9)


def test_the_nearest_reflection_of_a_nearly_rank_one_matrix():
    a, b = np.array([0.1, 0.4, -0.2]), np.array([0.3, -0.1, 0.2])
    reflect = np.diag([-1.0, 1.0, 1.0])
    h = np.outer(a, b) + 1e-8 * reflect
    got = svd3.nearest_with_determinant(h, -1.0)
    u, _s, vt = np.linalg.svd(h)
    fix = np.diag([1.0, 1.0, -np.linalg.det(u @ vt)])
    assert np.allclose(got, u @ fix @ vt, atol=1e-9)
    assert np.linalg.det(got) == pytest.approx(-1.0)


def test_eigenvectors_of_a_symmetric_matrix_largest_first():
    m = _random(200, 2)
    a = np.swapaxes(m, -1, -2) @ m
    w, v = svd3.symmetric_eigen(a)
    assert np.all(np.diff(w, axis=-1) <= 0.0)
    assert np.allclose(a @ v, v * w[..., None, :], atol=1e-10)
    assert np.allclose(w, np.linalg.eigvalsh(a)[..., ::-1], atol=1e-10)


def test_an_orthogonal_matrix_is_its_own_nearest():
    r = np.linalg.qr(_random(50, 3))[0]
    assert np.allclose(svd3.nearest_orthogonal(r), r, atol=1e-14)
    assert np.allclose(svd3.nearest_orthogonal(np.eye(3)), np.eye(3))
