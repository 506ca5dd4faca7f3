"""Add the virtual root (simulation bone) to an armature and rekey its hips."""

import bpy
import numpy as np

from ...core.skeleton import virtual_root as vr
from ...core.errors import MotionMatchingError
from ...core.maths import transforms as tf
from ..blender import armature_data, compat
from ..blender.scene_data import scene_fps

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


def in_frames(context, action, smoothing):
    """``smoothing`` with its windows (seconds) turned into odd frame counts at the
    clip's own rate (the scene's when the clip has none)."""
    fps = action.motion_matching.fps or scene_fps(context.scene)
    out = dict(smoothing)
    for key in ("position_window", "direction_window"):
        if key in out:
            out[key] = vr.window_frames(out[key], fps)
    return out


def _root_keys(obj, action, hips, h, hips_offset, forward_local, smoothing):
    """(frames, hips pose (F, 4, 4), root pose (F, 4, 4)) of ``action`` before the root is added."""
    frames = key_times(action, obj)
    # The hips are a top-level bone: their pose is their rest times their own
    # channels, so only their curves are read.
    loc, quat, scale = armature_data.pose_channels(obj, action, frames, [hips])
    hips_pose = (hips_offset @ armature_data.basis_matrices(loc, quat, scale))[:, 0]
    root_pos, root_quat = vr.root_trajectory(hips_pose, forward_local, **smoothing)
    return frames, hips_pose, vr.root_bone_matrices(root_pos, root_quat)


def _new_root_bone(context, obj, hips, root_name, base, forward, length):
    """The root bone made in edit mode at ``base``, tail ``length`` along
    ``forward``, Z up, with the hips under it (not connected); returns its name
    (Blender's, should it differ)."""
    arm = obj.data
    try:
        context.view_layer.objects.active = obj
        if obj.mode != "EDIT":
            bpy.ops.object.mode_set(mode="EDIT")
        eb = arm.edit_bones.new(root_name)
        eb.head = tuple(base)
        eb.tail = tuple(base + forward * length)
        eb.align_roll((0.0, 0.0, 1.0))
        arm.edit_bones[hips].parent = eb
        arm.edit_bones[hips].use_connect = False
        return eb.name
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")


def _key_root(obj, actions, keys, root_name, hips):
    """Key the root on every clip (``keys``: (frames, hips pose, root pose) of
    each) and the hips below it keeping their world transform; note both bones
    on the armature."""
    arm = obj.data
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


def add_virtual_root(context, obj, hips=None, root_name="Root", smooth=True,
                     position_window=vr.POSITION_WINDOW_S, position_order=3,
                     direction_window=vr.DIRECTION_WINDOW_S, direction_order=3, actions=None):
    """Make ``root_name`` the new root bone of ``obj``, keyed on every frame of
    its action (or of each of ``actions``, the clips it plays in turn), with
    the hips below it keeping their world transform. The smoothing windows are
    seconds, counted in frames at each clip's own rate.

    When the hips hang under a top-level bone (a ground root such as Unreal's
    ``root`` or Bandai Namco's ``joint_Root``), that bone becomes the virtual
    root instead (see :func:`root_from_top_bone`). Returns the root bone's name
    and one sentence saying what was done."""
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
    smoothing = dict(smooth=smooth, position_window=position_window, position_order=position_order,
                     direction_window=direction_window, direction_order=direction_order)
    if arm.bones[hips].parent is not None:
        return root_from_top_bone(context, obj, actions, hips, **smoothing)
    if root_name in arm.bones:
        raise MotionMatchingError("%s already has a bone named %s: it has a root already, or choose another name."
                                  % (obj.name, root_name))
    names, parents = armature_data.bone_order(arm)
    rest = armature_data.rest_matrices(arm, names)
    h = names.index(hips)
    heads = rest[:, :3, 3]
    # One forward for every clip (from the first clip's posed legs), so all
    # clips' roots face the same way relative to the body.
    forward_local = hips_forward_local(obj, actions[0], key_times(actions[0], obj), h)
    forward = rest_forward(arm, names, parents, rest, h)
    hips_offset = armature_data.rest_offsets(arm, [hips])[0]
    keys = [_root_keys(obj, a, hips, h, hips_offset, forward_local, in_frames(context, a, smoothing))
            for a in actions]

    # The root's rest: on the ground under the hips' rest head (so that the hips
    # lie in its middle plane, whatever pose the rest is), tail forward, Z up.
    length = max(0.1, 0.25 * float(heads[h, 2]))
    base = np.array([heads[h, 0], heads[h, 1], 0.0])

    prev_active = context.view_layer.objects.active
    prev_mode = obj.mode
    root_name = _new_root_bone(context, obj, hips, root_name, base, forward, length)
    try:
        _key_root(obj, actions, keys, root_name, hips)
    finally:
        if prev_mode != "OBJECT" and obj.mode != prev_mode:
            bpy.ops.object.mode_set(mode=prev_mode)
        context.view_layer.objects.active = prev_active
    said = "Added root bone %s to %s, on the ground under %s." % (root_name, obj.name, hips)
    arm.motion_matching.root_note = said
    return root_name, said


