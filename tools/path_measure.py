"""Measure a baked path from its keys (Blender side of core.measure.path_metrics).

World positions of the hips, hip joints, ankles and toes are read on every
frame with the add-on's own forward kinematics (``armature_data.armature_pose``,
Blender's pose rule on bulk-read curves, fractional frames allowed), and can be
checked against Blender's own pose after ``scene.frame_set`` on a few frames
(:func:`frame_set_heads`). Needs a bpy process with the add-on enabled
(tools/addon_session).
"""

import importlib
from dataclasses import dataclass

import numpy as np

from core.skeleton import humanoid_map
from core.measure import path_metrics as pm

from .addon_session import MODULE

_JOINTS = ("Hips", "LeftUpperLeg", "RightUpperLeg", "LeftFoot", "RightFoot", "LeftToes", "RightToes")


def addon(name):
    """A module of the enabled add-on, e.g. addon("bridge.blender.armature_data")."""
    return importlib.import_module(MODULE + "." + name)


@dataclass
class Motion:
    """Joint positions (world, metres) sampled ``fps`` times a second."""

    fps: float
    frames: np.ndarray        # (T,) scene frames (may be fractional)
    hips: np.ndarray          # (T, 3)
    hip_joints: np.ndarray    # (T, 2, 3) left, right upper-leg heads
    ankles: np.ndarray        # (T, 2, 3)
    toes: np.ndarray          # (T, 2, 3)
    rotations: np.ndarray     # (T, J, 4) local pose rotations (w, x, y, z)
    names: list               # (J,) bone names of ``rotations``
    contacts: np.ndarray = None   # (T, 2) bool: the played data's contact flags, when known
    shoulders: np.ndarray = None  # (T, 2, 3) left, right upper-arm heads, when the rig maps them


def measured_bones(obj):
    """Bone names of {Hips, Left/RightUpperLeg, Left/RightFoot, Left/RightToes}
    on ``obj``, found by the humanoid mapping (not from the database)."""
    arm = addon("bridge.blender.armature_data")
    names, parents = arm.bone_order(obj.data)
    rest = arm.rest_matrices(obj.data, names)
    mapping = humanoid_map.auto_map(names, parents, rest[:, :3, 3])
    missing = [j for j in _JOINTS if not mapping.get(j)]
    if missing:
        raise ValueError("%s: no bone maps to %s" % (obj.name, ", ".join(missing)))
    return {j: mapping[j] for j in _JOINTS}


def read_motion(obj, action, frames, fps, contacts=None):
    """A :class:`Motion` of ``obj`` playing ``action`` on scene ``frames``, in bulk."""
    arm = addon("bridge.blender.armature_data")
    frames = np.asarray(frames, dtype=np.float64)
    names, parents = arm.bone_order(obj.data)
    rest = arm.rest_matrices(obj.data, names)
    loc, quat, scale = arm.pose_channels(obj, action, frames, names)
    from core.maths import transforms as tf

    pose = tf.pose_fk(parents, rest, arm.basis_matrices(loc, quat, scale), arm.rest_offsets(obj.data, names))
    mw = np.asarray(obj.matrix_world, dtype=np.float64)
    heads = pose[:, :, :3, 3] @ mw[:3, :3].T + mw[:3, 3]
    b = measured_bones(obj)
    at = {n: i for i, n in enumerate(names)}

    def pair(left, right):
        return heads[:, [at[b[left]], at[b[right]]]]

    mapping = humanoid_map.auto_map(names, parents, rest[:, :3, 3])
    arms = [mapping.get(j) for j in ("LeftUpperArm", "RightUpperArm")]
    shoulders = heads[:, [at[arms[0]], at[arms[1]]]] if all(arms) else None
    return Motion(fps=float(fps), frames=frames, hips=heads[:, at[b["Hips"]]],
                  hip_joints=pair("LeftUpperLeg", "RightUpperLeg"), ankles=pair("LeftFoot", "RightFoot"),
                  toes=pair("LeftToes", "RightToes"), rotations=quat, names=list(names), contacts=contacts,
                  shoulders=shoulders)


def baked_contacts(obj, action, frames):
    """(T, 2) bool: the bake's keyed ``mm_contact_left/right`` (the played
    data's contacts), or None when the action has none."""
    arm = addon("bridge.blender.armature_data")
    values = arm.sample_curves(action, obj, frames)
    left, right = values.get(('["mm_contact_left"]', 0)), values.get(('["mm_contact_right"]', 0))
    if left is None or right is None:
        return None
    return np.stack([left, right], axis=1) > 0.5


