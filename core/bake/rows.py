"""The database rows' own motion: the next row of each clip, each row's root
step in its own ground frame, and joint angular velocities toward the next row."""

import numpy as np

from ..maths import inertialization as inert
from ..maths import transforms as tf
from ..maths import same_everywhere


def row_deltas(db, root_pos, root_quat):
    """Root motion of every row to the next, in the row's own ground frame:
    (N, 3) local displacement and (N, 4) local rotation. The last row of a clip
    repeats the previous row's motion."""
    n = db.num_rows
    nxt = np.arange(1, n + 1)
    nxt[db.clip_offsets[1:] - 1] = db.clip_offsets[1:] - 1   # clip ends: no next row
    prev = np.arange(-1, n - 1)
    ends = nxt == np.arange(n)
    src = np.where(ends, np.maximum(prev, db.clip_offsets[db.clip_index]), np.arange(n))
    dst = np.where(ends, np.arange(n), nxt)
    src = np.where(src == dst, np.arange(n), src)
    inv = tf.quat_conjugate(root_quat[src])
    dpos = tf.quat_rotate(inv, root_pos[dst] - root_pos[src])
    dpos[:, 2] = 0.0
    drot = tf.quat_mul(inv, root_quat[dst])
    return dpos, drot


def next_rows(db):
    """Row after each row within its clip (itself at a clip end)."""
    n = db.num_rows
    nxt = np.arange(1, n + 1)
    ends = db.clip_offsets[1:] - 1
    nxt[ends] = ends
    return nxt


def yaw_of(q):
    """Yaw angle (about Z) of yaw quaternions, 0 facing -Y."""
    return 2.0 * same_everywhere.arctan2(q[..., 3], q[..., 0])


def angular_velocities_of(rot, nxt, fps, rows):
    """(n, J, 3) angular velocity of each of ``rows`` toward the next row of its
    clip (at a clip end, the previous row's)."""
    rows = np.asarray(rows, dtype=np.int64)
    at_end = nxt[rows] == rows
    rows = np.where(at_end, np.maximum(rows - 1, 0), rows)   # clip ends: the previous row's velocity
    return inert.angular_velocity(rot[rows], rot[nxt[rows]], 1.0 / fps)


TURN_PERCENTILE = 99.9   # the joints' own turn speed: this percentile of their speeds over every row


def joint_turn_speeds(rot, nxt, fps):
    """(J,) each joint's turn speed in the rows (rad/s): the :data:`TURN_PERCENTILE`
    of its angular speed toward the next row, over every row."""
    speeds = tf.row_norm(angular_velocities_of(rot, nxt, fps, np.arange(len(rot))))
    return np.percentile(speeds, TURN_PERCENTILE, axis=0)