FORWARD_FRAMES = 64


def rest_forward(arm, names, parents, rest, h):
    """Where the root's rest points: the character's forward in the rest pose
    when its legs go down, else Blender's front (-Y)."""
    forward = vr.forward_from_rest(rest[:, :3, 3], armature_data.rest_tails(arm, names), parents, h)
    return forward if forward is not None else np.array([0.0, -1.0, 0.0])


def hips_forward_local(obj, action, frames, h):
    """The character's forward in the axes of bone ``h`` (the hips), found from
    the posed legs on up to 64 evenly spaced frames, so that it does not depend
    on the rest pose (a T-pose, bones laid along one axis, or the first frame
    of an FBX file); else from the rest; else the hips' rest -Y."""
    arm = obj.data
    pick = np.unique(np.linspace(0, len(frames) - 1, min(FORWARD_FRAMES, len(frames))).round().astype(np.int64))
    names, parents, rest, pose = armature_data.armature_pose(obj, action, np.asarray(frames)[pick])
    lengths = np.array([arm.bones[n].length for n in names])
    posed_tails = pose[..., :3, 3] + pose[..., :3, 1] * lengths[:, None]
    local = vr.forward_from_pose(pose[..., :3, 3], posed_tails, parents, h, pose[:, h, :3, :3], every=1)
    if local is not None:
        return local
    forward = vr.forward_from_rest(rest[:, :3, 3], armature_data.rest_tails(arm, names), parents, h)
    return rest[h, :3, :3].T @ (forward if forward is not None else np.array([0.0, -1.0, 0.0]))


def _top_bone_keys(obj, action, hips, top, smooth, windows):
    """(frames, pose, root pose, role) of one clip before the top bone becomes the root."""
    frames = key_times(action, obj)
    names, _parents, _rest, pose = armature_data.armature_pose(obj, action, frames)
    h, t = names.index(hips), names.index(top)
    forward_local = hips_forward_local(obj, action, frames, h)
    _hips_pos, hips_quat = vr.root_trajectory(pose[:, h], forward_local)
    facing = tf.quat_rotate(hips_quat, np.array([0.0, -1.0, 0.0]))
    role, top_local = vr.top_bone_role(pose[:, t], facing, pose[:, h])
    if role == "trajectory":
        root_pos, root_quat = vr.trajectory_of_bone(pose[:, t], top_local)
    else:
        root_pos, root_quat = vr.root_trajectory(pose[:, h], forward_local, smooth=smooth, **windows)
    return frames, pose, vr.root_bone_matrices(root_pos, root_quat), role


def _top_bone_sentence(top, roles):
    """What became of the top bone, in one sentence (``roles``: each clip's)."""
    if all(r == "trajectory" for r in roles):
        return "%s moves on the ground with the character, so it is the virtual root, keyed from its own path." % top
    if all(r != "trajectory" for r in roles):
        return ("%s %s, so it became the virtual root, keyed on the ground under the hips."
                % (top, "stays still" if all(r == "static" for r in roles) else "does not follow the body"))
    moving = sum(r == "trajectory" for r in roles)
    return ("%s became the virtual root: keyed from its own path in the %d of %d clips where it moves with the "
            "character, under the hips in the others." % (top, moving, len(roles)))


