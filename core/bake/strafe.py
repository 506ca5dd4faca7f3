"""Strafing: the lower body turned toward the travel (orientation warping) while
the upper body keeps the controller's facing, the counter-turn spread over the spine."""

import numpy as np

from ..maths import springs
from ..maths import transforms as tf
from .legs import leg_release as lr
from .pose import forward_kinematics
from .root_motion import TURN_PERCENTILE
from ..maths import same_everywhere


WARP_SPEED = (0.2, 0.5)     # m/s: orientation warping fades in between these speeds


def strafe_warp(sim_yaw, sim_vel, settings, dt):
    """Per step, the angle (radians) the lower body turns from the wanted facing
    toward the direction of travel: the difference, limited to
    ``settings.strafe.strafe_warp`` and faded out at walking-in-place speeds. None when
    off."""
    if not settings.strafe.strafe_warp > 0:
        return None
    v = np.asarray(sim_vel, dtype=np.float64)[:, :2]
    speed = np.linalg.norm(v, axis=1)
    travel = same_everywhere.arctan2(v[:, 0], -v[:, 1])          # the yaw whose facing (sin, -cos) is along v
    diff = springs.wrap_angle(travel - sim_yaw)
    lo, hi = WARP_SPEED
    fade = np.clip((speed - lo) / (hi - lo), 0.0, 1.0)
    warp = np.clip(diff, -settings.strafe.strafe_warp, settings.strafe.strafe_warp) * fade
    if settings.strafe.strafe_warp_rate > 0:
        warp = lr.slew_limited(warp, settings.strafe.strafe_warp_rate * dt)
    return warp


SPINE_BONES = 4   # the strafe warp's counter-turn spreads over this many spine bones above the hips


def upper_body_chain(skeleton, length=SPINE_BONES):
    """The spine bones above the hips (the first child of the hips that is not a
    leg, then its first children), up to ``length`` of them."""
    uppers = {leg[0] for leg in skeleton.legs}
    chain, bone = [], skeleton.hips
    while len(chain) < length:
        kids = [j for j in range(len(skeleton.names)) if skeleton.parents[j] == bone and j not in uppers]
        if not kids:
            break
        bone = kids[0]
        chain.append(bone)
    return chain


def spine_shares(pose_rotations, nxt, chain):
    """Each bone of ``chain``'s share of the upper body's turn: in proportion to
    how fast the data itself turns it from a row to the next (the 99.9th
    percentile), so a stiff bone takes little and none turns much faster than
    the take ever does. Equal shares when the data holds no steps."""
    nxt = np.asarray(nxt)
    rows = np.flatnonzero(nxt != np.arange(len(nxt)))
    if not len(chain) or not len(rows):
        return np.full(len(chain), 1.0 / max(len(chain), 1))
    q = np.asarray(pose_rotations, dtype=np.float64)[:, chain]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    dots = np.abs(np.sum(q[rows] * q[nxt[rows]], axis=-1))
    fast = np.percentile(2.0 * same_everywhere.arccos(np.clip(dots, 0.0, 1.0)), TURN_PERCENTILE, axis=0)
    return fast / fast.sum() if fast.sum() > 0 else np.full(len(chain), 1.0 / len(chain))


def turn_upper_body(skeleton, locs, rots, angle, shares=None):
    """Turn the upper body about the vertical by ``angle`` (S,) radians, spread
    over the spine bones by ``shares`` (None: evenly), so it faces ``angle``
    away from the hips (in place)."""
    chain = upper_body_chain(skeleton)
    if not chain:
        return
    reach = np.cumsum(np.full(len(chain), 1.0 / len(chain)) if shares is None else shares)
    pose = forward_kinematics(skeleton, locs, rots)
    world = tf.matrix_to_quat(pose[:, :, :3, :3])
    offset_q = tf.matrix_to_quat(skeleton.offsets[:, :3, :3])
    z = np.array([0.0, 0.0, 1.0])
    parent_new = world[:, skeleton.hips]
    for k, bone in enumerate(chain):
        turned = tf.quat_mul(tf.quat_from_axis_angle(z, angle * reach[k]), world[:, bone])
        rots[:, bone] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent_new, offset_q[bone])), turned)
        parent_new = turned
