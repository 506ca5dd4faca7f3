"""Inertialization: hide a jump between two animations with a decaying offset.

This module holds the angular velocities the offsets are built from; the bake
(core.bake) decays the offsets in closed form.

On a jump, instead of cross-fading the old and new animations, remember how far the
pose now shown is from the new animation (an offset per joint, with its velocity)
and let that offset die out with a critically damped decay while the new animation
plays underneath.

Conventions:

- Rotation offsets are rotation vectors (axis * angle, shortest arc) applied on the
  LEFT: ``out = exp(offset) * anim``. Left multiplication acts in the frame the
  rotations are expressed in (world rotations: world axes; local rotations: the
  parent's axes), which is also the frame of :func:`angular_velocity`, so offsets and
  angular velocities can be added.
- The offset's angular velocity is treated as the time derivative of the rotation
  vector. That is exact while the offset turns about a fixed axis and a first-order
  approximation otherwise; the decay takes the offset along a fixed axis anyway, so
  the error only matters right at a jump and is invisible in practice.
- Root/hips positions and velocities are plain vectors, offset by subtraction.
"""

import numpy as np

from ..errors import MotionMatchingError
from .transforms import quat_conjugate, quat_mul, quat_normalize, quat_to_rotvec


class InertializationError(MotionMatchingError):
    """Inertialization was given poses it cannot use."""


# ----------------------------------------------------------------------------
# Angular velocity from quaternions


def angular_velocity(q_prev, q_next, dt):
    """Angular velocity (..., 3) turning ``q_prev`` into ``q_next`` over ``dt``:
    the shortest-arc rotation vector of ``q_next * q_prev^-1`` divided by ``dt``.

    Quaternions (..., 4), (w, x, y, z); q and -q give the same answer.
    """
    if not dt > 0.0:
        raise InertializationError(
            "The time step must be a positive number of seconds (got %s)." % (dt,))
    q0 = quat_normalize(q_prev)
    q1 = quat_normalize(q_next)
    return quat_to_rotvec(quat_mul(q1, quat_conjugate(q0))) / dt


def angular_velocities(quats, dt):
    """Angular velocities of a sequence of rotations (F, ..., 4) sampled every ``dt``:
    central differences inside, one-sided at the two ends. Returns (F, ..., 3)."""
    q = quat_normalize(quats)
    if not dt > 0.0:
        raise InertializationError(
            "The time step must be a positive number of seconds (got %s)." % (dt,))
    out = np.zeros(q.shape[:-1] + (3,))
    if len(q) < 2:
        return out
    out[1:-1] = angular_velocity(q[:-2], q[2:], 2.0 * dt)
    out[0] = angular_velocity(q[0], q[1], dt)
    out[-1] = angular_velocity(q[-2], q[-1], dt)
    return out
