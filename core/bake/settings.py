"""The bake's settings, one small dataclass per stage, and how interfaces show them.

:class:`BakeSettings` holds one dataclass per stage of the bake (search, look
ahead, root motion, strafe, time warp, foot lock, stride warp, legs, tag
query). A field made with :func:`knob` is a setting a user may turn: the
add-on makes a scene setting in the Bake panel, an option of the bake operator
and a flag of the ``bake`` command (cli/bake_args.py) from it (:func:`knobs`). The other
fields are core-only: the add-on never shows them, and only code (the
benchmark, tests) sets them, to bring back the bake's earlier behaviour.

Names: every knob has one name, unique over all stages, from end to end
(``Knob.name``: the Blender property, the operator option, the Python API and the
command-line flag ``--name-with-dashes``); a stage's switch is ``use_<stage>``,
as Blender names its switches. The
scene's property group and the operator are flat: one property per knob, in
stage order; :meth:`BakeSettings.of` builds the nested settings back from flat
names (knobs and core-only fields alike). A stage's enable switch
(``enabled``) is drawn in its sub-panel's header; knobs marked ``advanced``
are drawn in the stage's closed "Advanced" sub-panel.
"""

from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

import numpy as np

from ..errors import MotionMatchingError
from .time_warp import MAX_TIME_WARP

MAX_LOOK_AHEAD = 10.0   # s: the longest look-ahead a bake accepts


class BakeError(MotionMatchingError):
    """The bake cannot run with these inputs."""


@dataclass(frozen=True)
class Knob:
    """How an interface shows one bake setting. ``unit``: 'time' (seconds),
    'length' (metres), 'velocity' (m/s), 'angle' (radians), 'factor' or None;
    ``name``: its one name, the Blender property's too (default: the
    field's); ``advanced``: drawn in the stage's
    closed Advanced sub-panel. ``stage``, ``field``, ``type`` and ``default``
    are filled in by :func:`knobs`."""

    label: str
    description: str
    unit: str = None
    min: float = None
    max: float = None
    soft_max: float = None
    name: str = None
    advanced: bool = False
    stage: str = None
    field: str = None
    type: type = None
    default: object = None

    @property
    def is_switch(self):
        """Is this its stage's enable switch (drawn in the sub-panel's header)?"""
        return self.field == "enabled"


def knob(default, label, description, **shown):
    """A setting a user may turn: its default, and how an interface shows it (:class:`Knob`)."""
    return field(default=default, metadata={"knob": Knob(label, description, **shown)})


def _positive(stage, *names):
    for name in names:
        v = getattr(stage, name)
        if not (np.isfinite(v) and v > 0):
            raise BakeError("The bake setting %s must be a positive number (got %s)." % (name.replace("_", " "), v))


def _not_negative(stage, *names):
    for name in names:
        v = getattr(stage, name)
        if not (np.isfinite(v) and v >= 0):
            raise BakeError("The bake setting %s must be zero or a positive number (got %s)."
                            % (name.replace("_", " "), v))


@dataclass
class SearchSettings:
    """When the bake searches the database and what counts as a jump."""

    LABEL: ClassVar[str] = "Search"

    search_interval: float = knob(
        1.0 / 6.0, "Search Interval", "Seconds between searches: shorter follows the path sooner, longer plays longer "
        "pieces of mocap", unit="time", min=1.0 / 120.0, soft_max=1.0)
    keep_window: int = knob(
        20, "Keep Window", "Frames: a best match this close to the frame playing is not a jump", min=0, soft_max=60,
        advanced=True)
    jump_cost_margin: float = knob(
        0.0, "Jump Margin", "A jump must match better than playing on by this much; 0 always takes the best match",
        min=0.0, soft_max=5.0, advanced=True)
    force_search_angle: float = knob(
        np.radians(45.0), "Turn Search", "Search at once when the wanted direction turns this much", unit="angle",
        min=0.0, max=3.14159, advanced=True)
    force_search_speed: float = knob(
        1.0, "Speed Search", "Search at once when the wanted speed changes this much", unit="velocity", min=0.0,
        soft_max=5.0, advanced=True)
    inertialization_halflife: float = knob(
        0.1, "Blend Half-Life", "How fast a jump's pose difference fades: shorter is snappier, longer hides jumps",
        unit="time", min=0.01, soft_max=0.5, advanced=True)

    def check(self):
        _positive(self, "search_interval", "inertialization_halflife")
        if self.keep_window < 0:
            raise BakeError("The keep-playing window cannot be negative.")
        if not (np.isfinite(self.jump_cost_margin) and self.jump_cost_margin >= 0):
            raise BakeError("The jump margin must be zero or a positive number (got %s)." % self.jump_cost_margin)


