"""Add the virtual root (simulation bone) to an armature and rekey its hips."""

import bpy
import numpy as np

from ..core.skeleton import virtual_root as vr
from ..core.errors import MotionMatchingError
from . import armature_data, compat

HIPS_NAMES = ("hips", "pelvis", "hip", "root", "mixamorig:hips", "def-spine", "spine")


def guess_hips(arm_data):
    """The bone the root follows: a bone named like the hips, else the first
    root bone that has children."""
    by_lower = {b.name.lower(): b.name for b in arm_data.bones}
    for candidate in HIPS_NAMES:
        if candidate in by_lower:
            return by_lower[candidate]
    for b in arm_data.bones:
        if b.parent is None and b.children:
            return b.name
    return arm_data.bones[0].name if len(arm_data.bones) else None


def key_times(action, obj):
    """The frames to key: the keys' own frames when every curve shares them
    (an imported take), else every whole frame of the action's range."""
    curves = compat.fcurves(action, obj)
    times = None
    for fc in curves:
        x = compat.read_curve(fc, ("co",))["co"][:, 0]
        if times is None:
            times = x
        elif len(x) != len(times) or np.any(x != times):
            times = None
            break
    if times is not None and len(times):
        return times.astype(np.float64)
    start, end = action.frame_range
    return np.arange(np.floor(start), np.ceil(end) + 1.0)


def _root_keys(obj, action, hips, h, hips_offset, forward_local, smoothing):
    """(frames, hips pose (F, 4, 4), root pose (F, 4, 4)) of ``action`` before the root is added."""
    frames = key_times(action, obj)
    # The hips are a top-level bone: their pose is their rest times their own
    # channels, so only their curves are read.
    loc, quat, scale = armature_data.pose_channels(obj, action, frames, [hips])
    hips_pose = (hips_offset @ armature_data.basis_matrices(loc, quat, scale))[:, 0]
    root_pos, root_quat = vr.root_trajectory(hips_pose, forward_local, **smoothing)
    return frames, hips_pose, vr.root_bone_matrices(root_pos, root_quat)


def add_virtual_root(context, obj, hips=None, root_name="Root", smooth=True,
                     position_window=31, position_order=3,
                     direction_window=61, direction_order=3, actions=None):
    """Make ``root_name`` the new root bone of ``obj``, keyed on every frame of
    its action (or of each of ``actions``, the clips it plays in turn), with
    the hips below it keeping their world transform."""
    arm = obj.data
    ad = obj.animation_data
    action = ad.action if ad else None
    if action is None and not actions:
        raise MotionMatchingError("%s has no action to follow: import or assign an animation first." % obj.name)
    actions = list(dict.fromkeys(actions or [action]))
    if hips is None or hips == "":
        hips = guess_hips(arm)
    if hips not in arm.bones:
        raise MotionMatchingError("%s has no bone named %s." % (obj.name, hips))
    if root_name in arm.bones:
        raise MotionMatchingError("%s already has a bone named %s: it has a root already, or choose another name."
                                  % (obj.name, root_name))
    if arm.bones[hips].parent is not None:
        raise MotionMatchingError("The bone %s has a parent (%s); the root must go above a top-level bone."
                                  % (hips, arm.bones[hips].parent.name))
    names, parents = armature_data.bone_order(arm)
    rest = armature_data.rest_matrices(arm, names)
    h = names.index(hips)
    heads = rest[:, :3, 3]
    tails = armature_data.rest_tails(arm, names)
    forward = vr.forward_from_rest(heads, tails, parents, h)
    if forward is None:
        forward = np.array([0.0, -1.0, 0.0])
    forward_local = rest[h, :3, :3].T @ forward
    smoothing = dict(smooth=smooth, position_window=position_window, position_order=position_order,
                     direction_window=direction_window, direction_order=direction_order)
    hips_offset = armature_data.rest_offsets(arm, [hips])[0]
    keys = [_root_keys(obj, a, hips, h, hips_offset, forward_local, smoothing) for a in actions]

    # The root's rest: at the origin, its tail pointing forward, Z up.
    length = max(0.1, 0.25 * float(heads[h, 2]))

    prev_active = context.view_layer.objects.active
    prev_mode = obj.mode
    try:
        context.view_layer.objects.active = obj
        if obj.mode != "EDIT":
            bpy.ops.object.mode_set(mode="EDIT")
        eb = arm.edit_bones.new(root_name)
        eb.head = (0.0, 0.0, 0.0)
        eb.tail = tuple(forward * length)
        eb.align_roll((0.0, 0.0, 1.0))
        arm.edit_bones[hips].parent = eb
        arm.edit_bones[hips].use_connect = False
        root_name = eb.name
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
    try:
        obj.pose.bones[root_name].rotation_mode = "QUATERNION"
        obj.pose.bones[hips].rotation_mode = "QUATERNION"
        root_offset, hips_offset = armature_data.rest_offsets(arm, [root_name, hips])
        for clip, (frames, hips_pose, root_pose) in zip(actions, keys):
            root_basis, hips_basis = vr.reparent_under_root(root_offset, hips_offset, root_pose, hips_pose)
            armature_data.write_bone_transforms(clip, obj, root_name, frames, root_basis)
            for path in ("rotation_euler", "rotation_axis_angle"):
                compat.remove_fcurves(clip, obj, armature_data.bone_path(hips, path))
            armature_data.write_bone_transforms(clip, obj, hips, frames, hips_basis)
        settings = arm.motion_matching
        settings.root_bone = root_name
        settings.hips_bone = hips
    finally:
        if prev_mode != "OBJECT" and obj.mode != prev_mode:
            bpy.ops.object.mode_set(mode=prev_mode)
        context.view_layer.objects.active = prev_active
    return root_name
