"""The pose-bone keys of a converted BVH take: which curves it is keyed on and
their values for an armature's bone rest rotations."""

import numpy as np

from ..maths import transforms as tf


def keyed_channel_list(motion):
    """The curves a take is keyed on, in order: (joint, "location" or
    "rotation_quaternion", component), location first for a joint with both."""
    channels = []
    for j in range(len(motion.names)):
        if motion.has_loc[j]:
            channels += [(j, "location", k) for k in range(3)]
        if motion.has_rot[j]:
            channels += [(j, "rotation_quaternion", k) for k in range(4)]
    return channels


def keyed_channels(motion, bone_rest):
    """The pose-bone keys of an armature whose bones have rest rotations
    ``bone_rest`` (J, 3, 3) in Blender's frame, ready to write: a list of
    (joint, "location" or "rotation_quaternion", component) and a (curves, F)
    float32 array, one row per curve (Blender keeps key values in float32).

    A bone's rest is the joint frame turned by B, so its local rotation is
    B^T (C R C^T) B and its location B^T C t (t: translation minus offset);
    quaternions are made sign-continuous over the frames. Computed in float64 a
    block of joints at a time, so that only the float32 result is full size.
    """
    c = motion.conversion
    b = np.asarray(bone_rest, dtype=np.float64)[:, :3, :3]
    bt = np.swapaxes(b, -1, -2)
    q_c = tf.matrix_to_quat(c)
    q_b = tf.matrix_to_quat(b)
    left = tf.quat_mul(tf.quat_conjugate(q_b), q_c)      # B^T C
    right = tf.quat_mul(tf.quat_conjugate(q_c), q_b)     # C^T B
    loc_basis = bt @ c
    F, J = motion.rotations.shape[:2]
    channels = keyed_channel_list(motion)
    out = np.empty((len(channels), F), dtype=np.float32)
    row_of = {}
    for i, (j, kind, k) in enumerate(channels):
        if k == 0:
            row_of[(j, kind)] = i
    step = max(1, (1 << 16) // max(F, 1))
    for j0 in range(0, J, step):
        js = np.arange(j0, min(J, j0 + step))
        rot = js[motion.has_rot[js]]
        if rot.size:
            q = tf.quat_mul(tf.quat_mul(left[None, rot], motion.rotations[:, rot]), right[None, rot])
            q = tf.quat_unroll(q, axis=0)
            for n, j in enumerate(rot):
                i = row_of[(j, "rotation_quaternion")]
                out[i:i + 4] = q[:, n].T
        loc = js[motion.has_loc[js]]
        if loc.size:
            t = np.einsum("jik,fjk->fji", loc_basis[loc], motion.translations[:, loc])
            for n, j in enumerate(loc):
                i = row_of[(j, "location")]
                out[i:i + 3] = t[:, n].T
    return channels, out