@dataclass
class LookAheadSettings:
    """Searches that rank candidates by how their own motion follows the path ahead."""

    LABEL: ClassVar[str] = "Look Ahead"

    enabled: bool = knob(True, "Look Ahead", "Rank matches by how well they follow the path ahead; off: nearest "
                         "match only", name="use_look_ahead")
    seconds: float = knob(
        1.0, "Look-Ahead Time", "Seconds of the path each search looks ahead; 0: nearest match only", unit="time",
        min=0.0, max=MAX_LOOK_AHEAD, soft_max=3.0, name="look_ahead")

    @property
    def on(self):
        return bool(self.enabled) and self.seconds > 0

    def check(self):
        if not (np.isfinite(self.seconds) and 0 <= self.seconds <= MAX_LOOK_AHEAD):
            raise BakeError("The look-ahead must be from 0 to %g seconds (got %s)." % (MAX_LOOK_AHEAD, self.seconds))


@dataclass
class RootSettings:
    """How the root follows the controller's path."""

    LABEL: ClassVar[str] = "Path Following"

    sim_halflife: float = knob(
        0.25, "Path Half-Life", "Smoothing of the controller's path: shorter follows it tightly, longer asks for gentler "
        "motion", unit="time", min=0.01, soft_max=1.0)
    clamp_distance: float = knob(
        0.1, "Clamp", "The root never strays farther than this from the path", unit="length", min=0.001, soft_max=1.0)
    adjustment_halflife: float = knob(
        0.1, "Adjustment Half-Life", "How fast the root is pulled toward the path: faster tracks better, slower keeps "
        "the mocap's steps", unit="time", min=0.01, soft_max=1.0, advanced=True)
    adjustment_ratio: float = knob(
        0.5, "Adjustment Limit", "The pull toward the path is at most this share of the root's own motion",
        unit="factor", min=0.0, soft_max=2.0, advanced=True)
    clamp_angle: float = knob(
        np.radians(45.0), "Clamp Angle", "The character never faces farther than this from the wanted facing",
        unit="angle", min=0.0, max=3.14159, advanced=True)
    # Core-only. While the played data has a foot down, the pull toward the path
    # is scaled by this (1: no change).
    planted_adjustment: float = 1.0
    # Core-only. The root's heading, corrections included, turns no faster in a step than the
    # database's own root turns (its 99.9th percentile); False: corrections add to the data's turn.
    turn_like_data: bool = True

    def check(self):
        _positive(self, "sim_halflife", "adjustment_halflife", "clamp_distance")


@dataclass
class StrafeSettings:
    """Facing where the controller faces instead of where it goes."""

    LABEL: ClassVar[str] = "Strafe"

    enabled: bool = knob(False, "Strafe", "Face where the controller faces instead of where it goes",
                         name="use_strafe")
    strafe_warp: float = knob(
        np.radians(60.0), "Strafe Warp", "The legs and hips turn up to this toward the travel, the upper body "
        "keeps facing; 0: off", unit="angle", min=0.0, max=3.14159, advanced=True)
    # Core-only. The strafe warp's angle changes by at most this many radians a second (0: no limit).
    strafe_warp_rate: float = 2.0

    def check(self):
        _not_negative(self, "strafe_warp_rate")


