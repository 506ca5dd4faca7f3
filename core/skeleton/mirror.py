"""Mirror images of takes: left and right swapped, reflected across the character's sagittal plane.

A mirrored take is what a mirror beside the character would show: every bone
plays what its counterpart on the other side played (bones without a side play
their own motion), reflected across a plane through the character. The plane
is the virtual root's rest forward/up plane (the character's own sagittal
plane); reflecting the whole take across that one plane also reflects it across
the character's sagittal plane on every frame up to a turn about the vertical
and a shift, which the features, taken in the character's ground frame, do not
see.

Local channels. With armature-space rest matrices ``B`` and the reflection
``M`` (4x4, ``M M = I``), let ``K_b = B_p^-1 M B_b`` where ``p`` is the
counterpart of bone ``b``. If the pose of ``p`` is ``P_p``, the mirrored pose
of ``b`` is ``P'_b = M P_p K_b`` (the rest pose maps to itself), and with
Blender's rule ``pose = parent_pose @ offset @ basis`` (and counterparts whose
parents are counterparts) the local channels follow as
``basis'_b = K_b^-1 basis_p K_b``. ``K_b``'s linear part ``L_b`` is orthogonal
with determinant -1, so the rotation ``L_b^T R_p L_b`` is a proper one and the
location is ``L_b^T t_p``. ``K_b``'s translation is zero for a skeleton whose
rest pose is its own mirror image and is left out otherwise (the mirror then
swaps rotations relative to the rest pose and keeps each side's bone lengths).
Nothing assumes which way a bone's axes point.
"""

import re

import numpy as np

from . import side_names
from ..maths import transforms as tf
from ..errors import MotionMatchingError
from ..maths import svd3

__all__ = ["MirrorError", "counterpart_name", "pair_bones", "reflection", "root_plane", "channel_maps",
           "mirror_channels", "mirror_points", "feature_mirror", "mirror_tag_name", "rest_asymmetry"]

# How far (fraction of the skeleton's height) a bone's rest head may lie from its
# counterpart's mirror image before the skeleton is called not mirror-symmetric.
REST_TOLERANCE = 0.05


class MirrorError(MotionMatchingError):
    """A skeleton or feature set that cannot be mirrored."""


def _swap_case(word, target):
    if word.isupper():
        return target.upper()
    if word[:1].isupper():
        return target.capitalize()
    return target


def counterpart_name(name, names):
    """The bone of ``names`` on the other side of ``name`` (side names read by
    :mod:`.side_names`, the rule the humanoid mapping uses too); ``name`` itself
    when it names no side; None when it names a side whose counterpart is missing."""
    other = side_names.counterpart_candidate(name)
    if other is None:
        return name
    return other if other in (names if isinstance(names, (set, frozenset, dict)) else set(names)) else None


def pair_bones(names, parents, heads=None, mapping=None):
    """(J,) the index of each bone's counterpart (itself for bones without a side).

    ``mapping`` (a humanoid mapping ``{canonical: bone}``, optional) decides the
    limbs it names (``LeftFoot`` pairs with ``RightFoot`` whatever the names).
    Raises :class:`MirrorError` when a bone names a side with no bone on the
    other, or when counterparts hang from parents that are not counterparts.
    """
    names = [str(n) for n in names]
    index = {n: i for i, n in enumerate(names)}
    pairs = np.arange(len(names))
    fixed = {}
    if mapping:
        for joint, bone in mapping.items():
            if joint.startswith("Left") and bone in index:
                other = mapping.get("Right" + joint[4:])
                if not other or other not in index:
                    raise MirrorError("The skeleton cannot be mirrored: %s (%s) has no right-side counterpart."
                                      % (bone, joint))
                fixed[index[bone]], fixed[index[other]] = index[other], index[bone]
            elif joint.startswith("Right") and bone in index and not mapping.get("Left" + joint[5:]):
                raise MirrorError("The skeleton cannot be mirrored: %s (%s) has no left-side counterpart."
                                  % (bone, joint))
    known = set(names)
    for i, n in enumerate(names):
        if i in fixed:
            pairs[i] = fixed[i]
            continue
        other = counterpart_name(n, known)
        if other is None:
            raise MirrorError("The skeleton cannot be mirrored: bone %s names a side, but there is no bone "
                              "of the same name on the other side." % n)
        pairs[i] = index[other]
    bad = np.nonzero(pairs[pairs] != np.arange(len(names)))[0]
    if len(bad):
        b = int(bad[0])
        raise MirrorError("The skeleton cannot be mirrored: %s and %s do not pair with each other."
                          % (names[b], names[pairs[b]]))
    parents = np.asarray(parents)
    for b in range(len(names)):
        p, q = parents[b], parents[pairs[b]]
        if (p < 0) != (q < 0) or (p >= 0 and pairs[p] != q):
            raise MirrorError("The skeleton cannot be mirrored: %s and its counterpart %s hang from bones that "
                              "are not each other's counterparts." % (names[b], names[pairs[b]]))
    return pairs


def reflection(point, normal):
    """4x4 reflection across the plane through ``point`` with ``normal``."""
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    m = np.eye(4)
    m[:3, :3] -= 2.0 * np.outer(n, n)
    m[:3, 3] = 2.0 * np.dot(n, np.asarray(point, dtype=np.float64)) * n
    return m


