"""Test takes in the conventions users bring, made from the sample take.

Run from the repository root (no Blender needed):

    python -m tools.convention_takes --out out/conventions [--which cmu bandai unreal]

- ``cmu``: CMU BVH joint names (``LHipJoint``, ``LeftUpLeg``, ``LowerBack``,
  ``LeftShoulder`` for the collar, ``LThumb``...), 120 fps (resampled), CMU units
  (a file value is metres / 0.056444) and other proportions (longer legs and
  arms, a shorter spine): the sample's motion retargeted by copying each
  joint's world rotation onto the new bone lengths, the hips' path scaled with
  the legs.
- ``bandai``: a static ``joint_Root`` at the origin above ``Hips``, six channels
  on every joint, Bandai Namco's names (``UpperLeg_L``, ``Chest``...), a rest
  pose with every OFFSET along +X (so every joint's rotation differs from the
  sample's), centimetres, Y up, 30 fps, cut into 30 clips of 3-6 s.
- Any of them from :meth:`Take.lowered`: the feet sink through the floor
  (standing toes under it).
- ``unreal``: ``root`` on the ground moving with the character (the hips
  projected to the ground, turned with the hips' facing) > ``pelvis`` >
  ``spine_01``... / ``thigh_l``, ``calf_l``, ``foot_l``, ``ball_l``...,
  centimetres.
- ``thin``: the sample's own skeleton cut into clips of 3-6 s that each keep
  moving one way (no stand, no reversal, no turn on the spot: what the takes
  users bring hold), with feet that slide a little (the body drifts to and
  fro, about 7 cm per foot per moving second) and a body that sinks now and
  then so the toes dip below the floor; 30 fps.

Every joint's world position equals the sample's (the CMU take: retargeted to
its proportions); tests/test_convention_takes.py reads them back with the
add-on's parser. Each function returns the paths it wrote.
"""

import argparse
import os

import numpy as np

from core.io import bvh_convert, bvh_parse
from core.maths import resample as rs, transforms as tf
from tools.bvh_writer import write_skeleton

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(os.path.dirname(HERE), "samples", "jl_mm_run.bvh")
CMU_UNIT = 0.056444          # metres per CMU unit
ZYX = ("Zrotation", "Yrotation", "Xrotation")
ZXY = ("Zrotation", "Xrotation", "Yrotation")
POS = ("Xposition", "Yposition", "Zposition")

# The sample's joints, one side written once ({S}: Left/Right).
_SIDES = (("Left", "L", "l"), ("Right", "R", "r"))

# CMU: (name, parent, sample joint whose world rotation it takes, bone-length
# scale of its OFFSET); a sample joint of None: a joint the sample lacks, at
# its parent's place.
_CMU = [("Hips", None, "Hips", None), ("LowerBack", "Hips", "Chest", 0.92), ("Spine", "LowerBack", "Chest2", 0.92),
        ("Spine1", "Spine", "Chest3", 0.92), ("Neck", "Spine1", "Chest4", 0.92), ("Neck1", "Neck", "Neck", 0.92),
        ("Head", "Neck1", "Head", 1.0)]
_CMU_SIDE = [("{c}HipJoint", "Hips", "Hips", "zero"), ("{S}UpLeg", "{c}HipJoint", "{S}Hip", 1.08),
             ("{S}Leg", "{S}UpLeg", "{S}Knee", 1.08), ("{S}Foot", "{S}Leg", "{S}Ankle", 1.08),
             ("{S}ToeBase", "{S}Foot", "{S}Toe", 1.08),
             ("{S}Shoulder", "Spine1", "{S}Collar", 1.05), ("{S}Arm", "{S}Shoulder", "{S}Shoulder", 1.05),
             ("{S}ForeArm", "{S}Arm", "{S}Elbow", 1.05), ("{S}Hand", "{S}ForeArm", "{S}Wrist", 1.05),
             ("{S}FingerBase", "{S}Hand", "{S}Wrist", "finger"), ("{S}HandIndex1", "{S}FingerBase", "{S}Wrist", "finger"),
             ("{c}Thumb", "{S}Hand", "{S}Wrist", "thumb")]
LEG_SCALE = 1.08

_BANDAI = [("joint_Root", None, None), ("Hips", "joint_Root", "Hips"), ("Spine", "Hips", "Chest"),
           ("Chest", "Spine", "Chest2"), ("Chest2", "Chest", "Chest3"), ("Chest3", "Chest2", "Chest4"),
           ("Neck", "Chest3", "Neck"), ("Head", "Neck", "Head")]