def frame_set_heads(scene, obj, frames, bone_names):
    """World head positions (F, B, 3) of ``bone_names`` after ``scene.frame_set``
    on each of ``frames`` (whole or fractional): Blender's own evaluation. The
    current frame is restored."""
    current, sub = scene.frame_current, scene.frame_subframe
    out = np.empty((len(frames), len(bone_names), 3))
    try:
        for i, f in enumerate(frames):
            whole = int(np.floor(f))
            scene.frame_set(whole, subframe=float(f - whole))
            mw = np.asarray(obj.matrix_world, dtype=np.float64)
            for k, name in enumerate(bone_names):
                m = np.asarray(obj.pose.bones[name].matrix, dtype=np.float64)
                out[i, k] = mw[:3, :3] @ m[:3, 3] + mw[:3, 3]
    finally:
        scene.frame_set(current, subframe=sub)
    return out


def bulk_vs_frame_set(scene, obj, motion, picks):
    """Largest distance (m) between the bulk positions of ``motion`` and
    Blender's after frame_set, over the indices ``picks`` of its frames."""
    b = measured_bones(obj)
    order = [b[j] for j in ("Hips", "LeftUpperLeg", "RightUpperLeg", "LeftFoot", "RightFoot", "LeftToes",
                            "RightToes")]
    ref = frame_set_heads(scene, obj, motion.frames[picks], order)
    ours = np.concatenate([motion.hips[picks, None], motion.hip_joints[picks], motion.ankles[picks],
                           motion.toes[picks]], axis=1)
    return float(np.max(np.linalg.norm(ref - ours, axis=-1)))


