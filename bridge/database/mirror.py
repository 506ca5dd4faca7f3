"""The mirror image of each listed take, for a database built with Mirror Takes.

The maths is core.skeleton.mirror's and mirror_maps'; this module reads the
armature (rest matrices, offsets, a stored T-pose, object matrix), hands frames
of the takes over for a reference pose when the rest pose is not symmetric, and
runs forward kinematics on the mirrored channels, so that
the mirrored rows' features, contacts and root motion come from exactly the
poses the bake will play.
"""

import numpy as np

from ...core.skeleton import humanoid_map
from ...core.skeleton import mirror as core_mirror, mirror_maps
from ...core.maths import transforms as tf
from ...core.errors import MotionMatchingError
from ...core.database.tags import Tag
from ..blender import armature_data


# Frames of the takes (spread evenly over them) the mirror may take its reference pose from.
REFERENCE_FRAMES = 256


def _reference_poses(obj, names, parents, rest, offsets, takes):
    """(label, (K, J, 4, 4) armature-space poses) the mirror may take a symmetric
    reference from: the armature's stored T-pose, then frames of the takes
    (``takes``: (locations, quaternions) float32 channels of each take)."""
    from ..retarget.tpose import stored_tpose

    out = []
    if len(obj.data.motion_matching.tpose):
        tpose = stored_tpose(obj, names)
        out.append(("stored T-pose", tf.compose(tpose.heads, tf.quat_to_matrix(tpose.rotations))[None]))
    each = max(1, REFERENCE_FRAMES // max(1, len(takes)))
    poses = []
    for loc, quat in takes:
        pick = np.unique(np.linspace(0, len(loc) - 1, min(len(loc), each)).astype(np.int64))
        basis = tf.compose(loc[pick].astype(np.float64), tf.quat_to_matrix(quat[pick].astype(np.float64)))
        poses.append(tf.pose_fk(parents, rest, basis, offsets))
    if poses:
        out.append(("a frame of the takes", np.concatenate(poses)))
    return out


def mirror_plan(obj, names, parents, bones, takes=()):
    """(each bone's counterpart (J,), the :class:`ChannelMap` of the mirror) on
    ``obj``'s skeleton (``names`` parents first); ``takes``: the channels of the
    takes, for a reference pose when the rest pose is not symmetric. Raises
    MotionMatchingError (one sentence) when left and right do not pair."""
    rest = armature_data.rest_matrices(obj.data, names)
    tails = np.array([obj.data.bones[n].tail_local for n in names])
    try:
        mapping = humanoid_map.auto_map(names, parents, rest[:, :3, 3], tails)
    except MotionMatchingError:
        mapping = None
    pairs = core_mirror.pair_bones(names, parents, mapping=mapping)
    for left, right in (("left_foot", "right_foot"), ("left_toe", "right_toe")):
        a, b = names.index(bones[left]), names.index(bones[right])
        if pairs[a] != b:
            raise core_mirror.MirrorError("The skeleton cannot be mirrored: the feature bones %s and %s are not "
                                          "each other's counterparts." % (bones[left], bones[right]))
    plane = core_mirror.root_plane(rest[names.index(bones["root"])])
    offsets = armature_data.rest_offsets(obj.data, names)
    parents = np.asarray(parents)
    references = _reference_poses(obj, names, parents, rest, offsets, takes)
    maps = mirror_maps.channel_map(names, parents, rest, pairs, plane, references, offsets)
    return pairs, maps


def _fk(obj, names, parents, wanted, fk, loc, quat):
    """World positions (F, K, 3) of the bones ``wanted`` and the world matrices
    (F, 4, 4) of the last of them, from every bone's channels (unit scale);
    ``fk``: indices of ``wanted`` and their ancestors, parents first."""
    return armature_data.fk_world(obj, names, parents, fk, wanted, loc.shape[0], lambda f0, f1: tf.compose(
        loc[f0:f1, fk].astype(np.float64), tf.quat_to_matrix(quat[f0:f1, fk].astype(np.float64))))


def mirrored_take(obj, names, parents, wanted, fk, channels, pairs, maps):
    """The mirror image of one sampled take: ((locations, quaternions) float32
    like the stored poses, world positions of ``wanted`` (F, K, 3), world
    matrices of the last of them, the root (F, 4, 4)). ``fk``: indices of
    ``wanted`` and their ancestors, parents first (takes.fk_bones);
    ``pairs``, ``maps``: from :func:`mirror_plan`."""
    loc, quat = core_mirror.mirror_channels(channels[0], channels[1], pairs, maps)
    loc32, quat32 = loc.astype(np.float32), quat.astype(np.float32)
    del loc, quat
    # Features from what the bake will play: the float32 channels.
    positions, root_world = _fk(obj, names, parents, wanted, fk, loc32, quat32)
    return (loc32, quat32), positions, root_world


def mirrored_tags(tags):
    """The tags of a mirrored take: the same frames, left and right swapped in the names."""
    return [Tag(core_mirror.mirror_tag_name(t.name), t.start, t.end) for t in tags]
