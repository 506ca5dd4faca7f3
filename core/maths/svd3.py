"""Singular value decompositions of 3x3 matrices whose bits do not depend on
numpy's version or the processor.

LAPACK's SVD and symmetric eigensolver (what ``np.linalg.svd`` and ``eigh``
call) differ in the last bits between the OpenBLAS builds numpy ships, and the
mirror's channel maps decide the keys, so they use these instead: cyclic
Jacobi rotations with a fixed number of sweeps (only +, -, *, / and square
roots, each exactly rounded). The SVD rotates the columns of ``M`` itself until
they are orthogonal (one-sided Jacobi), which keeps small singular directions
accurate; the third left vector is the cross product of the first two, so U is
a rotation. Vectorised over any leading axes.
"""

import numpy as np

SWEEPS = 12           # cyclic sweeps; 3x3 converges to rounding in about five
_PAIRS = ((0, 1), (0, 2), (1, 2))


def symmetric_eigen(a):
    """Eigenvalues (..., 3), largest first, and unit eigenvectors as the columns
    of (..., 3, 3) of symmetric ``a`` (..., 3, 3). Equal eigenvalues keep the
    order the rotations left them in (a stable sort)."""
    a = np.array(a, dtype=np.float64)
    lead = a.shape[:-2]
    a = a.reshape(-1, 3, 3).copy()
    v = np.tile(np.eye(3), (len(a), 1, 1))
    for _ in range(SWEEPS):
        for p, q in _PAIRS:
            c, s = _rotation(a[:, p, p], a[:, q, q], a[:, p, q])
            # a <- J^T a J, v <- v J with J the rotation in the (p, q) plane.
            ap, aq = a[:, :, p].copy(), a[:, :, q].copy()
            a[:, :, p], a[:, :, q] = c[:, None] * ap - s[:, None] * aq, s[:, None] * ap + c[:, None] * aq
            ap, aq = a[:, p, :].copy(), a[:, q, :].copy()
            a[:, p, :], a[:, q, :] = c[:, None] * ap - s[:, None] * aq, s[:, None] * ap + c[:, None] * aq
            vp, vq = v[:, :, p].copy(), v[:, :, q].copy()
            v[:, :, p], v[:, :, q] = c[:, None] * vp - s[:, None] * vq, s[:, None] * vp + c[:, None] * vq
    w = np.stack([a[:, 0, 0], a[:, 1, 1], a[:, 2, 2]], axis=-1)
    order = np.argsort(-w, axis=-1, kind="stable")
    w = np.take_along_axis(w, order, axis=-1)
    v = np.take_along_axis(v, order[:, None, :], axis=-1)
    return w.reshape(lead + (3,)), v.reshape(lead + (3, 3))


def _rotation(alpha, beta, gamma):
    """(c, s) of the Jacobi rotation that zeroes ``gamma`` between two columns
    (or rows) of squared lengths ``alpha``, ``beta``; (1, 0) where it is 0."""
    live = gamma != 0.0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        zeta = np.where(live, (beta - alpha) / np.where(live, 2.0 * gamma, 1.0), 0.0)
        sign = np.where(zeta >= 0.0, 1.0, -1.0)
        big = np.abs(zeta) > 1e150
        t = np.where(big, 0.5 / np.where(big, zeta, 1.0), sign / (np.abs(zeta) + np.sqrt(1.0 + zeta * zeta)))
    t = np.where(live, t, 0.0)
    c = 1.0 / np.sqrt(1.0 + t * t)
    return c, t * c


def dot3(a, b):
    """Dot products over the last axis (3) as three products and two sums, in that order."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def mm3(a, b):
    """3x3 matrix products (broadcast over leading axes) written out term by term:
    ``@`` hands them to BLAS, whose kernels round differently on other processors."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a[..., :, 0:1] * b[..., 0:1, :] + a[..., :, 1:2] * b[..., 1:2, :] + a[..., :, 2:3] * b[..., 2:3, :]


def mv3(a, v):
    """``a @ v`` for 3x3 matrices ``a`` and 3-vectors ``v`` (broadcast), term by term."""
    a, v = np.asarray(a, dtype=np.float64), np.asarray(v, dtype=np.float64)
    return a[..., :, 0] * v[..., None, 0] + a[..., :, 1] * v[..., None, 1] + a[..., :, 2] * v[..., None, 2]


def outer_sum(p, q):
    """``p.T @ q`` for (N, 3) rows, summed row after row."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return (p[:, :, None] * q[:, None, :]).sum(axis=0)


def _unit(x):
    n = np.sqrt(dot3(x, x))[..., None]
    return x / np.where(n > 0.0, n, 1.0)


def _cross(a, b):
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def svd(m):
    """(U, s, V) of ``m`` (..., 3, 3): ``m = U diag(s) V^T`` with U a rotation
    (det +1), V orthonormal and the singular values largest first in size, the
    last one signed so that the product holds; ``V`` is returned untransposed."""
    m = np.asarray(m, dtype=np.float64)
    lead = m.shape[:-2]
    w = m.reshape(-1, 3, 3).copy()
    v = np.tile(np.eye(3), (len(w), 1, 1))
    for _ in range(SWEEPS):
        for p, q in _PAIRS:
            wp, wq = w[:, :, p].copy(), w[:, :, q].copy()
            c, s = _rotation(dot3(wp, wp), dot3(wq, wq), dot3(wp, wq))
            w[:, :, p], w[:, :, q] = c[:, None] * wp - s[:, None] * wq, s[:, None] * wp + c[:, None] * wq
            vp, vq = v[:, :, p].copy(), v[:, :, q].copy()
            v[:, :, p], v[:, :, q] = c[:, None] * vp - s[:, None] * vq, s[:, None] * vp + c[:, None] * vq
    norms = np.sqrt(dot3(np.swapaxes(w, -1, -2), np.swapaxes(w, -1, -2)))
    order = np.argsort(-norms, axis=-1, kind="stable")
    w = np.take_along_axis(w, order[:, None, :], axis=-1)
    v = np.take_along_axis(v, order[:, None, :], axis=-1)
    u1 = _unit(w[:, :, 0])
    u2 = _unit(w[:, :, 1] - dot3(u1, w[:, :, 1])[:, None] * u1)
    # A rank-one m leaves u2 undefined: any unit vector across u1 will do.
    across = _unit(_cross(u1, np.where(np.abs(u1[:, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])))
    u2 = np.where(dot3(u2, u2)[:, None] > 0.5, u2, across)
    u = np.stack([u1, u2, _cross(u1, u2)], axis=-1)
    sv = dot3(np.swapaxes(u, -1, -2), np.swapaxes(w, -1, -2))
    return u.reshape(lead + (3, 3)), sv.reshape(lead + (3,)), v.reshape(lead + (3, 3))


def nearest_orthogonal(m):
    """The orthogonal matrix nearest each ``m`` (..., 3, 3) (a rotation or a
    reflection, whichever ``m``'s determinant says): its polar factor."""
    u, s, v = svd(m)
    d = np.where(s[..., 2] < 0.0, -1.0, 1.0)
    return mm3(u * np.stack([np.ones_like(d), np.ones_like(d), d], axis=-1)[..., None, :], np.swapaxes(v, -1, -2))


def nearest_with_determinant(m, det):
    """The orthogonal matrix of determinant ``det`` (+1 or -1) nearest ``m`` (3, 3)."""
    u, _s, v = svd(m)
    f = det * float(dot3(v[:, 0], _cross(v[:, 1], v[:, 2])))      # det U is +1
    return mm3(u * np.array([1.0, 1.0, f]), v.T)