def root_plane(root_rest):
    """The reflection across the virtual root's rest forward/up plane (its
    bone Y and Z axes; the normal is its X axis), in armature space."""
    root_rest = np.asarray(root_rest, dtype=np.float64)
    return reflection(root_rest[:3, 3], root_rest[:3, 0])


def rest_asymmetry(rest, pairs, mirror):
    """(J,) distance of each bone's rest head from its counterpart's mirror image."""
    heads = np.asarray(rest, dtype=np.float64)[:, :3, 3]
    images = heads[pairs] @ mirror[:3, :3].T + mirror[:3, 3]
    return np.linalg.norm(images - heads, axis=1)


def check_rest(names, rest, pairs, mirror, tolerance=REST_TOLERANCE):
    """Raise :class:`MirrorError` when the rest pose is far from its own mirror image."""
    heads = np.asarray(rest, dtype=np.float64)[:, :3, 3]
    height = max(float(np.ptp(heads, axis=0).max()), 1e-9)
    off = rest_asymmetry(rest, pairs, mirror)
    worst = int(np.argmax(off))
    if off[worst] > tolerance * height:
        side = "its counterpart %s" % names[pairs[worst]] if pairs[worst] != worst else "the middle plane"
        raise MirrorError("The skeleton cannot be mirrored: in the rest pose %s lies %.0f cm from the mirror image "
                          "of %s, so its left and right do not pair." % (names[worst], 100 * off[worst], side))


def _nearest_orthogonal(m):
    return svd3.nearest_orthogonal(m)


def channel_maps(rest, pairs, mirror):
    """(J, 3, 3) each bone's ``L_b``: the linear part of ``B_p^-1 M B_b`` made exactly orthogonal."""
    rest = np.asarray(rest, dtype=np.float64)
    k = np.linalg.inv(rest[pairs]) @ mirror[None] @ rest
    return _nearest_orthogonal(k[:, :3, :3])


def mirror_channels(locations, quaternions, pairs, maps, block=4096):
    """Local channels of the mirrored take: (F, J, 3) locations and (F, J, 4)
    quaternions (w x y z) in, the same shapes out (float64, quaternions sign-
    continuous along the frames). ``maps``: each bone's ``L_b`` (J, 3, 3) from
    :func:`channel_maps`, or a :class:`.mirror_maps.ChannelMap`. Works
    ``block`` frames at a time (memory)."""
    locations, quaternions = np.asarray(locations), np.asarray(quaternions)
    F, J = quaternions.shape[:2]
    loc_m, quat = np.empty((F, J, 3)), np.empty((F, J, 4))
    if hasattr(maps, "left"):
        left, right, shift = maps.left, maps.right, maps.shift
    else:
        left, right, shift = np.swapaxes(maps, -1, -2), maps, np.zeros((J, 3))
    for f0 in range(0, F, block):
        f1 = min(F, f0 + block)
        loc = locations[f0:f1, pairs].astype(np.float64)
        rot = tf.quat_to_matrix(quaternions[f0:f1, pairs].astype(np.float64))
        # t' = A t + d and R' = A R L, bone by bone (A = L^T for a symmetric rest).
        # Written out term by term (svd3.mm3): BLAS's kernels round differently per processor.
        loc_m[f0:f1] = svd3.mv3(left[None], loc) + shift
        quat[f0:f1] = tf.matrix_to_quat(svd3.mm3(svd3.mm3(left[None], rot), right[None]))
    # Keep each bone's first quaternion on the side of its counterpart's, then continuous.
    flip = np.einsum("jk,jk->j", quat[0], quaternions[0, pairs].astype(np.float64)) < 0.0
    quat[:, flip] *= -1.0
    return loc_m, tf.quat_unroll(quat, axis=0)


def mirror_points(points, mirror):
    """Reflect points (..., 3) with the 4x4 ``mirror``."""
    p = np.asarray(points, dtype=np.float64)
    return svd3.mv3(mirror[:3, :3], p) + mirror[:3, 3]


def feature_mirror(spec, counterpart):
    """(columns (D,), signs (D,)) such that ``raw[:, columns] * signs`` is the raw
    feature row of the mirrored frame: x (sideways in the character frame) turns
    over, and inside a bone group each bone takes its counterpart's columns.
    ``counterpart`` maps a bone name to its counterpart's. Raises
    :class:`MirrorError` when a group holds a bone but not its counterpart."""
    cols, signs, start = [], [], 0
    for g in spec.groups:
        if g.is_trajectory:
            n = len(g.times_s)
            cols.extend(start + np.arange(2 * n))
            signs.extend([-1.0, 1.0] * n)
        else:
            where = {b: k for k, b in enumerate(g.bones)}
            for b in g.bones:
                other = counterpart(b)
                if other not in where:
                    raise MirrorError("The feature group %s reads %s but not its counterpart %s, so its features "
                                      "cannot be mirrored; add %s to the group." % (g.name, b, other, other))
                cols.extend(start + 3 * where[other] + np.arange(3))
                signs.extend([-1.0, 1.0, 1.0])
        start += g.width
    return np.asarray(cols, dtype=np.int64), np.asarray(signs)


def mirror_tag_name(name):
    """A tag's name in the mirror: left and right swapped (turn_left -> turn_right)."""
    def swap(m):
        w = m.group(0)
        return _swap_case(w, "right" if w.lower() == "left" else "left")
    return re.sub(r"(?i)left|right", swap, name)