_BANDAI_SIDE = [("Shoulder_{c}", "Chest3", "{S}Collar"), ("UpperArm_{c}", "Shoulder_{c}", "{S}Shoulder"),
                ("LowerArm_{c}", "UpperArm_{c}", "{S}Elbow"), ("Hand_{c}", "LowerArm_{c}", "{S}Wrist"),
                ("UpperLeg_{c}", "Hips", "{S}Hip"), ("LowerLeg_{c}", "UpperLeg_{c}", "{S}Knee"),
                ("Foot_{c}", "LowerLeg_{c}", "{S}Ankle"), ("Toes_{c}", "Foot_{c}", "{S}Toe")]

_UNREAL = [("root", None, None), ("pelvis", "root", "Hips"), ("spine_01", "pelvis", "Chest"),
           ("spine_02", "spine_01", "Chest2"), ("spine_03", "spine_02", "Chest3"), ("spine_04", "spine_03", "Chest4"),
           ("neck_01", "spine_04", "Neck"), ("head", "neck_01", "Head")]
_UNREAL_SIDE = [("clavicle_{s}", "spine_04", "{S}Collar"), ("upperarm_{s}", "clavicle_{s}", "{S}Shoulder"),
                ("lowerarm_{s}", "upperarm_{s}", "{S}Elbow"), ("hand_{s}", "lowerarm_{s}", "{S}Wrist"),
                ("thigh_{s}", "pelvis", "{S}Hip"), ("calf_{s}", "thigh_{s}", "{S}Knee"),
                ("foot_{s}", "calf_{s}", "{S}Ankle"), ("ball_{s}", "foot_{s}", "{S}Toe")]


def _expand(main, side):
    """The joint table with each side row written for Left and Right."""
    rows = list(main)
    for word, c, s in _SIDES:
        for row in side:
            rows.append(tuple(v.format(S=word, c=c, s=s) if isinstance(v, str) else v for v in row))
    return rows


# ---------------------------------------------------------------------------
# The sample's motion in the file's own axes


class Take:
    """A take's joints in its file's axes and units: world rotations (F, J, 3, 3),
    positions (F, J, 3), rest offsets and end sites, by joint name."""

    def __init__(self, bvh):
        motion = bvh_convert.to_blender(bvh, 1.0, axis_forward="Y", axis_up="Z")   # no axis change
        self.names = list(bvh.names)
        self.index = {n: j for j, n in enumerate(self.names)}
        self.parents = np.asarray(bvh.parents)
        self.offsets = bvh.offsets.copy()
        self.end_sites = list(bvh.end_sites)
        self.frame_time = bvh.frame_time
        self.rot = motion.world_rotations()
        self.pos = motion.world_positions()
        self.local = motion.rotations
        self.root_pos = self.pos[:, 0]

    def cut(self, start, stop):
        """The same take with only frames ``start:stop``."""
        out = object.__new__(Take)
        out.__dict__.update(self.__dict__)
        for key in ("rot", "pos", "local", "root_pos"):
            setattr(out, key, getattr(self, key)[start:stop])
        return out

    def lowered(self, depth):
        """The same take ``depth`` file units lower (Y up): its feet sink
        through its floor, as takes captured over a raised floor plate do."""
        out = self.cut(0, len(self.rot))
        out.pos = self.pos.copy()
        out.pos[..., 1] -= depth
        out.root_pos = out.pos[:, 0]
        return out

    def rot_of(self, name):
        return self.rot[:, self.index[name]]

    def pos_of(self, name):
        return self.pos[:, self.index[name]]


def read_take(path):
    """A BVH file's joints as a :class:`Take`, read by the add-on's parser."""
    return Take(bvh_parse.read_bvh(path))


def resampled(take, factor):
    """The take at ``factor`` times its frame rate (rotations blended along the
    short arc, positions linearly): frame k of the original is frame k * factor."""
    count = len(take.local)
    x = np.arange((count - 1) * factor + 1) / float(factor)
    out = object.__new__(Take)
    out.__dict__.update(take.__dict__)
    out.local = rs.resample(take.local, x, rotations=True)
    out.root_pos = rs.resample(take.root_pos, x)
    local = tf.quat_to_matrix(out.local)
    out.rot = np.empty_like(local)
    out.pos = np.empty(local.shape[:2] + (3,))
    for j, p in enumerate(take.parents):
        if p < 0:
            out.rot[:, j], out.pos[:, j] = local[:, j], out.root_pos
        else:
            out.rot[:, j] = out.rot[:, p] @ local[:, j]
            out.pos[:, j] = out.pos[:, p] + out.rot[:, p] @ take.offsets[j]
    out.frame_time = take.frame_time / factor
    return out