def measure(bake, raw, floor, path=None, asked_facing=None, raw_pairs=None):
    """Every figure of the path table for a baked :class:`Motion` against the
    raw take's (sampled at the same rate). ``floor``: the take's planted ankle
    height; ``path`` (T, 2 or 3): the controller's positions on the bake's frames;
    ``asked_facing`` (T, 2) or None; ``raw_pairs``: each joint's counterpart when
    the database holds the take's mirror image (see path_metrics.rotation_change).
    ``raw`` may be a list of Motions, a take's clips: its sliding figures are then
    pooled (metres and moving seconds summed, as the bake report pools them), its
    longest stretch and rotation steps taken over every clip (no step across two),
    the other figures from the first clip."""
    clips = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    raw = clips[0]
    fps = bake.fps
    out = {"fps": fps, "frames": int(len(bake.frames)), "planted_ankle_height_m": floor}
    slide = pm.ankle_sliding(bake.ankles, bake.hips, fps, floor)
    raw_slide = pooled_sliding(clips, floor)
    out["sliding"] = slide
    out["raw_sliding"] = raw_slide
    out["sliding_ratio"] = _ratio(slide["cm_per_foot_per_moving_s"], raw_slide["cm_per_foot_per_moving_s"])
    if bake.contacts is not None and all(c.contacts is not None for c in clips):
        c = pm.ankle_sliding(bake.ankles, bake.hips, fps, floor, contacts=bake.contacts)
        rc = pooled_sliding(clips, floor, with_contacts=True)
        out["sliding_contact"] = c
        out["raw_sliding_contact"] = rc
        out["sliding_contact_ratio"] = _ratio(c["cm_per_foot_per_moving_s"], rc["cm_per_foot_per_moving_s"])
    # Height-only: the same without the speed test (the seed's measure).
    out["height_sliding"] = pm.ankle_sliding(bake.ankles, bake.hips, fps, floor, max_speed=None)
    out["raw_height_sliding"] = pooled_sliding(clips, floor, max_speed=None)
    out["height_sliding_ratio"] = _ratio(out["height_sliding"]["cm_per_foot_per_moving_s"],
                                         out["raw_height_sliding"]["cm_per_foot_per_moving_s"])
    out["unsupported_s"] = pm.unsupported_stretch(bake.ankles, bake.hips, fps)
    out["raw_unsupported_s"] = max(pm.unsupported_stretch(c.ankles, c.hips, c.fps) for c in clips)
    # Glides: travel with no still ankle for 0.4 s or more (total and longest).
    out["glide"] = pm.glides(bake.ankles, bake.hips, fps)
    raw_glide = [pm.glides(c.ankles, c.hips, c.fps) for c in clips]
    out["raw_glide"] = {"count": sum(g["count"] for g in raw_glide), "total_s": sum(g["total_s"] for g in raw_glide),
                        "longest_s": max(g["longest_s"] for g in raw_glide)}
    out["seed"] = pm.seed_sliding(bake.ankles, fps)
    out["raw_seed"] = pm.seed_sliding(raw.ankles, raw.fps)
    facing = pm.body_facing(bake.hip_joints[:, 0], bake.hip_joints[:, 1])
    out["facing_travel"] = pm.travel_facing_error(facing, bake.hips, fps)
    out["raw_facing_travel"] = pm.travel_facing_error(pm.body_facing(raw.hip_joints[:, 0], raw.hip_joints[:, 1]),
                                                      raw.hips, raw.fps)
    # Against an asked facing: the upper body (upper-arm heads) when known, as the
    # report measures it (the strafe warp turns the legs); the hip joints beside it.
    out["facing_asked"] = out["hips_facing_asked"] = None
    if asked_facing is not None:
        out["hips_facing_asked"] = pm.asked_facing_error(facing, asked_facing)
        out["facing_asked"] = out["hips_facing_asked"] if bake.shoulders is None else pm.asked_facing_error(
            pm.body_facing(bake.shoulders[:, 0], bake.shoulders[:, 1]), asked_facing)
    out["tracking"] = pm.tracking(bake.hips, path) if path is not None else None
    glides = pm.frozen_glides(pm.planted(bake.ankles, fps, floor), bake.hips, fps)
    out["glides"] = [(int(bake.frames[a]), int(bake.frames[b])) for a, b in glides]
    out["glide_frames"] = int(sum(b - a + 1 for a, b in glides))
    out["glide_longest_m"] = max((float(pm.horizontal_steps(bake.hips[a:b + 1]).sum()) for a, b in glides),
                                 default=0.0)
    raw_glides = pm.frozen_glides(pm.planted(raw.ankles, raw.fps, floor), raw.hips, raw.fps)
    out["raw_glides"] = len(raw_glides)
    out["rotation"] = pm.rotation_change(bake.rotations, [c.rotations for c in clips], bake.names,
                                         raw_pairs=raw_pairs)
    if out["rotation"]["frame"] >= 0:
        out["rotation"]["frame"] = int(bake.frames[out["rotation"]["frame"]])
    out["toe_lowest_m"] = pm.lowest(bake.toes)
    out["raw_toe_lowest_m"] = min(pm.lowest(c.toes) for c in clips)
    out["toe_margin_m"] = out["toe_lowest_m"] - out["raw_toe_lowest_m"]
    return out


def pooled_sliding(clips, floor, with_contacts=False, **options):
    """path_metrics.ankle_sliding over a take's clips (Motions) pooled: metres and
    moving seconds summed, then cm per foot per moving second (``options``: its
    keyword arguments; ``with_contacts``: each clip's own contact flags)."""
    parts = [pm.ankle_sliding(c.ankles, c.hips, c.fps, floor, contacts=c.contacts if with_contacts else None,
                              **options) for c in clips if len(c.hips) > 1]
    left, right = sum(p["left_m"] for p in parts), sum(p["right_m"] for p in parts)
    moving, planted = sum(p["moving_s"] for p in parts), sum(p["planted_s"] for p in parts)
    per = 100.0 * 0.5 * (left + right) / moving if moving > 0 else 0.0
    return {"left_m": left, "right_m": right, "moving_s": moving, "cm_per_foot_per_moving_s": per,
            "planted_s": planted}


def planted_height(clips):
    """The take's planted ankle height over its clips (Motions): the median ankle
    height where the toe is in contact (path_metrics.planted_height's rule, each
    clip's speeds within the clip)."""
    heights, contact = [], []
    for c in clips:
        v = np.gradient(c.toes, axis=0) * c.fps
        heights.append(c.ankles[..., 2])
        contact.append(np.linalg.norm(v, axis=-1) < pm.CONTACT_SPEED)
    return pm.contact_height(np.concatenate(heights), np.concatenate(contact))


def _ratio(a, b):
    return float(a / b) if b > 0 else float("nan")