def root_from_top_bone(context, obj, actions, hips, smooth=True, **windows):
    """Make the top-level bone above the hips the virtual root, in every clip of ``actions``.

    When it carries the trajectory (on the ground, under the hips, turning with
    them) it is keyed from its own path and facing; otherwise (it stays still,
    or does not follow the body) from the hips, as a new root would be. Either
    way its rest is set to the virtual root's (on the ground under the hips' rest head, forward, Z up)
    and its children are rekeyed so that no joint moves."""
    arm = obj.data
    top = arm.bones[hips].parent
    if top.parent is not None:
        raise MotionMatchingError(
            "The bone %s hangs two bones below the top (under %s, under %s); choose a Follow Bone whose parent "
            "is a top-level bone, or one without a parent." % (hips, top.name, top.parent.name))
    top = top.name
    if arm.motion_matching.root_bone == top:
        raise MotionMatchingError("%s already has its virtual root (%s)." % (obj.name, top))
    keys = [_top_bone_keys(obj, a, hips, top, smooth, in_frames(context, a, windows)) for a in actions]
    if any(role == "off_ground" for *_rest, role in keys):
        raise MotionMatchingError(
            "The bone %s has a parent (%s) that is not on the ground; the root must go above a top-level bone, "
            "or take the place of a top bone on the ground." % (hips, top))
    said = _top_bone_sentence(top, [role for *_rest, role in keys])
    names, parents = armature_data.bone_order(arm)
    rest = armature_data.rest_matrices(arm, names)
    h = names.index(hips)
    children = [c.name for c in arm.bones[top].children]
    forward = rest_forward(arm, names, parents, rest, h)
    _set_root_rest(context, obj, top, children, forward, max(0.1, 0.25 * float(np.median(keys[0][1][:, h, 2, 3]))),
                   np.array([rest[h, 0, 3], rest[h, 1, 3], 0.0]))
    offsets = armature_data.rest_offsets(arm, [top] + children)
    for action, (frames, pose, root_pose, _role) in zip(actions, keys):
        for name in [top] + children:
            obj.pose.bones[name].rotation_mode = "QUATERNION"
            for path in ("rotation_euler", "rotation_axis_angle"):
                compat.remove_fcurves(action, obj, armature_data.bone_path(name, path))
        armature_data.write_bone_transforms(action, obj, top, frames, np.linalg.inv(offsets[0]) @ root_pose)
        bases = vr.rekey_under_root(offsets[1:], root_pose, pose[:, [names.index(c) for c in children]])
        for k, name in enumerate(children):
            armature_data.write_bone_transforms(action, obj, name, frames, bases[:, k])
    arm.motion_matching.root_bone = top
    arm.motion_matching.hips_bone = hips
    arm.motion_matching.root_note = said
    return top, said


def _set_root_rest(context, obj, top, children, forward, length, base):
    """Give ``top`` the virtual root's rest: head at ``base`` (on the ground under
    the hips' rest head), tail along ``forward`` on the ground, Z up; its children
    let go of its tail first."""
    prev_active = context.view_layer.objects.active
    prev_mode = obj.mode
    try:
        context.view_layer.objects.active = obj
        if obj.mode != "EDIT":
            bpy.ops.object.mode_set(mode="EDIT")
        ebs = obj.data.edit_bones
        for name in children:
            ebs[name].use_connect = False
        flat = np.array([forward[0], forward[1], 0.0])
        flat = flat / np.linalg.norm(flat) if np.linalg.norm(flat) > 1e-9 else np.array([0.0, -1.0, 0.0])
        ebs[top].head = tuple(base)
        ebs[top].tail = tuple(base + flat * length)
        ebs[top].align_roll((0.0, 0.0, 1.0))
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        if prev_mode != "OBJECT" and obj.mode != prev_mode:
            bpy.ops.object.mode_set(mode=prev_mode)
        context.view_layer.objects.active = prev_active
