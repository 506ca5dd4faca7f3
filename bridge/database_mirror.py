"""The mirror image of each listed take, for a database built with Mirror Takes on.

The maths is core.skeleton.mirror's; this module reads the armature (rest matrices,
object matrix) and runs forward kinematics on the mirrored channels, so that
the mirrored rows' features, contacts and root motion come from exactly the
poses the bake will play.
"""

import numpy as np

from ..core.skeleton import humanoid_map
from ..core.skeleton import mirror as core_mirror
from ..core.maths import transforms as tf
from ..core.errors import MotionMatchingError
from ..core.database.tags import Tag
from . import armature_data


def bone_pairs(obj, names, parents, bones):
    """(J,) each bone's counterpart on ``obj``'s skeleton (``names`` parents first).
    Raises MotionMatchingError (one sentence) when left and right do not pair."""
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
    core_mirror.check_rest(names, rest, pairs, plane)
    return pairs


def _fk(obj, names, parents, wanted, fk, loc, quat):
    """World positions (F, K, 3) of the bones ``wanted`` and the world matrices
    (F, 4, 4) of the last of them, from every bone's channels (unit scale);
    ``fk``: indices of ``wanted`` and their ancestors, parents first."""
    return armature_data.fk_world(obj, names, parents, fk, wanted, loc.shape[0], lambda f0, f1: tf.compose(
        loc[f0:f1, fk].astype(np.float64), tf.quat_to_matrix(quat[f0:f1, fk].astype(np.float64))))


def mirrored_take(obj, names, parents, wanted, fk, channels, pairs, root):
    """The mirror image of one sampled take: ((locations, quaternions) float32
    like the stored poses, world positions of ``wanted`` (F, K, 3), world
    matrices of the last of them, the root (F, 4, 4)). ``fk``: indices of
    ``wanted`` and their ancestors, parents first (database_build.fk_bones)."""
    rest = armature_data.rest_matrices(obj.data, names)
    plane = core_mirror.root_plane(rest[names.index(root)])
    maps = core_mirror.channel_maps(rest, pairs, plane)
    loc, quat = core_mirror.mirror_channels(channels[0], channels[1], pairs, maps)
    loc32, quat32 = loc.astype(np.float32), quat.astype(np.float32)
    del loc, quat
    # Features from what the bake will play: the float32 channels.
    positions, root_world = _fk(obj, names, parents, wanted, fk, loc32, quat32)
    return (loc32, quat32), positions, root_world


def mirrored_tags(tags):
    """The tags of a mirrored take: the same frames, left and right swapped in the names."""
    return [Tag(core_mirror.mirror_tag_name(t.name), t.start, t.end) for t in tags]
