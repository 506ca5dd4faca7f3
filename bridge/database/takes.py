"""One listed take read in bulk: its frame rate and whole frames, its bones'
channels and the world positions of the bones the features need (forward
kinematics a block of frames at a time), and its tags."""

import numpy as np

from ...core.maths import transforms as tf
from ...core.errors import MotionMatchingError
from ..blender import armature_data, compat
from ..blender.scene_data import scene_fps


def action_fps(action, scene):
    fps = action.motion_matching.fps
    return fps if fps > 0 else scene_fps(scene)


def action_frames(action, obj):
    """Whole frames the action covers: its manual range if set, else its keys."""
    if getattr(action, "use_frame_range", False):
        start, end = action.frame_start, action.frame_end
    else:
        lo, hi = None, None
        for fc in compat.fcurves(action, obj):
            if len(fc.keyframe_points) == 0:
                continue
            first, last = fc.range()  # the first and last key (read in C, not key by key)
            lo = first if lo is None else min(lo, first)
            hi = last if hi is None else max(hi, last)
        if lo is None:
            raise MotionMatchingError("The action %s has no keys." % action.name)
        start, end = lo, hi
    if not (np.isfinite(start) and np.isfinite(end)):
        raise MotionMatchingError("The action %s has keys on frames that are not finite numbers." % action.name)
    first, last = int(np.ceil(start - 1e-4)), int(np.floor(end + 1e-4))
    if last < first:
        raise MotionMatchingError("The action %s covers no whole frame." % action.name)
    return np.arange(first, last + 1, dtype=np.float64)


def fk_bones(names, parents, wanted):
    """Indices (into ``names``) of the bones ``wanted`` and of all their
    ancestors, parents first (``names`` is in :func:`armature_data.bone_order`)."""
    index = {n: i for i, n in enumerate(names)}
    keep = np.zeros(len(names), dtype=bool)
    for name in wanted:
        j = index[name]
        while j >= 0 and not keep[j]:
            keep[j] = True
            j = parents[j]
    return np.nonzero(keep)[0]


def sample_action(scene, action, obj, names, parents, wanted, frames=None):
    """Sample ``action`` on ``obj`` (bones ``names`` parents first, with
    ``parents``) on its whole frames.

    Returns (frames, (locations (F, J, 3), quaternions (F, J, 4)), positions
    (F, K, 3), root (F, 4, 4)): every bone's channels in float32 (as the
    database keeps them; quaternions sign-continuous), the world positions of
    the K bones ``wanted`` and the world matrices of the last of them. Memory
    stays near the float32 channels: curves are read a few bones at a time and
    forward kinematics runs on ``wanted`` and their ancestors only, a block of
    frames at a time.
    """
    if frames is None:
        frames = action_frames(action, obj)
    curves = compat.fcurves(action, obj)
    if not any(len(fc.keyframe_points) for fc in curves):
        raise MotionMatchingError("The action %s has no keys." % action.name)
    del curves
    by_bone = armature_data.curves_by_bone(action, obj)
    F, J = len(frames), len(names)
    fk = fk_bones(names, parents, wanted)
    slot = {int(j): k for k, j in enumerate(fk)}
    K = len(fk)
    loc32 = np.empty((F, J, 3), dtype=np.float32)
    quat32 = np.empty((F, J, 4), dtype=np.float32)
    fk_loc, fk_quat, fk_scale = np.empty((F, K, 3)), np.empty((F, K, 4)), np.empty((F, K, 3))
    block = max(1, (1 << 18) // max(F, 1))
    for b0 in range(0, J, block):
        sub = names[b0:b0 + block]
        loc, quat, scale = armature_data.pose_channels(obj, action, frames, sub, by_bone)
        finite = (np.isfinite(loc).all(axis=2) & np.isfinite(quat).all(axis=2)
                  & np.isfinite(scale).all(axis=2))
        if not finite.all():
            f, j = np.argwhere(~finite)[0]
            raise MotionMatchingError("The action %s holds NaN or infinite values (bone %s, frame %d)."
                                      % (action.name, sub[j], int(frames[f])))
        loc32[:, b0:b0 + len(sub)] = loc
        quat32[:, b0:b0 + len(sub)] = tf.quat_unroll(quat, axis=0)
        for i in range(len(sub)):
            k = slot.get(b0 + i)
            if k is not None:
                fk_loc[:, k], fk_quat[:, k], fk_scale[:, k] = loc[:, i], quat[:, i], scale[:, i]
        del loc, quat, scale
    positions, last = armature_data.fk_world(obj, names, parents, fk, wanted, F, lambda f0, f1: (
        armature_data.basis_matrices(fk_loc[f0:f1], fk_quat[f0:f1], fk_scale[f0:f1])))
    return frames, (loc32, quat32), positions, last


def tags_of(action, frames):
    """The action's tags as core Tags in 0-based clip frames; a tag outside the
    action is refused in the action's own frame numbers."""
    from ...core.database import tags as core_tags

    first, last = int(frames[0]), int(frames[-1])
    out = []
    for t in action.motion_matching.tags:
        core_tags.check_tag_name(t.name)
        if t.frame_end < t.frame_start:
            raise MotionMatchingError("Tag '%s' of %s ends (frame %d) before it starts (frame %d)."
                                      % (t.name, action.name, t.frame_end, t.frame_start))
        if t.frame_start < first or t.frame_end > last:
            raise MotionMatchingError(
                "Tag '%s' of %s covers frames %d-%d but the action has frames %d-%d; move the tag inside it."
                % (t.name, action.name, t.frame_start, t.frame_end, first, last))
        out.append(core_tags.Tag(t.name, int(t.frame_start - first), int(t.frame_end - first)))
    core_tags.validate_tags(out, len(frames), action.name)
    return out
