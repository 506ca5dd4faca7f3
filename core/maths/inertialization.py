"""Inertialization: hide a jump between two animations with a decaying offset.

On a jump, instead of cross-fading the old and new animations, remember how far the
pose now shown is from the new animation (an offset per joint, with its velocity)
and let that offset die out with a critically damped decay while the new animation
plays underneath (notes, section 7).

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
from .springs import decay_spring, halflife_to_damping
from .transforms import quat_conjugate, quat_from_rotvec, quat_mul, quat_normalize, quat_to_rotvec


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


# ----------------------------------------------------------------------------
# The inertializer


class Inertializer:
    """Offsets over ``num_joints`` joint rotations and one root (hips) position.

    State: ``rot_offset`` (J, 3) rotation vectors, ``ang_vel_offset`` (J, 3),
    ``pos_offset`` (3,), ``vel_offset`` (3,). All zero means no transition is
    being hidden. Typical use, once per frame::

        if jumping:  # from the frame now shown to frame b of the database
            inert.transition(cur_rot, cur_av, b_rot, b_av, cur_p, cur_v, b_p, b_v)
            # ... and play on from b
        anim_* = the next sample of what is playing (one dt later)
        out_rot, out_pos = inert.update(anim_rot, anim_av, anim_p, anim_v, None, dt)

    ``cur_*`` is the animation pose last passed to :meth:`update` (without offset:
    the inertializer adds its own live offset) and ``b_*`` the pose jumped to, both
    at the same instant.
    """

    def __init__(self, num_joints, halflife=0.1):
        num_joints = int(num_joints)
        if num_joints < 0:
            raise InertializationError("The number of joints cannot be negative.")
        halflife_to_damping(halflife)  # raises a clear error when not positive
        self.num_joints = num_joints
        self.halflife = float(halflife)
        self.reset()

    def reset(self):
        """Forget any offset: the output becomes the animation."""
        j = self.num_joints
        self.rot_offset = np.zeros((j, 3))
        self.ang_vel_offset = np.zeros((j, 3))
        self.pos_offset = np.zeros(3)
        self.vel_offset = np.zeros(3)
        self.out_ang_vel = np.zeros((j, 3))
        self.out_vel = np.zeros(3)

    # -- checks ---------------------------------------------------------------

    def _arr(self, a, name):
        a = np.asarray(a, dtype=np.float64)
        want = {"rot": (self.num_joints, 4), "ang_vel": (self.num_joints, 3)}.get(name, (3,))
        if a.shape != want:
            raise InertializationError(
                "The %s must be an array of shape %s (got %s)." % (_NAMES[name], want, a.shape))
        if not np.all(np.isfinite(a)):
            raise InertializationError("The %s contain values that are not numbers."
                                       % _NAMES[name])
        return a

    # -- the two operations ------------------------------------------------------

    def transition(self, src_rot, src_ang_vel, dst_rot, dst_ang_vel,
                   src_pos, src_vel, dst_pos, dst_vel):
        """Start hiding a jump from the source animation to the destination.

        ``src_*``: the animation that was playing, as last passed to :meth:`update`
        (without offset); ``dst_*``: the animation jumped to, at the same instant.
        The new offset is (source + the offset still decaying) - destination, so the
        output right after the jump is the output right before it: a second jump in
        the middle of a decay does not pop. Rotations (J, 4), angular velocities
        (J, 3), positions and velocities (3,).
        """
        src_rot = quat_normalize(self._arr(src_rot, "rot"))
        dst_rot = quat_normalize(self._arr(dst_rot, "rot"))
        src_ang_vel = self._arr(src_ang_vel, "ang_vel")
        dst_ang_vel = self._arr(dst_ang_vel, "ang_vel")
        src_pos, src_vel = self._arr(src_pos, "pos"), self._arr(src_vel, "vel")
        dst_pos, dst_vel = self._arr(dst_pos, "pos"), self._arr(dst_vel, "vel")

        shown = quat_mul(quat_from_rotvec(self.rot_offset), src_rot)
        # quat_to_rotvec picks w >= 0: the offset is at most half a turn.
        self.rot_offset = quat_to_rotvec(quat_mul(shown, quat_conjugate(dst_rot)))
        self.ang_vel_offset = (src_ang_vel + self.ang_vel_offset) - dst_ang_vel
        self.pos_offset = (src_pos + self.pos_offset) - dst_pos
        self.vel_offset = (src_vel + self.vel_offset) - dst_vel

    def update(self, anim_rot, anim_ang_vel, anim_pos, anim_vel, halflife, dt):
        """Decay the offsets by ``dt`` seconds and return ``(out_rot (J, 4), out_pos (3,))``,
        the animation with the remaining offset applied.

        ``halflife`` None uses the constructor's (0.1 s by default). ``dt`` 0 only
        applies the offset. The output velocities (animation + offset velocity) are
        left in ``out_ang_vel`` and ``out_vel`` for callers that need them.
        """
        h = self.halflife if halflife is None else halflife
        anim_ang_vel = self._arr(anim_ang_vel, "ang_vel")
        anim_vel = self._arr(anim_vel, "vel")
        self._arr(anim_rot, "rot")  # check before changing any state
        self._arr(anim_pos, "pos")
        self.rot_offset, self.ang_vel_offset = decay_spring(
            self.rot_offset, self.ang_vel_offset, h, dt)
        self.pos_offset, self.vel_offset = decay_spring(self.pos_offset, self.vel_offset, h, dt)
        self.out_ang_vel = anim_ang_vel + self.ang_vel_offset
        self.out_vel = anim_vel + self.vel_offset
        return self.apply(anim_rot, anim_pos)

    def apply(self, anim_rot, anim_pos):
        """The animation with the current offsets, without advancing time:
        ``(exp(rot_offset) * anim_rot, anim_pos + pos_offset)``."""
        anim_rot = quat_normalize(self._arr(anim_rot, "rot"))
        anim_pos = self._arr(anim_pos, "pos")
        out_rot = quat_mul(quat_from_rotvec(self.rot_offset), anim_rot)
        return out_rot, anim_pos + self.pos_offset


_NAMES = {
    "rot": "joint rotations",
    "ang_vel": "joint angular velocities",
    "pos": "root positions",
    "vel": "root velocities",
}
