"""The feature set: which numbers a database row holds and how much each counts.

A row describes the pose (chosen bone positions and velocities) and where the
character will be and which way it will face a moment later (the trajectory), all
seen from the frame's own virtual root.

Layout of a row: groups in the order of the spec; inside a bone group, bones in order
and x, y, z for each; inside a trajectory group, times in order and x, y for each.
:func:`feature_names` and :func:`group_slices` spell it out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "FeatureError",
    "KINDS",
    "BONE_KINDS",
    "TRAJECTORY_KINDS",
    "FeatureGroup",
    "FeatureSpec",
    "default_spec",
    "feature_names",
    "group_slices",
    "feature_weights",
    "is_number",
]

BONE_KINDS = ("bone_position", "bone_velocity")
TRAJECTORY_KINDS = ("trajectory_position", "trajectory_direction")
KINDS = BONE_KINDS + TRAJECTORY_KINDS

SPEC_VERSION = 1


class FeatureError(MotionMatchingError):
    """The feature set, a clip or a stored database cannot be used."""


def is_number(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


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
        if not is_number(weight):
            raise FeatureError(f'Feature group "{d["name"]}" has a weight that is not a number.')
        for t in times:
            if not is_number(t):
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
            if not is_number(value) or not math.isfinite(value) or value < 0:
                raise FeatureError(
                    f"The {label} must be a finite number of 0 or more, not {value!r}.")
        for label, value in (("end margin", self.end_margin_s),
                             ("start margin", self.start_margin_s)):
            if value is not None and (not is_number(value) or not math.isfinite(value)
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
            if not is_number(g.weight) or not math.isfinite(g.weight):
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
                    if not is_number(t) or not math.isfinite(t):
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

