"""Forward kinematics of some joints only: each computed joint is what the whole
pose gives, bit for bit; the joints not asked for (nor ancestors) are NaN."""

import numpy as np

from core.bake import pipeline as bake
from core.bake.pose import forward_kinematics, leg_joints
from core.maths import transforms as tf


def _skeleton():
    parents = np.array([-1, 0, 1, 2, 3, 1, 5, 6, 7, 1, 9, 10, 11, 12, 11, 11])
    rng = np.random.default_rng(11)
    offsets = np.zeros((len(parents), 4, 4))
    offsets[:, :3, :3] = tf.quat_to_matrix(tf.quat_normalize(rng.normal(size=(len(parents), 4))))
    offsets[:, :3, 3] = rng.normal(scale=0.3, size=(len(parents), 3))
    offsets[:, 3, 3] = 1.0
    names = ["j%d" % j for j in range(len(parents))]
    return bake.BakeSkeleton(names=names, parents=parents, offsets=offsets, root=0, hips=1,
                             legs=[(2, 3, 4, 4), (5, 6, 7, 8)])


def test_partial_forward_kinematics_is_the_whole_pose_bit_for_bit():
    sk = _skeleton()
    rng = np.random.default_rng(12)
    S, J = 240, len(sk.parents)
    locs = rng.normal(scale=0.1, size=(S, J, 3))
    rots = tf.quat_normalize(rng.normal(size=(S, J, 4)))
    whole = forward_kinematics(sk, locs, rots)
    part = forward_kinematics(sk, locs, rots, leg_joints(sk))
    done = [0, 1, 2, 3, 4, 5, 6, 7, 8]           # the legs and their ancestors
    assert part[:, done].tobytes() == whole[:, done].tobytes()
    assert np.isnan(part[:, 9:]).all()
    arm = forward_kinematics(sk, locs, rots, [13])
    assert arm[:, [0, 1, 9, 10, 11, 12, 13]].tobytes() == whole[:, [0, 1, 9, 10, 11, 12, 13]].tobytes()
    assert np.isnan(arm[:, [2, 14, 15]]).all()
