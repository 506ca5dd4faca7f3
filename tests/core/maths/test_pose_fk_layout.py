"""Forward kinematics with the frames last gives the bits of the products written
term by term over (F, 4, 4) arrays (transforms.mm4), the way it was computed before."""

import numpy as np

from core.bake import pipeline as bake
from core.bake.pose import forward_kinematics
from core.maths import transforms as tf

PARENTS = np.array([-1, 0, 1, 2, 3, 1, 5, 6, 1, 8, 9, 10, 9, -1, 13])


def _term_by_term_fk(parents, basis, offsets):
    """pose = parent_pose @ offset @ basis, by mm4 on (F, 4, 4) arrays."""
    out = np.empty_like(basis)
    for j, p in enumerate(parents):
        out[:, j] = tf.mm4(offsets[j], basis[:, j]) if p < 0 else tf.mm4(tf.mm4(out[:, p], offsets[j]), basis[:, j])
    return out


def _offsets(rng, J):
    off = np.zeros((J, 4, 4))
    off[:, :3, :3] = tf.quat_to_matrix(rng.normal(size=(J, 4)))
    off[:, :3, 3] = rng.normal(scale=0.3, size=(J, 3))
    off[:, 3, 3] = 1.0
    return off


def test_pose_fk_is_mm4_term_by_term_bit_for_bit():
    rng = np.random.default_rng(21)
    J = len(PARENTS)
    for F in (1, 7, 600):
        # Any matrices, not only rigid ones: every element of every product is compared.
        basis, offsets = rng.normal(size=(F, J, 4, 4)), rng.normal(size=(J, 4, 4))
        want = _term_by_term_fk(PARENTS, basis, offsets)
        got = tf.pose_fk(PARENTS, None, basis, offsets)
        assert got.shape == want.shape and np.ascontiguousarray(got).tobytes() == want.tobytes()
        part = tf.pose_fk(PARENTS, None, basis, offsets, joints=[4, 12])
        done = [0, 1, 2, 3, 4, 8, 9, 12]            # the two and their ancestors
        assert np.ascontiguousarray(part[:, done]).tobytes() == want[:, done].tobytes()
        assert np.isnan(part[:, [5, 6, 7, 10, 11, 13, 14]]).all()


def test_pose_fk_of_float32_offsets_and_rest_is_mm4_term_by_term():
    rng = np.random.default_rng(22)
    J = len(PARENTS)
    basis = rng.normal(size=(40, J, 4, 4))
    offsets = _offsets(rng, J).astype(np.float32)
    want = _term_by_term_fk(PARENTS, basis, offsets.astype(np.float64))
    assert np.ascontiguousarray(tf.pose_fk(PARENTS, None, basis, offsets)).tobytes() == want.tobytes()
    rest = _offsets(rng, J)
    want = _term_by_term_fk(PARENTS, basis, tf.rest_offsets_from_matrices(PARENTS, rest))
    assert np.ascontiguousarray(tf.pose_fk(PARENTS, rest, basis)).tobytes() == want.tobytes()


def test_forward_kinematics_is_compose_and_mm4_bit_for_bit():
    rng = np.random.default_rng(23)
    J = len(PARENTS)
    sk = bake.BakeSkeleton(names=["j%d" % j for j in range(J)], parents=PARENTS, offsets=_offsets(rng, J),
                           root=0, hips=1, legs=[(2, 3, 4, 4), (5, 6, 7, 7)])
    locs = rng.normal(scale=0.2, size=(300, J, 3))
    rots = rng.normal(size=(300, J, 4))          # not normalised: the matrices normalise them
    want = _term_by_term_fk(PARENTS, tf.compose(locs, tf.quat_to_matrix(rots)), sk.offsets)
    got = forward_kinematics(sk, locs, rots)
    assert np.ascontiguousarray(got).tobytes() == want.tobytes()
    part = forward_kinematics(sk, locs.astype(np.float32), rots.astype(np.float32), [7])
    want32 = _term_by_term_fk(PARENTS, tf.compose(locs.astype(np.float32),
                                                  tf.quat_to_matrix(rots.astype(np.float32))), sk.offsets)
    assert np.ascontiguousarray(part[:, [0, 1, 5, 6, 7]]).tobytes() == want32[:, [0, 1, 5, 6, 7]].tobytes()
