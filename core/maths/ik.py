"""Analytic two-bone IK (hip - knee - ankle), vectorised over legs.

The solution keeps the leg's bend plane: the knee first bends or straightens in the
plane it is in now (the plane through hip, knee and ankle), then the whole leg swings
about the hip by the smallest rotation that points it at the target. The knee's own
rotation therefore changes only about its hinge axis (the plane normal), and the leg
does not twist. When the leg is (nearly) straight that plane is undefined; the
``pole`` hint then says which side the knee bends toward.

The results are world-space deltas: a bone's new world rotation is
``delta * old world rotation`` (rotating about the bone's own head), so

    new_knee  = hip + hip_delta (knee - hip)
    new_ankle = new_knee + knee_delta (ankle - knee)

``knee_delta`` is the knee's whole change in world space (it already includes the
swing its parent got); use :func:`core.maths.transforms.pose_local_from_world` or
``parent_new^-1 * child_new`` to turn the new world rotations into local ones.
"""

import numpy as np

from . import same_everywhere

from .transforms import cross3, matrix_to_quat, quat_rotate, row_norm

_TINY = 1e-12


def _norm(v):
    return row_norm(v, keepdims=True)


def _dot(a, b):
    return np.add.reduce(a * b, axis=-1, keepdims=True)     # np.sum's sum, without its overhead


def _unit(v, fallback):
    """``v`` normalised, or ``fallback`` (already unit; or a function making it,
    called only when needed) where ``v`` is too short."""
    n = _norm(v)
    ok = n > _TINY
    if ok.all():
        return v / n        # np.where's result when every row is long enough
    return np.where(ok, v / np.where(ok, n, 1.0), fallback() if callable(fallback) else fallback)


def _any_perpendicular(u):
    """A unit vector perpendicular to each unit ``u``."""
    x = np.array([1.0, 0.0, 0.0])
    y = np.array([0.0, 1.0, 0.0])
    helper = np.where(np.abs(u[..., :1]) < 0.9, x, y)
    c = cross3(u, helper)
    return c / _norm(c)


def _perp_unit(v, u):
    """Unit component of ``v`` perpendicular to unit ``u`` (any perpendicular when
    ``v`` is along ``u``)."""
    return _unit(v - _dot(v, u) * u, lambda: _any_perpendicular(u))


def _rotate(v, axis, angle):
    """Rodrigues: rotate ``v`` about unit ``axis`` by ``angle`` (..., 1)."""
    c, s = np.cos(angle), np.sin(angle)
    return v * c + cross3(axis, v) * s + axis * _dot(axis, v) * (1.0 - c)


def _frame(e, n):
    """Rotation matrix whose columns are ``e``, the part of ``n`` perpendicular to
    ``e`` (normalised) and their cross product. ``e`` is unit."""
    n = _perp_unit(n, e)
    out = np.empty(e.shape + (3,))       # np.stack([e, n, e x n], axis=-1)
    out[..., 0], out[..., 1], out[..., 2] = e, n, cross3(e, n)
    return out