@dataclass
class TimeWarpSettings:
    """Playing the data faster or slower to meet the speed the path asks for."""

    LABEL: ClassVar[str] = "Time Warp"

    enabled: bool = knob(True, "Time Warp", "Play the data faster or slower to meet the path's speed",
                         name="use_time_warp")
    time_warp: float = knob(
        0.2, "Time Warp Range", "How much faster or slower the data may play (0.2: rates 0.8 to 1.25); 0: off",
        unit="factor", min=0.0, max=MAX_TIME_WARP, advanced=True)

    @property
    def on(self):
        return bool(self.enabled) and self.time_warp > 0

    def check(self):
        if not (np.isfinite(self.time_warp) and 0 <= self.time_warp <= MAX_TIME_WARP):
            raise BakeError("The time warp must be from 0 to %g (got %s)." % (MAX_TIME_WARP, self.time_warp))


@dataclass
class FootLockSettings:
    """Pinning planted toes with two-joint leg IK."""

    LABEL: ClassVar[str] = "Foot Lock"

    enabled: bool = knob(True, "Foot Lock", "Pin planted toes with two-joint leg IK", name="use_foot_lock")
    lock_speed: float = knob(
        0.15, "Lock Speed", "A planted toe slower than this locks: higher locks more often", unit="velocity", min=0.0,
        soft_max=2.0, advanced=True)
    unlock_distance: float = knob(
        0.5, "Unlock Distance", "Release a pinned toe when the animation pulls it this far away", unit="length",
        min=0.01, soft_max=1.0, advanced=True)
    lock_blend_halflife: float = knob(
        0.1, "Release Half-Life", "How fast a released foot blends back to the animation", unit="time", min=0.01,
        soft_max=0.5, advanced=True)
    lock_on_data: bool = knob(
        False, "Lock by Data", "Lock a toe when the take says it is still, even if the bake drags it",
        advanced=True)
    # Core-only. A foot locks whenever the played data says it is in contact and holds until
    # the data lifts it; False: the lock also waits for a still toe.
    lock_on_contact: bool = True
    # Core-only. A foot also locks in the steps just before the data's contact where its toe is
    # already down (core.bake.legs.foot_lock.with_touchdowns); False: on the data's contact only.
    lock_on_touchdown: bool = True
    # Core-only. Where the data has neither foot down, a toe on the ground and slow (the slower of two)
    # locks as a stance foot (core.bake.legs.foot_lock.with_stance); False: the data's contacts only.
    lock_stance: bool = True
    # Core-only. A released foot blends back in the leg's joint rotations; False: by a toe offset.
    release_in_joints: bool = True

    def check(self):
        _positive(self, "lock_speed", "unlock_distance", "lock_blend_halflife")


@dataclass
class StrideWarpSettings:
    """Scaling each step's length to the root's travel, so planted feet stay planted."""

    LABEL: ClassVar[str] = "Stride Warp"

    enabled: bool = knob(True, "Stride Warp", "Scale step lengths by leg IK to the path's speed, so planted feet "
                         "stay planted", name="use_stride_warp")
    # Core-only. The step-length scale changes by at most this much a second (0: no limit).
    stride_warp_rate: float = 8.0

    def check(self):
        _not_negative(self, "stride_warp_rate")


@dataclass
class LegSettings:
    """The leg IK's limits and the toe floor (core-only: no knob)."""

    LABEL: ClassVar[str] = "Legs"

    # Leg IK never straightens a knee beyond this bend (or the animation's own, if straighter); 0: straight.
    # 15 degrees rounded to single precision, as the scene setting it once was held it (same keys).
    knee_min_bend: float = float(np.float32(np.radians(15.0)))
    # A toe that would dip under the floor is lifted by at most this speed (m/s); 0: at once by the depth.
    toe_floor_rate: float = 0.25

    def check(self):
        _not_negative(self, "knee_min_bend", "toe_floor_rate")


