"""Channel maps of the mirror for a skeleton whose rest pose is any pose.

The mirrored pose of bone ``b`` (counterpart ``p``, parent ``q``, ``q' = p``'s
parent, the counterpart of ``q``) is ``W'_b = M W_p L_b`` in armature space:
the reflection ``M`` of the counterpart's pose, turned in the bone's own frame
by a constant reflection ``L_b``. With Blender's
``pose = parent_pose @ offset @ basis`` (offset ``O = [R_O, t_O]``, the bone's
rest relative to its parent's) the local channels of the mirror follow for any
choice of ``L`` as

    R'_b = A_b R_p L_b,   t'_b = A_b t_p + d_b,
    A_b = R_Ob^T L_q^T R_Op,   d_b = R_Ob^T (L_q^T t_Op - t_Ob)

(for a root, ``q`` is the armature: ``A_b = R_Bb^T M R_Bp``,
``d_b = R_Bb^T (M h_p - h_b)`` with rest matrices ``B`` and heads ``h``), and
every joint of the mirror is exactly the reflection of its counterpart's.
``L`` only decides how each bone is turned about itself, and ``d`` vanishes
when ``L_q`` carries each child's rest offset onto its counterpart's.

``L`` comes from a symmetric reference pose ``S`` (armature-space matrices)
with its own mirror plane ``M_S``: ``L_b = S_p^-1 M_S S_b``. The rest pose is
the reference when it is its own mirror image (a T-pose: then ``A = L^T`` and
``d = 0``, the classic ``K^-1 basis K``). Otherwise the reference is a pose of
the character (a stored T-pose, or the most symmetric sampled frame of the
takes), its plane fitted to its joints, and each ``L_q`` is then made to carry
its children's offsets onto their counterparts' exactly (the reference only
decides the turn about a bone with one child). Roots keep the take's plane, so
the virtual root's facing mirrors. What is left of ``d`` is the skeleton's own
lopsidedness: more than :data:`mirror.REST_TOLERANCE` of its height is refused;
less than ``SHIFT_KEPT`` of it is dropped (each side keeps its bone lengths
and no location appears on bones that had none).
"""

from dataclasses import dataclass

import numpy as np

from ..maths import svd3, transforms as tf
from .mirror import REST_TOLERANCE, MirrorError, rest_asymmetry, reflection

# A location shift d_b under this fraction of the skeleton's height is dropped.
SHIFT_KEPT = 1e-4


@dataclass
class ChannelMap:
    """``R' = left @ R_p @ right``, ``t' = left @ t_p + shift``, bone by bone
    ((J, 3, 3), (J, 3, 3), (J, 3)); ``reference`` says which pose gave ``right``."""

    left: np.ndarray
    right: np.ndarray
    shift: np.ndarray
    reference: str = "rest pose"


def nearest_orthogonal(m):
    return svd3.nearest_orthogonal(m)


def body_plane(heads, pairs):
    """The 4x4 reflection across the plane that best swaps each joint of ``heads``
    (J, 3) with its counterpart's (``pairs``: indices into ``heads``): its normal
    the main direction of the left-right differences, through the middle of the pairs."""
    heads = np.asarray(heads, dtype=np.float64)
    diff = heads - heads[pairs]
    if not np.any(np.linalg.norm(diff, axis=1) > 0):
        raise MirrorError("The skeleton cannot be mirrored: no bone has a counterpart on the other side.")
    _w, vecs = svd3.symmetric_eigen(svd3.outer_sum(diff, diff))
    return reflection(0.5 * (heads + heads[pairs]).mean(axis=0), vecs[:, 0])


def most_symmetric(poses, pairs, parents):
    """(index, its mirror plane, worst distance) of the pose (K, J, 4, 4) whose
    joints (roots left out) lie nearest their counterparts' mirror images (ties:
    the first); poses with unknown (NaN) joints are passed over."""
    best = None
    body = np.nonzero(np.asarray(parents) >= 0)[0]
    sub = np.searchsorted(body, pairs[body])
    for k, pose in enumerate(poses):
        if not np.all(np.isfinite(pose[body])):
            continue
        plane = body_plane(pose[body, :3, 3], sub)
        worst = float(rest_asymmetry(pose[body], sub, plane).max())
        if best is None or worst < best[2]:
            best = (k, plane, worst)
    return best


def _refined(reflect, offsets_q, offsets_p, weight):
    """The reflection nearest ``reflect`` that carries the offsets ``offsets_q``
    (n, 3) onto ``offsets_p`` (least squares; det -1)."""
    h = svd3.outer_sum(offsets_p, offsets_q) + weight * reflect
    return svd3.nearest_with_determinant(h, -1.0)