def two_bone_ik(hip, knee, ankle, target, pole, max_extension=0.9999,
                straight_tolerance=1e-3, pole_blend=0.0):
    """World-space rotation deltas ``(hip_delta, knee_delta)`` as quaternions
    (..., 4) that bring the ankle to ``target``.

    ``hip``, ``knee``, ``ankle``, ``target`` (..., 3) world positions and ``pole``
    (..., 3) a direction the knee should point when the leg is straight (for
    instance the character's forward); all broadcast together.

    - The hip-to-ankle distance is clamped between ``|thigh - shin|`` (fully folded)
      and ``max_extension * (thigh + shin)``, so a target out of reach leaves the
      leg (almost) straight, pointing at it, and the knee never locks out.
    - The bend plane is the current one while the knee is off the hip-ankle line by
      more than ``straight_tolerance * thigh``; otherwise the pole's side is used.
    - ``pole_blend`` > 0: while the knee is off the line by less than
      ``pole_blend * thigh``, the bend side is blended from the knee's own toward
      the pole's (all pole at a straight leg), so a nearly straight leg whose knee
      wavers from side to side does not bend a held foot's knee toward each waver
      in turn; a knee bent backwards counts only by its sideways part, so the IK
      never bends it backwards (nor flips it there and back).
    - Degenerate input (zero-length bones, target on the hip, straight leg, pole
      along the leg) gives finite rotations; no NaN is produced from finite input.
    """
    hip, knee, ankle, target, pole = [np.asarray(v, dtype=np.float64) for v in (hip, knee, ankle, target, pole)]
    if not hip.shape == knee.shape == ankle.shape == target.shape == pole.shape:
        hip, knee, ankle, target, pole = np.broadcast_arrays(hip, knee, ankle, target, pole)

    thigh = knee - hip
    shin = ankle - knee
    a = _norm(thigh)
    b = _norm(shin)

    # Current leg: direction to the ankle u0 and the side w0 the knee bends toward.
    u0 = _unit(ankle - hip, lambda: _unit(thigh, np.broadcast_to(np.array([0.0, 0.0, -1.0]), hip.shape)))
    knee_side = thigh - _dot(thigh, u0) * u0
    bent = _norm(knee_side) > straight_tolerance * np.maximum(a, _TINY)
    side_p = _perp_unit(pole, u0)
    w0 = np.where(bent, _unit(knee_side, u0), side_p)
    if pole_blend > 0:
        # A knee bent backwards (against the pole) counts only by its sideways
        # part: blending a backward side with the pole's would pass through no
        # side at all and flip the knee between the two from one step to the next.
        knee_side = knee_side - np.minimum(_dot(knee_side, side_p), 0.0) * side_p
        own = knee_side / (pole_blend * np.maximum(a, _TINY))
        own = own / np.maximum(_norm(own), 1.0)        # its share: up to 1 at pole_blend * thigh off the line
        w0 = _unit(own + (1.0 - _norm(own)) * side_p, side_p)
    w0 = _perp_unit(w0, u0)  # exact orthogonality, whichever branch
    n0 = cross3(u0, w0)  # hinge axis

    # Swing: the smallest rotation taking u0 to the target direction u.
    to_target = target - hip
    u = _unit(to_target, u0)
    axis = cross3(u0, u)
    angle = same_everywhere.arctan2(_norm(axis), _dot(u0, u))
    axis = _unit(axis, n0)  # u == -u0: turn within the bend plane
    w = _perp_unit(_rotate(w0, axis, angle), u)
    n = cross3(u, w)

    # Law of cosines for the angle at the hip between the thigh and hip-to-ankle.
    reach = max_extension * (a + b)
    t = np.clip(_norm(to_target), np.minimum(np.abs(a - b), reach), reach)
    cos_h = np.clip((a * a + t * t - b * b) / np.maximum(2.0 * a * t, _TINY), -1.0, 1.0)
    sin_h = np.sqrt(np.maximum(1.0 - cos_h * cos_h, 0.0))

    new_thigh_dir = cos_h * u + sin_h * w
    new_shin_dir = _unit(t * u - a * new_thigh_dir, u)
    old_thigh_dir = _unit(thigh, u0)
    old_shin_dir = _unit(shin, u0)

    # Each bone's delta maps its old (direction, hinge) frame to the new one; both
    # bones map n0 to n, so their relative rotation is about the hinge only. The
    # two bones are made together (each matrix's maths is its own: the same bits).
    new_dirs, old_dirs = np.stack([new_thigh_dir, new_shin_dir]), np.stack([old_thigh_dir, old_shin_dir])
    frames_new, frames_old = _frame(new_dirs, np.stack([n, n])), _frame(old_dirs, np.stack([n0, n0]))
    deltas = matrix_to_quat(frames_new @ np.swapaxes(frames_old, -1, -2))
    return deltas[0], deltas[1]


def apply_two_bone_ik(hip, knee, ankle, hip_delta, knee_delta):
    """New ``(hip, knee, ankle)`` positions after applying the deltas of
    :func:`two_bone_ik` (the hip does not move)."""
    hip = np.asarray(hip, dtype=np.float64)
    knee = np.asarray(knee, dtype=np.float64)
    ankle = np.asarray(ankle, dtype=np.float64)
    new_knee = hip + quat_rotate(hip_delta, knee - hip)
    new_ankle = new_knee + quat_rotate(knee_delta, ankle - knee)
    return np.broadcast_to(hip, new_knee.shape).copy(), new_knee, new_ankle


def two_bone_ik_positions(hip, knee, ankle, target, pole, **kwargs):
    """Solve and apply in one go: the new ``(hip, knee, ankle)`` positions."""
    hd, kd = two_bone_ik(hip, knee, ankle, target, pole, **kwargs)
    return apply_two_bone_ik(hip, knee, ankle, hd, kd)
