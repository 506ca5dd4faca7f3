"""The motion-matching feature database: one row of numbers per frame of every clip.

A row describes the pose (chosen bone positions and velocities) and where the
character will be and which way it will face a moment later (the trajectory), all
seen from the frame's own virtual root. Search compares a query against these rows,
so every column is normalised to comparable units and then weighted.

Root space of frame i: ``p_local = R_i^T (p - root_pos_i)``, where ``R_i`` is the
root's 3x3 yaw rotation; directions and velocities are only rotated. At yaw 0 the
character faces -Y, so a character walking forward sees its future positions at
negative local y.

Layout of a row: groups in the order of the spec; inside a bone group, bones in order
and x, y, z for each; inside a trajectory group, times in order and x, y for each.
:func:`feature_names` and :func:`group_slices` spell it out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..skeleton.contacts import central_velocity, foot_contacts
from ..errors import MotionMatchingError
from ..maths.transforms import quat_to_matrix

__all__ = [
    "FeatureError",
    "KINDS",
    "BONE_KINDS",
    "TRAJECTORY_KINDS",
    "FeatureGroup",
    "FeatureSpec",
    "default_spec",
    "Clip",
    "frame_offset",
    "feature_names",
    "group_slices",
    "feature_weights",
    "clip_features",
    "clip_valid_rows",
    "Normalization",
    "compute_normalization",
    "normalize",
    "denormalize",
    "Database",
    "build_database",
    "query_features",
    "reweight",
]

BONE_KINDS = ("bone_position", "bone_velocity")
TRAJECTORY_KINDS = ("trajectory_position", "trajectory_direction")
KINDS = BONE_KINDS + TRAJECTORY_KINDS

SPEC_VERSION = 1
DATABASE_FORMAT_VERSION = 1

# A group whose mean standard deviation is below this is treated as constant
# (metres, metres per second, or unit-vector components): its scale becomes 1.0.
MIN_GROUP_SCALE = 1e-6


class FeatureError(MotionMatchingError):
    """The feature set, a clip or a stored database cannot be used."""


def _is_number(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


# --------------------------------------------------------------------------- the spec


@dataclass
class FeatureGroup:
    """One block of columns sharing a normalisation scale and a weight.

    ``bones`` is used by the bone kinds, ``times_s`` by the trajectory kinds (seconds
    from the current frame, negative for the past); the other list is ignored.
    """

    name: str
    kind: str
    bones: list = field(default_factory=list)
    times_s: list = field(default_factory=list)
    weight: float = 1.0

    @property
    def is_trajectory(self):
        return self.kind in TRAJECTORY_KINDS

    @property
    def width(self):
        """Number of columns: 3 per bone, 2 per trajectory time."""
        return 2 * len(self.times_s) if self.is_trajectory else 3 * len(self.bones)

    def to_dict(self):
        return {
            "name": self.name,
            "kind": self.kind,
            "bones": list(self.bones),
            "times_s": [float(t) for t in self.times_s],
            "weight": float(self.weight),
        }

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict):
            raise FeatureError(f"A feature group must be a dictionary, not {type(d).__name__}.")
        if "name" not in d or "kind" not in d:
            raise FeatureError("A feature group needs at least a name and a kind.")
        bones = d.get("bones", [])
        times = d.get("times_s", [])
        if not isinstance(bones, (list, tuple)) or not isinstance(times, (list, tuple)):
            raise FeatureError(
                f'Feature group "{d["name"]}" must list its bones and times as lists.')
        weight = d.get("weight", 1.0)
        if not _is_number(weight):
            raise FeatureError(f'Feature group "{d["name"]}" has a weight that is not a number.')
        for t in times:
            if not _is_number(t):
                raise FeatureError(
                    f'Feature group "{d["name"]}" has a time that is not a number: {t!r}.')
        return cls(name=d["name"], kind=d["kind"], bones=list(bones),
                   times_s=[float(t) for t in times], weight=float(weight))


@dataclass
class FeatureSpec:
    """Which features a database row holds, and how much each one counts.

    ``responsiveness`` multiplies the weights of trajectory groups and ``quality``
    those of bone (pose) groups.

    ``end_margin_s``: rows closer than this to the end of their clip are not offered
    as search results. ``None`` (the default) means the largest positive trajectory
    time, e.g. 1 s: any row whose 1 s future would be clamped to the last frame has a
    trajectory that stops short, which search would then wrongly believe. A smaller
    margin offers more frames at the cost of such rows. ``start_margin_s`` is the same
    for past samples (default: the largest negative time, as a positive number).
    """

    groups: list
    responsiveness: float = 1.0
    quality: float = 1.0
    end_margin_s: float | None = None
    start_margin_s: float | None = None

    # ---- derived numbers

    @property
    def dim(self):
        return sum(g.width for g in self.groups)

    def effective_end_margin_s(self):
        if self.end_margin_s is not None:
            return float(self.end_margin_s)
        times = [t for g in self.groups if g.is_trajectory for t in g.times_s]
        return max([0.0] + [float(t) for t in times])

    def effective_start_margin_s(self):
        if self.start_margin_s is not None:
            return float(self.start_margin_s)
        times = [t for g in self.groups if g.is_trajectory for t in g.times_s]
        return max([0.0] + [-float(t) for t in times])

    def bones(self):
        """Every bone the spec reads, in first-use order, without repeats."""
        seen = {}
        for g in self.groups:
            if not g.is_trajectory:
                for b in g.bones:
                    seen.setdefault(b, None)
        return list(seen)

    # ---- checks

    def validate(self, joint_names=None, clip_name=None):
        """Raise :class:`FeatureError` with a plain sentence if the spec is unusable.

        With ``joint_names``, also check that every bone the spec reads exists
        (``clip_name`` makes the message name the clip). Returns self.
        """
        if not isinstance(self.groups, (list, tuple)) or len(self.groups) == 0:
            raise FeatureError("The feature set has no groups, so a database row would be empty.")
        for label, value in (("responsiveness", self.responsiveness), ("quality", self.quality)):
            if not _is_number(value) or not math.isfinite(value) or value < 0:
                raise FeatureError(
                    f"The {label} must be a finite number of 0 or more, not {value!r}.")
        for label, value in (("end margin", self.end_margin_s),
                             ("start margin", self.start_margin_s)):
            if value is not None and (not _is_number(value) or not math.isfinite(value)
                                      or value < 0):
                raise FeatureError(
                    f"The {label} must be a number of seconds of 0 or more, not {value!r}.")
        names = set()
        for g in self.groups:
            if not isinstance(g, FeatureGroup):
                raise FeatureError("Every entry of the feature set must be a FeatureGroup.")
            if not isinstance(g.name, str) or not g.name.strip():
                raise FeatureError("Every feature group needs a name.")
            if g.name in names:
                raise FeatureError(
                    f'Two feature groups are both called "{g.name}"; give each group its own name.')
            names.add(g.name)
            if g.kind not in KINDS:
                raise FeatureError(
                    f'Feature group "{g.name}" has unknown kind "{g.kind}"; '
                    f"expected one of: {', '.join(KINDS)}.")
            if not _is_number(g.weight) or not math.isfinite(g.weight):
                raise FeatureError(
                    f'Feature group "{g.name}" has weight {g.weight!r}; it must be a finite number.')
            if g.weight < 0:
                raise FeatureError(
                    f'Feature group "{g.name}" has a negative weight ({g.weight}); '
                    "weights must be 0 or more.")
            if g.is_trajectory:
                if len(g.times_s) == 0:
                    raise FeatureError(
                        f'Trajectory feature group "{g.name}" has no sample times; '
                        "add at least one time in seconds.")
                for t in g.times_s:
                    if not _is_number(t) or not math.isfinite(t):
                        raise FeatureError(
                            f'Feature group "{g.name}" has sample time {t!r}; '
                            "times must be finite numbers of seconds.")
                if len(set(float(t) for t in g.times_s)) != len(g.times_s):
                    raise FeatureError(
                        f'Feature group "{g.name}" lists the same sample time twice.')
            else:
                if len(g.bones) == 0:
                    raise FeatureError(
                        f'Bone feature group "{g.name}" has no bones; add at least one bone.')
                for b in g.bones:
                    if not isinstance(b, str) or not b:
                        raise FeatureError(
                            f'Feature group "{g.name}" has a bone without a name ({b!r}).')
                if len(set(g.bones)) != len(g.bones):
                    raise FeatureError(
                        f'Feature group "{g.name}" lists the same bone twice.')
                if joint_names is not None:
                    known = set(joint_names)
                    for b in g.bones:
                        if b not in known:
                            where = f'Clip "{clip_name}"' if clip_name is not None else "The clip"
                            raise FeatureError(
                                f'{where} has no bone "{b}", which feature group '
                                f'"{g.name}" needs.')
        return self

    # ---- storage

    def to_dict(self):
        return {
            "version": SPEC_VERSION,
            "groups": [g.to_dict() for g in self.groups],
            "responsiveness": float(self.responsiveness),
            "quality": float(self.quality),
            "end_margin_s": None if self.end_margin_s is None else float(self.end_margin_s),
            "start_margin_s": None if self.start_margin_s is None else float(self.start_margin_s),
        }

    @classmethod
    def from_dict(cls, d):
        """Inverse of :meth:`to_dict`; the result is validated."""
        if not isinstance(d, dict):
            raise FeatureError(f"A feature set must be a dictionary, not {type(d).__name__}.")
        version = d.get("version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise FeatureError(
                f"This feature set was saved in format {version}; this version of the "
                f"add-on reads format {SPEC_VERSION}.")
        groups = d.get("groups")
        if not isinstance(groups, (list, tuple)):
            raise FeatureError("The stored feature set has no list of groups.")
        spec = cls(
            groups=[FeatureGroup.from_dict(g) for g in groups],
            responsiveness=d.get("responsiveness", 1.0),
            quality=d.get("quality", 1.0),
            end_margin_s=d.get("end_margin_s"),
            start_margin_s=d.get("start_margin_s"),
        )
        return spec.validate()

    def to_json(self):
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        try:
            d = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise FeatureError(f"The stored feature set is not readable JSON ({exc}).") from None
        return cls.from_dict(d)


def default_spec(left_foot, right_foot, hips):
    """The 27-number default: foot positions and velocities, hips velocity, and the
    root's position and facing at +1/3, +2/3 and +1 s. Every weight is 1.0."""
    times = [1.0 / 3.0, 2.0 / 3.0, 1.0]
    return FeatureSpec(groups=[
        FeatureGroup("foot_positions", "bone_position", bones=[left_foot, right_foot]),
        FeatureGroup("foot_velocities", "bone_velocity", bones=[left_foot, right_foot]),
        FeatureGroup("hips_velocity", "bone_velocity", bones=[hips]),
        FeatureGroup("trajectory_positions", "trajectory_position", times_s=list(times)),
        FeatureGroup("trajectory_directions", "trajectory_direction", times_s=list(times)),
    ])


