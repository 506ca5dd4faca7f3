"""The Blender side of retargeting: the source's motion read, retargeted
through the plan (plan.py) and checked in world space, and written onto the
target as a new action (write.py).

Rotations are armature-space (each pose bone's ``matrix``), so each character
moves in its own object frame; see core.retarget for the maths and decisions.
Everything is computed and checked before anything in the file changes; a
failure while writing removes what was written.
"""

import numpy as np

from ...core.skeleton import humanoid_joints
from ...core.retarget import frames as rt_frames
from ...core.errors import MotionMatchingError
from ..blender import armature_data
from ..files.virtual_root import key_times
from .mapping import store_mapping
from .plan import join_short, plan_for
from .write import write_action


def source_motion(obj):
    """Frames of the source's action and its armature-space pose matrices (F, J, 4, 4)."""
    ad = obj.animation_data
    action = ad.action if ad else None
    if action is None:
        raise MotionMatchingError("The source %s has no action to retarget." % obj.name)
    frames = key_times(action, obj)
    names, _parents, _rest, pose = armature_data.armature_pose(obj, action, frames)
    return action, frames, names, pose


def retarget_pose(setup, pose):
    """core.retarget.frames.retarget_frames on source pose matrices (F, Js, 4, 4)
    in armature space (e.g. from armature_data.armature_pose)."""
    return rt_frames.retarget_pose(setup.plan, pose)


def world_joints(setup, result, chunk=256):
    """World positions of the target's hips head, pelvis point (mid hip
    joints), head, ankles and toes (Foot and Toes heads) on every frame of a
    retarget result: {"hips", "pelvis", "head": (F, 3), "ankles", "toes":
    (F, 2, 3)}, unmapped joints left out. In chunks of frames (big rigs)."""
    g = np.asarray(setup.ground, dtype=np.float64)
    joints = setup.target.joints
    pick = {"hips": [joints["Hips"]], "pelvis": [joints["LeftUpperLeg"], joints["RightUpperLeg"]]}
    for key, joint in (("ankles", "Foot"), ("toes", "Toes")):
        if all(s + joint in joints for s in ("Left", "Right")):
            pick[key] = [joints["Left" + joint], joints["Right" + joint]]
    head = joints.get("Head", joints.get("Neck"))
    if head is not None:
        pick["head"] = [head]
    parts = {k: [] for k in pick}
    F = result.rotations.shape[0]
    for a in range(0, F, chunk):
        pose = rt_frames.target_frame_pose(setup.plan, rt_frames.slice_result(result, slice(a, a + chunk)))
        heads = pose[..., :3, 3] @ g[:3, :3].T + g[:3, 3]
        for k, idx in pick.items():
            parts[k].append(heads[:, idx])
    out = {k: np.concatenate(v) for k, v in parts.items()}
    for k in ("hips", "head"):
        if k in out:
            out[k] = out[k][:, 0]
    out["pelvis"] = out["pelvis"].mean(axis=1)
    return out


def check_result(setup, result, target, controller=None, frames=200):
    """core.measure.retarget_checks on the result in world space (on up to ``frames``
    frames spread over it unless a controller is given): [sentences]."""
    from ...core.measure import retarget_checks

    if controller is None and result.rotations.shape[0] > frames:
        pick = np.linspace(0, result.rotations.shape[0] - 1, frames).round().astype(np.int64)
        result = rt_frames.slice_result(result, pick)
    world = world_joints(setup, result)
    return retarget_checks.result_warnings(target.name, setup.plan.target_height, world, controller)


def retarget(context, source, target, source_tpose="AUTO", source_frame=1, target_tpose="AUTO",
             target_frame=1, root_motion="HIPS", scale=None, prefer="DEF", action_name="",
             progress=None):
    """Retarget the source's action onto ``target`` as a new action assigned
    to it (see :func:`plan_for` and :func:`write_action`). Returns (action,
    sentence for the report, [warnings]); ``progress(fraction)`` is called
    along the way."""
    step = progress or (lambda f: None)
    setup = plan_for(context, source, target, source_tpose, source_frame, target_tpose, target_frame,
                     root_motion, scale, prefer)
    step(0.2)
    action, frames, _names, pose = source_motion(source)
    step(0.4)
    result = retarget_pose(setup, pose)
    step(0.6)
    checks = check_result(setup, result, target)
    new, switched = write_action(target, setup, result, frames,
                                 action_name or "%s on %s" % (action.name, target.name))
    target["mm_size_ratio"] = float(setup.plan.scale)      # shown in the Retarget panel
    if setup.source_auto:
        store_mapping(source, setup.source_map)
    if setup.target_auto:
        store_mapping(target, setup.target_map)
    step(1.0)
    plan = setup.plan
    inbetween = [lab for lab in plan.labels if lab not in humanoid_joints.CANONICAL]
    auto = [o.name for o, a in ((source, setup.source_auto), (target, setup.target_auto)) if a]
    sentence = ("Retargeted %d frames of %s onto %s as %s: %d bones keyed%s, translation scaled by %.3f; "
                "T-poses: source %s, target %s%s." % (
                    len(frames), action.name, target.name, new.name, len(result.keyed),
                    " (%d in-between)" % len(inbetween) if inbetween else "", plan.scale,
                    setup.tpose_words[0], setup.tpose_words[1],
                    "; mapped automatically: %s" % " and ".join(auto) if auto else ""))
    if switched:
        sentence += " Switched %s to FK (IK_FK = 1) so the FK keys drive them." % join_short(switched)
    return new, sentence, setup.warnings + checks