def _parents_of(rows):
    index = {r[0]: j for j, r in enumerate(rows)}
    return [index[r[1]] if r[1] is not None else -1 for r in rows], index


def _end_sites(take, rows, parents, scale_of=lambda j: 1.0):
    """The sample's End Sites on the joints that take over its leaf joints."""
    ends = {}
    has_child = set(parents)
    for j, row in enumerate(rows):
        src = row[2]
        if j in has_child or src is None:
            continue
        e = take.end_sites[take.index[src]]
        ends[j] = tuple(np.asarray(e if e is not None else (0.0, 5.0, 0.0)) * scale_of(j))
    return ends


# ---------------------------------------------------------------------------
# The conventions


def cmu_take(take, path):
    """The CMU-style take (see the module docstring); ``take`` at 60 fps."""
    take = resampled(take, 2)
    rows = _expand(_CMU, _CMU_SIDE)
    parents, index = _parents_of(rows)
    J, F = len(rows), len(take.rot)
    offsets = np.zeros((J, 3))
    rot = np.empty((F, J, 3, 3))
    for j, (name, _parent, src, scale) in enumerate(rows):
        rot[:, j] = take.rot_of(src)
        if scale is None or scale == "zero":
            continue
        side = src[:-len("Wrist")] if src.endswith("Wrist") else ""
        if scale == "finger":
            offsets[j] = take.end_sites[take.index[src]] * (0.5 * 1.05)
        elif scale == "thumb":
            offsets[j] = np.array([4.0 if side == "Left" else -4.0, 0.0, 3.0])
        else:
            offsets[j] = take.offsets[take.index[src]] * scale
    pos = np.empty((F, J, 3))
    for j, p in enumerate(parents):
        pos[:, j] = take.root_pos * LEG_SCALE if p < 0 else pos[:, p] + rot[:, p] @ offsets[j]
    ends = {j: tuple(offsets[j] * 0.6) for j in range(J) if j not in set(parents)}
    ends[index["Head"]] = tuple(take.end_sites[take.index["Head"]] * 0.92)
    channels = [POS + ZYX if p < 0 else ZYX for p in parents]
    write_skeleton(path, [r[0] for r in rows], parents, offsets, channels, rot, pos, take.frame_time,
                   unit=0.01 / CMU_UNIT, end_sites=ends)
    return [path]


def _along_x(v):
    """A rotation taking +X to the direction of ``v``, turning the least."""
    v = np.asarray(v, dtype=np.float64) / np.linalg.norm(v)
    x = np.array([1.0, 0.0, 0.0])
    axis = np.cross(x, v)
    s, c = np.linalg.norm(axis), x @ v
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([-1.0, -1.0, 1.0])
    return tf.quat_to_matrix(tf.quat_from_axis_angle(axis / s, np.arctan2(s, c)))


def _primary_direction(take, src):
    """Where the sample joint ``src``'s bone points at rest: to its first child
    (the spine for the hips), else its End Site."""
    j = take.index[src]
    kids = [c for c, p in enumerate(take.parents) if p == j]
    v = take.offsets[kids[0]] if kids else take.end_sites[j]
    return v if v is not None and np.linalg.norm(v) > 1e-9 else np.array([1.0, 0.0, 0.0])


def bandai_takes(take, folder, clip_frames=90, every=2, rest="x", six_channels=True):
    """The Bandai-Namco-style clips (see the module docstring); ``take`` at 60 fps.
    Each clip is ``clip_frames`` frames of the written rate; the last takes the rest.
    Variants, to tell which of the convention's traits a result depends on:
    ``every`` keeps every n-th frame (2: 30 fps, 1: the sample's 60); ``rest``
    "x" lays every bone along +X, "sample" keeps the sample's rest (a T-pose)
    and its joint axes; ``six_channels`` False gives joints below the hips
    rotations only."""
    rows = _expand(_BANDAI, _BANDAI_SIDE)
    parents, _ = _parents_of(rows)
    J = len(rows)
    keep = slice(0, None, every)
    F = len(take.rot[keep])
    rot = np.empty((F, J, 3, 3))
    pos = np.empty((F, J, 3))
    offsets = np.zeros((J, 3))
    for j, (_name, p, src) in enumerate(rows):
        if src is None:
            rot[:, j], pos[:, j] = np.eye(3), 0.0
            continue
        pos[:, j] = take.pos_of(src)[keep]
        if rest == "sample":
            rot[:, j] = take.rot_of(src)[keep]
            if p is not None and rows[parents[j]][2] is not None:
                offsets[j] = take.offsets[take.index[src]]
            continue
        # Each joint's own axes: +X along its bone, so every OFFSET lies on +X.
        rot[:, j] = take.rot_of(src)[keep] @ _along_x(_primary_direction(take, src))
        if p is not None and rows[parents[j]][2] is not None:
            offsets[j, 0] = np.linalg.norm(take.offsets[take.index[src]])
    ends = _end_sites(take, rows, parents)
    if rest != "sample":
        ends = {j: (np.linalg.norm(e), 0.0, 0.0) for j, e in ends.items()}
    channels = [POS + ZYX if six_channels or p < 0 or rows[p][2] is None else ZYX for p in parents]
    names = [r[0] for r in rows]
    os.makedirs(folder, exist_ok=True)
    starts = list(range(0, max(F - clip_frames, 0) + 1, clip_frames))
    paths = []
    for k, f0 in enumerate(starts):
        f1 = starts[k + 1] if k + 1 < len(starts) else F
        path = os.path.join(folder, "dataset-2_walk_normal_%03d.bvh" % (k + 1))
        write_skeleton(path, names, parents, offsets, channels, rot[f0:f1], pos[f0:f1], every * take.frame_time,
                       end_sites=ends)
        paths.append(path)
    return paths