def _reflections(parents, pairs, rest, offsets, mirror, reference, plane, height):
    """Each bone's ``L_b`` (J, 3, 3) from the reference pose, fitted to the offsets."""
    rot = reference[:, :3, :3]
    right = nearest_orthogonal(svd3.mm3(svd3.mm3(np.swapaxes(rot[pairs], -1, -2), plane[None, :3, :3]), rot))
    roots = parents < 0
    right[roots] = nearest_orthogonal(svd3.mm3(svd3.mm3(np.swapaxes(rest[pairs][roots, :3, :3], -1, -2),
                                                         mirror[:3, :3]), rest[roots, :3, :3]))
    weight = 1e-8 * height * height   # the offsets decide; the reference only breaks ties (a turn about one child)
    for q in np.nonzero(~roots)[0]:
        kids = np.nonzero(parents == q)[0]
        if len(kids):
            right[q] = _refined(right[q], offsets[kids, :3, 3], offsets[pairs[kids], :3, 3], weight)
    return right


def _lopsided(names, parents, pairs, shift_len, height):
    worst = int(np.argmax(shift_len))
    if shift_len[worst] > REST_TOLERANCE * height:
        q = parents[worst]
        where = "its place relative to %s" % names[q] if q >= 0 else "the mirror plane"
        raise MirrorError("The skeleton cannot be mirrored: %s lies %.0f cm from the mirror image of its counterpart "
                          "%s (%s), so its left and right do not pair." % (
                              names[worst], 100 * shift_len[worst], names[pairs[worst]], where))


def channel_map(names, parents, rest, pairs, mirror, references=(), offsets=None):
    """The :class:`ChannelMap` of the mirror across ``mirror`` (4x4, armature space).

    ``rest`` (J, 4, 4) rest matrices; ``references``: (label, (K, J, 4, 4)
    armature-space poses) to take the reference from when the rest pose is not
    its own mirror image: the most symmetric pose of the first group that has
    one within the tolerance, else the most symmetric of all; ``offsets``: each bone's
    rest relative to its parent as Blender builds it (default: from ``rest``).
    Raises :class:`MirrorError` when the skeleton's sides do not pair in shape."""
    parents, pairs = np.asarray(parents), np.asarray(pairs)
    rest = np.asarray(rest, dtype=np.float64)
    if offsets is None:
        offsets = tf.rest_offsets_from_matrices(parents, rest)
    heads = rest[:, :3, 3]
    height = max(float(np.ptp(heads, axis=0).max()), 1e-9)
    reference, plane, label = rest, mirror, "rest pose"
    if rest_asymmetry(rest, pairs, mirror).max() > REST_TOLERANCE * height:
        best = None
        for words, poses in references:   # the first symmetric enough, else the most symmetric
            found = most_symmetric(np.asarray(poses, dtype=np.float64), pairs, parents)
            if found and (best is None or found[2] < best[0][2]):
                best = (found, words, poses)
            if best and best[0][2] <= REST_TOLERANCE * _height(np.asarray(best[2])[best[0][0]], parents):
                break
        if best is not None:
            (k, plane, _worst), label, poses = best
            reference = np.asarray(poses, dtype=np.float64)[k]
            height = _height(reference, parents)
    right = _reflections(parents, pairs, rest, offsets, mirror, reference, plane, height) \
        if reference is not rest else \
        nearest_orthogonal(svd3.mm3(svd3.mm3(np.swapaxes(rest[pairs, :3, :3], -1, -2), mirror[None, :3, :3]),
                                    rest[:, :3, :3]))
    left, shift = _left_and_shift(parents, pairs, rest, offsets, mirror, right)
    shift_len = np.linalg.norm(shift, axis=1)
    _lopsided(names, parents, pairs, shift_len, height)
    shift[shift_len < SHIFT_KEPT * height] = 0.0
    return ChannelMap(left, right, shift, label)


def _height(pose, parents):
    """The skeleton's size in ``pose`` (J, 4, 4): the largest extent of its joints, roots left out."""
    return max(float(np.ptp(pose[np.asarray(parents) >= 0, :3, 3], axis=0).max()), 1e-9)


def _left_and_shift(parents, pairs, rest, offsets, mirror, right):
    """``A_b`` (J, 3, 3) and ``d_b`` (J, 3) for the bones' reflections ``right``."""
    J = len(parents)
    left, shift = np.empty((J, 3, 3)), np.empty((J, 3))
    r_off, t_off = offsets[:, :3, :3], offsets[:, :3, 3]
    for b in range(J):
        p, q = pairs[b], parents[b]
        if q < 0:
            left[b] = svd3.mm3(svd3.mm3(rest[b, :3, :3].T, mirror[:3, :3]), rest[p, :3, :3])
            image = svd3.mv3(mirror[:3, :3], rest[p, :3, 3]) + mirror[:3, 3]
            shift[b] = svd3.mv3(rest[b, :3, :3].T, image - rest[b, :3, 3])
        else:
            left[b] = svd3.mm3(svd3.mm3(r_off[b].T, right[q].T), r_off[p])
            shift[b] = svd3.mv3(r_off[b].T, svd3.mv3(right[q].T, t_off[p]) - t_off[b])
    return left, shift