@dataclass
class TagQuerySettings:
    """Which frames a tag query offers to the search."""

    LABEL: ClassVar[str] = "Tag Query"

    tag_query_ahead: float = knob(
        1.0 / 3.0, "Tag Query Lead", "A frame is offered only if this many seconds of the query's frames follow it",
        unit="time", min=0.0, soft_max=1.0, advanced=True)
    # Core-only. Offer only frames whose whole trajectory look-ahead (1 s) lies in the query's frames.
    strict_tag_query: bool = False

    def check(self):
        _not_negative(self, "tag_query_ahead")


@dataclass
class BakeSettings:
    """Every setting of the bake, one dataclass per stage, with the defaults chosen on the path suite."""

    search: SearchSettings = field(default_factory=SearchSettings)
    look_ahead: LookAheadSettings = field(default_factory=LookAheadSettings)
    root: RootSettings = field(default_factory=RootSettings)
    strafe: StrafeSettings = field(default_factory=StrafeSettings)
    time_warp: TimeWarpSettings = field(default_factory=TimeWarpSettings)
    foot_lock: FootLockSettings = field(default_factory=FootLockSettings)
    stride_warp: StrideWarpSettings = field(default_factory=StrideWarpSettings)
    legs: LegSettings = field(default_factory=LegSettings)
    tags: TagQuerySettings = field(default_factory=TagQuerySettings)
    toe_floor: float = None      # m: toes are kept above this height (None: none; core.job.run fills in the take's)

    def check(self):
        for f in fields(self):
            if f.name in STAGES:
                getattr(self, f.name).check()

    @classmethod
    def of(cls, **flat):
        """Settings from flat names (:func:`flat_names`), the rest at their defaults."""
        return cls().replaced(**flat)

    def replaced(self, **flat):
        """A copy with the settings of these flat names changed."""
        where = flat_names()
        unknown = sorted(set(flat) - set(where) - {"toe_floor"})
        if unknown:
            raise BakeError("Unknown bake setting%s: %s." % ("s" if len(unknown) > 1 else "", ", ".join(unknown)))
        out = replace(self, toe_floor=flat.get("toe_floor", self.toe_floor))
        for stage in STAGES:
            changes = {where[n][1]: v for n, v in flat.items() if n in where and where[n][0] == stage}
            if changes:
                setattr(out, stage, replace(getattr(out, stage), **changes))
        return out

    def flat(self):
        """{flat name: value} of every stage setting."""
        return {n: getattr(getattr(self, stage), attr) for n, (stage, attr) in flat_names().items()}


STAGES = ("search", "look_ahead", "root", "strafe", "time_warp", "foot_lock", "stride_warp", "legs", "tags")


def stage_classes():
    """{stage: its dataclass}, in the bake's order."""
    return {f.name: f.default_factory for f in fields(BakeSettings) if f.name in STAGES}


def flat_names():
    """{flat name: (stage, field)} of every stage setting, knobs and core-only fields."""
    out = {}
    for stage, cls in stage_classes().items():
        for f in fields(cls):
            k = f.metadata.get("knob")
            out[(k.name if k is not None and k.name else f.name)] = (stage, f.name)
    return out


def knobs():
    """The settings a user may turn, in stage order: :class:`Knob` with name,
    stage, field, type and default filled in."""
    out = []
    for stage, cls in stage_classes().items():
        for f in fields(cls):
            k = f.metadata.get("knob")
            if k is not None:
                name = k.name or f.name
                out.append(replace(k, name=name, stage=stage, field=f.name, type=f.type, default=f.default))
    return tuple(out)


# The bake's scene inputs that are objects, not numbers (the Bake panel shows them
# above the stages): (where, label, property, default as shown, tooltip).
GROUND_TOOLTIP = "Mesh the character walks on: hills, ramps, stairs (empty: the flat floor at height 0)"
OBJECT_INPUTS = (("Bake", "Ground", "ground", "none (flat floor)", GROUND_TOOLTIP),)