def feature_names(spec):
    """One label per column, e.g. ``LeftFoot.pos.x`` or ``traj.pos+0.33s.x``."""
    names = []
    for g in spec.groups:
        if g.kind == "bone_position":
            names += [f"{b}.pos.{c}" for b in g.bones for c in "xyz"]
        elif g.kind == "bone_velocity":
            names += [f"{b}.vel.{c}" for b in g.bones for c in "xyz"]
        else:
            tag = "pos" if g.kind == "trajectory_position" else "dir"
            names += [f"traj.{tag}{float(t):+.2f}s.{c}" for t in g.times_s for c in "xy"]
    return names


def group_slices(spec):
    """``{group name: slice of its columns}`` in spec order."""
    out, start = {}, 0
    for g in spec.groups:
        out[g.name] = slice(start, start + g.width)
        start += g.width
    return out


def feature_weights(spec):
    """Per-column multiplier (D,): group weight times responsiveness (trajectory
    groups) or quality (bone groups)."""
    w = np.empty(spec.dim)
    for g, sl in zip(spec.groups, group_slices(spec).values()):
        w[sl] = float(g.weight) * float(spec.responsiveness if g.is_trajectory else spec.quality)
    return w


# ----------------------------------------------------------------------------- clips


@dataclass
class Clip:
    """One action sampled on every frame.

    ``positions`` (F, J, 3) world joint positions (bone heads) in metres;
    ``root_pos`` (F, 3) and ``root_rot`` (F, 4, w x y z, yaw only) the virtual root;
    ``excluded`` (F,) True for frames that must not be offered nor counted in the
    normalisation (they stay in the database so playback can run through them).
    """

    name: str
    fps: float
    joint_names: list
    positions: np.ndarray
    root_pos: np.ndarray
    root_rot: np.ndarray
    excluded: np.ndarray | None = None

    @property
    def num_frames(self):
        return int(np.shape(self.positions)[0])


