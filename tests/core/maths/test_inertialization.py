import numpy as np
import pytest

from core.errors import MotionMatchingError
from core.maths.inertialization import (
    InertializationError,
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