def hips_forward(take):
    """The hips' forward in their own axes (the file's): across the two hip
    joints, the way the toes point."""
    left, right = (take.offsets[take.index[n]] for n in ("LeftHip", "RightHip"))
    fwd = np.cross(left - right, [0.0, 1.0, 0.0])
    toe = take.offsets[take.index["LeftToe"]] + take.offsets[take.index["RightToe"]]
    return fwd / np.linalg.norm(fwd) * (1.0 if fwd @ toe >= 0 else -1.0)


def ground_trajectory(take):
    """The ground root's world rotations (F, 3, 3) and positions (F, 3): the
    hips projected to the ground (Y = 0), turned about Y with the hips' facing."""
    facing = take.rot_of("Hips") @ hips_forward(take)
    yaw = np.unwrap(np.arctan2(facing[:, 0], facing[:, 2]))
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.zeros((len(yaw), 3, 3))
    rot[:, 0, 0], rot[:, 0, 2], rot[:, 1, 1], rot[:, 2, 0], rot[:, 2, 2] = c, s, 1.0, -s, c
    pos = take.pos_of("Hips").copy()
    pos[:, 1] = 0.0
    return rot, pos


def unreal_take(take, path):
    """The Unreal-style take (see the module docstring)."""
    rows = _expand(_UNREAL, _UNREAL_SIDE)
    parents, index = _parents_of(rows)
    J, F = len(rows), len(take.rot)
    rot = np.empty((F, J, 3, 3))
    pos = np.empty((F, J, 3))
    offsets = np.zeros((J, 3))
    rot[:, 0], pos[:, 0] = ground_trajectory(take)
    for j, (_name, _p, src) in enumerate(rows[1:], start=1):
        rot[:, j], pos[:, j] = take.rot_of(src), take.pos_of(src)
        offsets[j] = take.offsets[take.index[src]]
    offsets[index["pelvis"]] = (0.0, float(np.median(take.pos_of("Hips")[:, 1])), 0.0)
    channels = [POS + ZXY if p < 0 or rows[p][2] is None else ZXY for p in parents]
    write_skeleton(path, [r[0] for r in rows], parents, offsets, channels, rot, pos, take.frame_time,
                   end_sites=_end_sites(take, rows, parents))
    return [path]


def write_all(out, which=("cmu", "bandai", "unreal"), sample=SAMPLE):
    """Write the chosen conventions under ``out``; {convention: [paths]}."""
    take = read_take(sample)
    os.makedirs(out, exist_ok=True)
    made = {}
    if "cmu" in which:
        made["cmu"] = cmu_take(take, os.path.join(out, "cmu_131_like.bvh"))
    if "bandai" in which:
        made["bandai"] = bandai_takes(take, os.path.join(out, "bandai"))
    if "unreal" in which:
        made["unreal"] = unreal_take(take, os.path.join(out, "unreal_like.bvh"))
    if "thin" in which:
        from .thin_takes import thin_takes

        made["thin"] = thin_takes(take, os.path.join(out, "thin"))
    return made


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to write into (made if missing)")
    ap.add_argument("--which", nargs="+", default=["cmu", "bandai", "unreal"], choices=["cmu", "bandai", "unreal", "thin"])
    args = ap.parse_args(argv)
    for name, paths in write_all(args.out, args.which).items():
        print("%s: %d file(s), first %s" % (name, len(paths), paths[0]))


if __name__ == "__main__":
    main()