def frame_offset(t, fps):
    """Seconds to a whole number of frames, rounding halves away from zero (so +0.5
    and -0.5 frame offsets are symmetric)."""
    x = float(t) * float(fps)
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def _check_clip(spec, clip, extra_joints=()):
    """Raise FeatureError unless ``clip`` has the shapes, values and bones needed."""
    name = clip.name
    fps = clip.fps
    if not _is_number(fps) or not math.isfinite(fps) or fps <= 0:
        raise FeatureError(f'Clip "{name}" has frame rate {fps!r}; it must be a positive number.')
    pos = np.asarray(clip.positions)
    if pos.ndim != 3 or pos.shape[2] != 3:
        raise FeatureError(
            f'Clip "{name}" has joint positions of shape {pos.shape}; expected (frames, joints, 3).')
    n_frames, n_joints = pos.shape[:2]
    if n_joints != len(clip.joint_names):
        raise FeatureError(
            f'Clip "{name}" has {n_joints} joints in its positions but '
            f"{len(clip.joint_names)} joint names.")
    if n_frames < 2:
        raise FeatureError(
            f'Clip "{name}" has {n_frames} frame(s); a clip needs at least 2 frames '
            "to have velocities.")
    root_pos = np.asarray(clip.root_pos)
    root_rot = np.asarray(clip.root_rot)
    if root_pos.shape != (n_frames, 3):
        raise FeatureError(
            f'Clip "{name}" has root positions of shape {root_pos.shape}; '
            f"expected ({n_frames}, 3), one per frame.")
    if root_rot.shape != (n_frames, 4):
        raise FeatureError(
            f'Clip "{name}" has root rotations of shape {root_rot.shape}; '
            f"expected ({n_frames}, 4) quaternions, one per frame.")
    finite = np.isfinite(pos).all(axis=2)
    if not finite.all():
        f, j = np.argwhere(~finite)[0]
        raise FeatureError(
            f'Clip "{name}" has a NaN or infinite position for bone '
            f'"{clip.joint_names[j]}" on frame {f}.')
    for label, arr in (("root position", root_pos), ("root rotation", root_rot)):
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            raise FeatureError(
                f'Clip "{name}" has a NaN or infinite {label} on frame {int(np.argmax(bad))}.')
    tiny = np.linalg.norm(root_rot, axis=1) < 1e-8
    if tiny.any():
        raise FeatureError(
            f'Clip "{name}" has a zero root rotation quaternion on frame {int(np.argmax(tiny))}.')
    if clip.excluded is not None and np.shape(clip.excluded) != (n_frames,):
        raise FeatureError(
            f'Clip "{name}" has an exclusion mask of shape {np.shape(clip.excluded)}; '
            f"expected ({n_frames},), one flag per frame.")
    spec.validate(joint_names=clip.joint_names, clip_name=name)
    known = set(clip.joint_names)
    for j in extra_joints:
        if j not in known:
            raise FeatureError(f'Clip "{name}" has no bone "{j}", which foot contacts need.')


