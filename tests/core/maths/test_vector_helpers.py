"""cross3 and row_norm give numpy's own bits (np.cross, np.linalg.norm over the last axis)."""

import numpy as np

from core.maths.transforms import cross3, row_norm


def _arrays():
    rng = np.random.default_rng(7)
    big = rng.normal(scale=10.0, size=(50, 4, 4))
    yield rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    yield big[:, :3, 3], big[:, 1:, 0]             # strided views, as the pose's columns are
    yield rng.normal(size=(7, 5, 3)), rng.normal(size=3)     # broadcast
    yield np.array([[1e-300, 1e300, -0.0]]), np.array([[3.0, -0.0, 1e-20]])


def test_cross3_is_np_cross_bit_for_bit():
    for a, b in _arrays():
        want = np.cross(a, b)
        got = cross3(a, b)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_row_norm_is_linalg_norm_bit_for_bit():
    rng = np.random.default_rng(8)
    big = rng.normal(size=(30, 6, 4, 4))
    for v in (rng.normal(size=(500, 3)), rng.normal(size=(40, 6, 4)), big[:, :, :3, 3], rng.normal(size=(9, 2)),
              rng.normal(size=(11, 27))):
        for keep in (False, True):
            want = np.linalg.norm(v, axis=-1, keepdims=keep)
            assert row_norm(v, keepdims=keep).tobytes() == want.tobytes()


def test_matrix_to_quat_of_one_joint_is_its_slice_of_all_joints():
    """The leg solver converts only the joints it needs; each matrix's quaternion
    must not depend on what else is converted with it."""
    from core.maths.transforms import matrix_to_quat, quat_normalize, quat_to_matrix

    rng = np.random.default_rng(9)
    q = quat_normalize(rng.normal(size=(300, 23, 4)))
    q[:5, 0] = [1.0, 0.0, 0.0, 0.0]          # ties between the pivots
    pose = np.zeros((300, 23, 4, 4))
    pose[..., :3, :3] = quat_to_matrix(q)
    pose[..., 3, 3] = 1.0
    every = matrix_to_quat(pose[:, :, :3, :3])
    for j in (0, 3, 22):
        assert matrix_to_quat(pose[:, j, :3, :3]).tobytes() == every[:, j].tobytes()


def test_matrix_to_quat_of_each_matrix_is_that_matrix_alone_bit_for_bit():
    # A batch whose matrices pick different pivots (w, x, y, z largest) and one
    # that picks one pivot for all give each matrix the bits it gets alone.
    from core.maths.transforms import matrix_to_quat, quat_to_matrix

    rng = np.random.default_rng(9)
    q = rng.normal(size=(40, 4))
    for k in range(4):
        q[10 * k:10 * k + 10, k] += 4.0 * np.sign(q[10 * k:10 * k + 10, k])     # ten of each pivot
    for m in (quat_to_matrix(q), quat_to_matrix(q[:10])):
        both = matrix_to_quat(m)
        for i in range(len(m)):
            assert both[i].tobytes() == matrix_to_quat(m[i])[None].tobytes()
