"""The leg solver's batched solve: each leg's result is what solving it alone
gives, bit for bit (foot lock solves both legs' locks together)."""

import numpy as np

from core.bake.legs.solver import LegSolver
from core.bake.pose import forward_kinematics
from core.maths import transforms as tf
from leg_skeleton import leg_skeleton


def test_solve_many_is_each_solve_bit_for_bit():
    sk = leg_skeleton()
    rng = np.random.default_rng(15)
    S, J = 60, len(sk.parents)
    locs = np.zeros((S, J, 3))
    locs[:, 1] = rng.normal(scale=0.05, size=(S, 3))
    rots = tf.quat_normalize(np.array([1.0, 0.0, 0.0, 0.0]) + rng.normal(scale=0.2, size=(S, J, 4)))
    pose = forward_kinematics(sk, locs, rots)
    forward = np.tile([0.0, -1.0, 0.0], (S, 1))
    parts = []
    for side, (_, _, _, toe) in enumerate(sk.legs):
        idx = np.sort(rng.choice(S, size=7 + 5 * side, replace=False))
        wanted = pose[idx, toe, :3, 3] + rng.normal(scale=0.05, size=(len(idx), 3))
        parts.append((side, idx, wanted, rng.normal(scale=0.3, size=len(idx))))
    alone = rots.copy()
    for part in parts:
        LegSolver(sk, pose, forward).solve(alone, *part)
    together = rots.copy()
    LegSolver(sk, pose, forward).solve_many(together, parts)
    assert together.tobytes() == alone.tobytes()
    assert not np.array_equal(together, rots)        # the legs did move


def test_solve_many_of_parts_with_no_steps_leaves_the_pose():
    # A foot lock whose releases fall on no step of the stretch asks for none.
    sk = leg_skeleton()
    S, J = 10, len(sk.parents)
    rots = tf.quat_normalize(np.array([1.0, 0.0, 0.0, 0.0]) + np.random.default_rng(2).normal(scale=0.2,
                                                                                               size=(S, J, 4)))
    pose = forward_kinematics(sk, np.zeros((S, J, 3)), rots)
    empty = np.zeros(0, dtype=np.int64)
    parts = [(side, empty, np.zeros((0, 3)), np.zeros(0)) for side in range(len(sk.legs))]
    out = rots.copy()
    LegSolver(sk, pose, np.tile([0.0, -1.0, 0.0], (S, 1))).solve_many(out, parts)
    assert out.tobytes() == rots.tobytes()