def _joint_index(clip):
    index = {}
    for i, n in enumerate(clip.joint_names):
        index.setdefault(n, i)  # the first of repeated names wins
    return index


def clip_features(spec, clip):
    """Raw (unnormalised) features of every frame of ``clip``: (F, D) float64.

    - bone position: ``R_i^T (p - root_pos_i)``;
    - bone velocity: world velocity by central differences (one-sided at the ends)
      times fps, then rotated by ``R_i^T`` (no translation);
    - trajectory position at t: the root of frame ``clamp(i + round(t * fps))`` in
      the root space of frame i, x and y;
    - trajectory direction at t: that root's facing ``R_j (0, -1, 0)`` rotated into
      the root space of frame i, x and y.
    """
    _check_clip(spec, clip)
    return _clip_features(spec, clip)


def _clip_features(spec, clip):
    pos = np.asarray(clip.positions, dtype=np.float64)
    root_pos = np.asarray(clip.root_pos, dtype=np.float64)
    n = pos.shape[0]
    rot = quat_to_matrix(clip.root_rot)  # (F, 3, 3), normalises the quaternions
    # Rows times R equal (R^T p)^T: rotates row vectors into root space per frame.
    index = _joint_index(clip)
    frames = np.arange(n)
    facing = -rot[:, :, 1]  # R @ (0, -1, 0)
    cols = []
    for g in spec.groups:
        if g.kind in BONE_KINDS:
            p = pos[:, [index[b] for b in g.bones]]  # (F, B, 3)
            if g.kind == "bone_position":
                v = p - root_pos[:, None, :]
            else:
                v = central_velocity(p, clip.fps)
            cols.append(np.matmul(v, rot).reshape(n, -1))
        else:
            offsets = np.array([frame_offset(t, clip.fps) for t in g.times_s])
            future = np.clip(frames[:, None] + offsets[None, :], 0, n - 1)  # (F, T)
            if g.kind == "trajectory_position":
                v = root_pos[future] - root_pos[:, None, :]
            else:
                v = facing[future]
            cols.append(np.matmul(v, rot)[:, :, :2].reshape(n, -1))
    return np.concatenate(cols, axis=1)


