"""A small made-up MotionDatabase that walks (no Blender): a humanoid's root,
hips and two legs whose upper legs swing, stored as the add-on stores one."""

import json

import numpy as np

from core.bake import pipeline as bake
from core.bake.pose import pose_root_bone
from core.database.clip_features import Clip
from core.database.feature_database import build_database
from core.database.feature_spec import default_spec, feature_names, feature_weights
from core.database.file_layout import ADDON_FORMAT
from core.database.motion_database import MotionDatabase
from core.maths import transforms as tf
from core.skeleton.virtual_root import BONE_TO_CHARACTER

FPS = 30.0
BONES = ["Root", "Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToe",
         "RightUpLeg", "RightLeg", "RightFoot", "RightToe"]
PARENTS = np.array([-1, 0, 1, 2, 3, 4, 1, 6, 7, 8])
# Bone heads at rest, armature space (the character faces -Y, its left on +X).
HEADS = [(0, 0, 0), (0, 0, 0.95), (0.1, 0, 0.9), (0.1, 0, 0.48), (0.1, 0, 0.08), (0.1, -0.14, 0.01),
         (-0.1, 0, 0.9), (-0.1, 0, 0.48), (-0.1, 0, 0.08), (-0.1, -0.14, 0.01)]


def rest():
    """(J, 4, 4) armature-space rest matrices: the root bone points along the
    character's forward as a virtual root does, the others keep the armature's axes."""
    out = np.tile(np.eye(4), (len(BONES), 1, 1))
    out[:, :3, 3] = HEADS
    out[0] = BONE_TO_CHARACTER
    return out


def skeleton():
    r = rest()
    offsets = np.stack([r[j] if p < 0 else np.linalg.inv(r[p]) @ r[j] for j, p in enumerate(PARENTS)])
    return bake.BakeSkeleton(names=list(BONES), parents=PARENTS, offsets=offsets, root=0, hips=1,
                             legs=[(2, 3, 4, 5), (6, 7, 8, 9)])


def _walk(name, seconds, speed):
    """A clip walking toward -Y at ``speed`` m/s, the legs swinging at one stride
    a second (the stance foot about still): (Clip, pose locations, rotations)."""
    skel = skeleton()
    n = int(seconds * FPS)
    t = np.arange(n) / FPS
    J = len(BONES)
    root = np.column_stack([np.zeros(n), -speed * t, np.zeros(n)])
    locs = np.zeros((n, J, 3))
    rots = np.tile([1.0, 0.0, 0.0, 0.0], (n, J, 1))
    quats = pose_root_bone(skel, locs, rots, root, np.zeros(n))
    swing = speed / (0.82 * 2 * np.pi) * np.sin(2 * np.pi * t)
    x = np.array([1.0, 0.0, 0.0])
    rots[:, 2] = tf.quat_from_axis_angle(np.broadcast_to(x, (n, 3)), swing)
    rots[:, 6] = tf.quat_from_axis_angle(np.broadcast_to(x, (n, 3)), -swing)
    pose = bake.forward_kinematics(skel, locs, rots)
    clip = Clip(name=name, fps=FPS, joint_names=list(BONES), positions=pose[:, :, :3, 3], root_pos=root,
                root_rot=quats)
    return clip, locs, rots


def walk_database(tags=(("fast", 0, 119), ("slow", 0, 119)), speeds=(1.2, 0.6), seconds=4.0):
    """A MotionDatabase of one clip per speed (``tags``: the i-th tag on the
    i-th clip, (name, first frame, last frame), or a list of such for several)."""
    spec = default_spec("LeftFoot", "RightFoot", "Hips")
    made = [_walk("walk%d" % i, seconds, s) for i, s in enumerate(speeds)]
    clips = [c for c, _l, _r in made]
    db = build_database(spec, clips, contact_joints=("LeftToe", "RightToe"))
    arrays = db.to_arrays()
    arrays.update({
        "format": np.array(ADDON_FORMAT),
        "weights": feature_weights(spec),
        "feature_names": np.array(feature_names(spec)),
        "bone_names": np.array(BONES),
        "bone_parents": PARENTS.astype(np.int32),
        "bone_rest": rest(),
        "bone_offsets": skeleton().offsets,
        "feature_bones_json": np.array(json.dumps({"hips": "Hips", "left_foot": "LeftFoot",
                                                   "right_foot": "RightFoot", "left_toe": "LeftToe",
                                                   "right_toe": "RightToe", "root": "Root"})),
        "pose_rotations": np.concatenate([r for _c, _l, r in made]).astype(np.float32),
        "pose_locations": np.concatenate([l for _c, l, _r in made]).astype(np.float32),
        "root_positions": np.concatenate([c.root_pos for c in clips]),
        "root_facings": np.tile([0.0, -1.0], (db.num_rows, 1)),
        "root_quats": np.concatenate([c.root_rot for c in clips]),
        "toe_positions": np.concatenate([c.positions[:, [5, 9]] for c in clips]),
        "foot_positions": np.concatenate([c.positions[:, [4, 8]] for c in clips]),
        "clip_actions": np.array([c.name for c in clips]),
        "clip_armatures": np.array(["Armature"] * len(clips)),
        "clip_frame_start": np.ones(len(clips)),
        "tags_json": np.array(json.dumps([[{"name": n, "start": a, "end": b} for n, a, b in _clip_tags(tags, i)]
                                          for i in range(len(clips))])),
        "fingerprint": np.array("0" * 40),
    })
    return MotionDatabase.from_arrays(arrays)


def _clip_tags(tags, i):
    """The i-th clip's tags: [(name, first, last)]."""
    if i >= len(tags):
        return []
    return [tags[i]] if isinstance(tags[i][0], str) else list(tags[i])