def clip_valid_rows(spec, n_frames, fps):
    """(F,) True for rows that may be offered as search results.

    Row i is valid when ``i + round(end_margin * fps) <= F - 1`` and
    ``i - round(start_margin * fps) >= 0``, i.e. none of its samples (with the default
    margins) had to be clamped to the clip's ends. At 60 fps with 1 s ahead this
    removes the last 60 frames.
    """
    end = frame_offset(spec.effective_end_margin_s(), fps)
    start = frame_offset(spec.effective_start_margin_s(), fps)
    i = np.arange(int(n_frames))
    return (i + end <= n_frames - 1) & (i - start >= 0)


# --------------------------------------------------------------------- normalisation


@dataclass
class Normalization:
    """Per-column mean and scale; the scale is the same number across a group."""

    mean: np.ndarray
    scale: np.ndarray


def compute_normalization(raws, masks, spec):
    """Mean and per-group scale over the rows where ``masks`` is True.

    ``raws`` is a list of (F_k, D) arrays (or one (N, D) array) and ``masks`` a
    matching list of (F_k,) booleans, or None for all rows. Each group's scale is
    the mean of its columns' standard deviations (population, ddof 0), so the
    columns keep their relative sizes (a walk's forward spread stays larger than its
    sideways one). A group that does not vary (scale below ``MIN_GROUP_SCALE``) gets
    scale 1.0 instead of a division by zero; its columns then only lose their mean.
    """
    if isinstance(raws, np.ndarray):
        raws = [raws]
        masks = None if masks is None else [masks]
    if masks is None:
        masks = [None] * len(raws)
    if len(raws) == 0 or len(masks) != len(raws):
        raise FeatureError("The normalisation needs one mask per clip and at least one clip.")
    parts = []
    for r, m in zip(raws, masks):
        r = np.asarray(r, dtype=np.float64)
        if r.ndim != 2 or r.shape[1] != spec.dim:
            raise FeatureError(
                f"A feature table has shape {r.shape}; the feature set has {spec.dim} columns.")
        parts.append(r if m is None else r[np.asarray(m, dtype=bool)])
    x = np.concatenate(parts, axis=0)
    if x.shape[0] == 0:
        raise FeatureError("No frame is left to normalise the features with: every frame is excluded.")
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    scale = np.empty(spec.dim)
    for sl in group_slices(spec).values():
        s = float(std[sl].mean())
        scale[sl] = s if s >= MIN_GROUP_SCALE else 1.0
    return Normalization(mean=mean, scale=scale)


def normalize(raw, norm, weights):
    """``(raw - mean) / scale * weights`` column by column; raw (..., D), float64."""
    raw = np.asarray(raw, dtype=np.float64)
    return (raw - norm.mean) / norm.scale * weights


def denormalize(z, norm, weights):
    """Inverse of :func:`normalize`. Columns of weight 0 carry no information; they
    come back as the mean."""
    z = np.asarray(z, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    safe = np.where(w > 0, w, 1.0)
    return np.where(w > 0, z / safe * norm.scale + norm.mean, norm.mean)


# -------------------------------------------------------------------------- database


@dataclass
class Database:
    """Every frame of every clip as one row, clips one after another.

    ``features`` (N, D) float32 normalised and weighted (search compares these);
    ``raw`` (N, D) float64 unnormalised; ``clip_index`` / ``frame_index`` (N,) where
    each row comes from (frame 0-based in its clip); ``valid`` (N,) rows that may be
    offered (away from clip ends and not excluded); ``excluded`` (N,) the clips'
    exclusion flags; ``contacts`` (N, 2) left/right toe contacts or None;
    ``clip_offsets`` (C + 1,) first row of each clip, then N.
    """

    spec: FeatureSpec
    norm: Normalization
    features: np.ndarray
    raw: np.ndarray
    clip_index: np.ndarray
    frame_index: np.ndarray
    valid: np.ndarray
    excluded: np.ndarray
    clip_names: list
    clip_fps: np.ndarray
    clip_offsets: np.ndarray
    contacts: np.ndarray | None = None
    contact_joints: tuple | None = None

    @property
    def num_rows(self):
        return int(self.features.shape[0])

    @property
    def dim(self):
        return int(self.features.shape[1])

    def row(self, clip, frame):
        """Row index of ``frame`` (0-based) of clip number ``clip``."""
        return int(self.clip_offsets[clip]) + int(frame)

    def clip_rows(self, clip):
        return slice(int(self.clip_offsets[clip]), int(self.clip_offsets[clip + 1]))

    def to_arrays(self):
        """Plain numpy arrays (no objects) for ``np.savez``; the spec is a JSON string
        in a 0-d unicode array. Read back with ``np.load(..., allow_pickle=False)``
        and :meth:`from_arrays`."""
        out = {
            "format_version": np.array(DATABASE_FORMAT_VERSION, dtype=np.int64),
            "spec_json": np.array(self.spec.to_json()),
            "features": np.asarray(self.features, dtype=np.float32),
            "raw": np.asarray(self.raw, dtype=np.float64),
            "norm_mean": np.asarray(self.norm.mean, dtype=np.float64),
            "norm_scale": np.asarray(self.norm.scale, dtype=np.float64),
            "clip_index": np.asarray(self.clip_index, dtype=np.int32),
            "frame_index": np.asarray(self.frame_index, dtype=np.int32),
            "valid": np.asarray(self.valid, dtype=bool),
            "excluded": np.asarray(self.excluded, dtype=bool),
            "clip_names": np.array([str(n) for n in self.clip_names], dtype=np.str_),
            "clip_fps": np.asarray(self.clip_fps, dtype=np.float64),
            "clip_offsets": np.asarray(self.clip_offsets, dtype=np.int64),
        }
        if self.contacts is not None:
            out["contacts"] = np.asarray(self.contacts, dtype=bool)
            out["contact_joints"] = np.array([str(j) for j in self.contact_joints], dtype=np.str_)
        return out

    @classmethod
    def from_arrays(cls, arrays):
        """Inverse of :meth:`to_arrays`; accepts a dict or an opened ``.npz``.

        The arrays are taken as they are: arrays from a file are checked first with
        :func:`core.database.checks.database_from_arrays` (which then calls this)."""
        spec = FeatureSpec.from_json(str(np.asarray(arrays["spec_json"])[()]))
        keys = set(arrays.keys())
        db = cls(
            spec=spec,
            norm=Normalization(mean=np.asarray(arrays["norm_mean"], dtype=np.float64),
                               scale=np.asarray(arrays["norm_scale"], dtype=np.float64)),
            features=np.asarray(arrays["features"], dtype=np.float32),
            raw=np.asarray(arrays["raw"], dtype=np.float64),
            clip_index=np.asarray(arrays["clip_index"], dtype=np.int32),
            frame_index=np.asarray(arrays["frame_index"], dtype=np.int32),
            valid=np.asarray(arrays["valid"], dtype=bool),
            excluded=np.asarray(arrays["excluded"], dtype=bool),
            clip_names=[str(s) for s in np.asarray(arrays["clip_names"]).reshape(-1)],
            clip_fps=np.asarray(arrays["clip_fps"], dtype=np.float64),
            clip_offsets=np.asarray(arrays["clip_offsets"], dtype=np.int64),
        )
        if "contacts" in keys:
            db.contacts = np.asarray(arrays["contacts"], dtype=bool)
            db.contact_joints = tuple(str(s) for s in np.asarray(arrays["contact_joints"]).reshape(-1))
        return db


def build_database(spec, clips, contact_joints=None, contact_speed=0.15, contact_radius=6):
    """Features of all ``clips`` stacked into one normalised :class:`Database`.

    ``contact_joints`` is ``(left_toe, right_toe)`` or None (no contacts stored).
    Normalisation statistics use every row that is not excluded, including the rows
    near clip ends that are not offered (their clamped trajectories shift the
    statistics only slightly, and every genuine pose counts).
    """
    spec.validate()
    clips = list(clips)
    if not clips:
        raise FeatureError("There are no clips to build the database from; add at least one action.")
    extra = tuple(contact_joints) if contact_joints is not None else ()
    if contact_joints is not None and len(extra) != 2:
        raise FeatureError("Foot contacts need exactly two joints: the left toe and the right toe.")
    raws, kept, valids, contacts = [], [], [], []
    for clip in clips:
        _check_clip(spec, clip, extra_joints=extra)
        raws.append(_clip_features(spec, clip))
        n = clip.num_frames
        excl = (np.zeros(n, dtype=bool) if clip.excluded is None
                else np.asarray(clip.excluded, dtype=bool))
        kept.append(~excl)
        valids.append(clip_valid_rows(spec, n, clip.fps) & ~excl)
        if contact_joints is not None:
            index = _joint_index(clip)
            toes = np.asarray(clip.positions, dtype=np.float64)[:, [index[j] for j in extra]]
            contacts.append(foot_contacts(toes, clip.fps, contact_speed, contact_radius))
    if not any(k.any() for k in kept):
        raise FeatureError(
            "Every frame of every clip is excluded, so the database would have nothing to offer.")
    valid = np.concatenate(valids)
    if not valid.any():
        raise FeatureError(
            "No frame can be offered as a search result: every clip is shorter than the "
            f"{spec.effective_end_margin_s() + spec.effective_start_margin_s():.2f} s the "
            "feature set needs around a frame, or the remaining frames are excluded.")
    norm = compute_normalization(raws, kept, spec)
    raw = np.concatenate(raws, axis=0)
    lengths = np.array([r.shape[0] for r in raws])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    clip_index = np.repeat(np.arange(len(clips), dtype=np.int32), lengths)
    frame_index = (np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)).astype(np.int32)
    return Database(
        spec=spec,
        norm=norm,
        features=normalize(raw, norm, feature_weights(spec)).astype(np.float32),
        raw=raw,
        clip_index=clip_index,
        frame_index=frame_index,
        valid=valid,
        excluded=~np.concatenate(kept),
        clip_names=[c.name for c in clips],
        clip_fps=np.array([float(c.fps) for c in clips]),
        clip_offsets=offsets,
        contacts=np.concatenate(contacts, axis=0) if contact_joints is not None else None,
        contact_joints=extra if contact_joints is not None else None,
    )


def query_features(db, raw_query):
    """Normalise a raw query (D,) (or (K, D)) exactly as the database rows were:
    same mean, scale and weights. Returns float64."""
    q = np.asarray(raw_query, dtype=np.float64)
    if q.shape[-1:] != (db.dim,) or q.ndim > 2:
        raise FeatureError(
            f"The query has shape {q.shape}; the database has {db.dim} feature columns.")
    if not np.isfinite(q).all():
        raise FeatureError("The query contains NaN or infinite values.")
    return normalize(q, db.norm, feature_weights(db.spec))


def reweight(db, spec):
    """A copy of ``db`` whose features use the weights, responsiveness and quality of
    ``spec``; the rest of ``spec`` must match the database's (same groups, kinds,
    bones, times and margins), otherwise the database must be rebuilt."""
    spec.validate()

    def layout(s):
        return ([(g.name, g.kind, list(g.bones) if not g.is_trajectory else [],
                  [float(t) for t in g.times_s] if g.is_trajectory else []) for g in s.groups],
                s.effective_end_margin_s(), s.effective_start_margin_s())

    if layout(spec) != layout(db.spec):
        raise FeatureError(
            "The feature set changed more than its weights (groups, bones, times or margins); "
            "rebuild the database.")
    features = normalize(db.raw, db.norm, feature_weights(spec)).astype(np.float32)
    return Database(**{**db.__dict__, "spec": spec, "features": features})
