"""The bake as one call: a database and a controller path in, the frames to key
and the report out.

The caller samples the controller on the simulation steps (:func:`step_frames`)
and hands it over as a :class:`ControllerPath`, in the space the database
skeleton walks (:meth:`ControllerPath.from_world` takes world positions there).
:func:`bake` then does the rest: the database skeleton (:func:`skeleton_of`), the
rows the tag query selects (core.database.selection), the take's toe floor, the
simulation (core.bake.pipeline.bake_steps), the poses on the scene's frames and
the report (core.measure.report). Nothing here reads or writes Blender data.

What is worth keeping between bakes of one database (its search index, the raw
take's joints at a scene rate) goes through a ``cache(key, make)`` hook the
caller passes in; without one everything is computed afresh.
"""

import time
from dataclasses import dataclass, fields, replace
from typing import Optional

import numpy as np

from ..database import selection
from . import moves as bake_moves
from ..database.search import SearchIndex
from ..maths.resample import resample, sample_positions
from ..measure import report as bake_report
from ..measure.joints import take_of
from ..skeleton import humanoid_map
from ..skeleton.contacts import central_velocity
from ..bake import pipeline
from ..bake.legs import floor
from ..bake.settings import BakeError, BakeSettings

SEARCH_INDEX = "search_index"   # the cache key of a database's search index


def _no_cache(_key, make):
    return make()


# ---------------------------------------------------------------------------
# The frames and the path


def frames_to_key(frame_start, frame_end):
    """The whole scene frames ``frame_start``..``frame_end`` (both keyed), as
    float64; refuses a range of fewer than two frames."""
    if frame_end < frame_start:
        raise BakeError("The frame range %d-%d ends before it starts: the bake needs at least two frames."
                        % (frame_start, frame_end))
    if frame_end == frame_start:
        raise BakeError("The frame range %d-%d has one frame: the bake needs at least two." % (frame_start, frame_end))
    return np.arange(frame_start, frame_end + 1, dtype=np.float64)


def step_frames(database, frames, scene_fps):
    """The scene frames (fractional) of the simulation steps that cover
    ``frames``: one every database frame (1/fps s) from the first frame to the
    last. The controller is sampled on these."""
    frames = _checked_frames(frames)
    if not scene_fps > 0:
        raise BakeError("The scene's frame rate must be above 0 (got %g)." % scene_fps)
    fps = float(database.matching.clip_fps[0])
    duration = (frames[-1] - frames[0]) / scene_fps
    steps = int(np.floor(duration * fps + 1e-6)) + 1
    return frames[0] + np.arange(steps) / fps * scene_fps


def on_frames(values, steps, frames):
    """Per-step ``values`` (S, k), sampled on the scene frames ``steps`` (S,)
    (see :func:`step_frames`), interpolated onto ``frames`` (F,): (F, k)."""
    values = np.asarray(values, dtype=np.float64)
    return np.column_stack([np.interp(frames, steps, values[:, k]) for k in range(values.shape[1])])


def _checked_frames(frames):
    frames = np.asarray(frames, dtype=np.float64)
    if frames.ndim != 1 or len(frames) < 2:
        raise BakeError("The bake needs at least two scene frames to key (got %d)." % frames.size)
    if not np.all(np.isfinite(frames)) or np.any(np.diff(frames) <= 0):
        raise BakeError("The scene frames to key must be finite and increasing.")
    return frames


def _checked_array(values, width, what):
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != width:
        raise BakeError("The controller's %s must be one row of %d numbers per step (got shape %s)."
                        % (what, width, "x".join(str(n) for n in values.shape) or "a single number"))
    return values


@dataclass
class ControllerPath:
    """The controller as the bake follows it: sampled on the simulation steps
    (:func:`step_frames` of ``frames``), in the space the database skeleton walks."""

    positions: np.ndarray             # (S, 3) m
    facing: Optional[np.ndarray]      # (S, 2) unit ground facings, or None (Strafe then has none to follow)
    frames: np.ndarray                # (F,) the scene frames to key
    fps: float                        # the scene's frames per second
    path_scale: float = 1.0           # size ratio of the rig the result is retargeted onto (report distances x it)

    @classmethod
    def from_world(cls, positions, facing, frames, fps, armature_world=None, to_bake=None, path_scale=1.0):
        """The path of world ``positions`` (S, 3) and ``facing`` (S, 2) or None:
        into the space of the armature whose world matrix is ``armature_world``
        (4, 4), then divided by ``path_scale``; or, when ``to_bake`` (4, 4) is
        given, through that matrix (the world to the database skeleton's space,
        its scale included: a bake onto another rig)."""
        positions = _checked_array(positions, 3, "positions")
        if to_bake is None:
            if armature_world is None:
                raise BakeError("The path needs the armature's world matrix or a matrix into its space.")
            inv = np.linalg.inv(np.asarray(armature_world, dtype=np.float64))
            ctrl = (positions @ inv[:3, :3].T + inv[:3, 3]) / path_scale
        else:
            inv = np.asarray(to_bake, dtype=np.float64)
            ctrl = positions @ inv[:3, :3].T + inv[:3, 3]
        if facing is not None:
            facing = _checked_array(facing, 2, "facings")
            f3 = np.column_stack([facing, np.zeros(len(facing))]) @ inv[:3, :3].T
            facing = f3[:, :2] / np.maximum(np.linalg.norm(f3[:, :2], axis=1, keepdims=True), 1e-12)
        return cls(positions=ctrl, facing=facing, frames=np.asarray(frames, dtype=np.float64), fps=float(fps),
                   path_scale=float(path_scale))

    def checked(self, database):
        """This path with float64 arrays, refused (BakeError, one sentence) when it
        does not fit ``database``: too few frames, arrays of the wrong shape, or
        not one sample per simulation step."""
        frames = _checked_frames(self.frames)
        if not self.path_scale > 0:
            raise BakeError("The path scale must be above 0 (got %g)." % self.path_scale)
        steps = len(step_frames(database, frames, self.fps))
        positions = _checked_array(self.positions, 3, "positions")
        facing = None if self.facing is None else _checked_array(self.facing, 2, "facings")
        for what, values in (("positions", positions), ("facings", facing)):
            if values is not None and len(values) != steps:
                raise BakeError("The controller's %s have %d samples, but frames %g-%g at %g fps need one per "
                                "database frame: %d." % (what, len(values), frames[0], frames[-1], self.fps, steps))
        return replace(self, positions=positions, facing=facing, frames=frames)


# ---------------------------------------------------------------------------
# What the bake reads from the database


def skeleton_of(database):
    """core.bake.pipeline.BakeSkeleton of a core MotionDatabase: its bones, and
    the hip-knee-ankle-toe chain of each leg by the humanoid mapping (none when
    the chains are not clean parent links: foot lock is then skipped)."""
    names = list(database.skeleton.names)
    parents = np.asarray(database.skeleton.parents, dtype=np.int64)
    bones = database.feature_bones
    rest = np.asarray(database.skeleton.rest)
    mapping = humanoid_map.auto_map(names, parents, rest[:, :3, 3])
    legs = []
    for side, foot, toe in (("Left", bones.left_foot, bones.left_toe), ("Right", bones.right_foot, bones.right_toe)):
        up, low = mapping.get(side + "UpperLeg"), mapping.get(side + "LowerLeg")
        if up and low and names.index(low) == parents[names.index(foot)] \
                and names.index(up) == parents[names.index(low)]:
            legs.append((names.index(up), names.index(low), names.index(foot), names.index(toe)))
    if len(legs) != 2:
        legs = []
    return pipeline.BakeSkeleton(names=names, parents=parents, offsets=np.asarray(database.skeleton.offsets),
                                 root=names.index(bones.root), hips=names.index(bones.hips), legs=legs,
                                 toe_tips=toe_tips(database, legs))


def toe_tips(database, legs):
    """(2, 3) each toe's tip in its toe bone's frame (core.bake.legs.floor.tip_offsets),
    with the bone lengths the database's source armature recorded; None without legs."""
    if not legs:
        return None
    source = getattr(database, "source", None)
    lengths = None if source is None else np.asarray(source.bone_lengths, dtype=np.float64)
    if lengths is not None and len(lengths) != len(database.skeleton.names):
        lengths = None
    return floor.tip_offsets(database.skeleton.parents, np.asarray(database.skeleton.offsets), lengths, legs)


def toe_speeds(database):
    """(N, 2) speed of each toe in the take, per row (central differences within clips)."""
    db = database.matching
    toes = np.asarray(database.toe_positions)
    out = np.empty(toes.shape[:2])
    for c in range(len(db.clip_names)):
        rows = db.clip_rows(c)
        out[rows] = np.linalg.norm(central_velocity(toes[rows], float(db.clip_fps[c])), axis=-1)
    return out


def with_take_toe_floor(settings, database):
    """Unless the settings give a toe floor, keep toes above the height planted
    toes have in the take, less 1 cm (blends after jumps can otherwise swing a
    free toe through the floor)."""
    if settings.toe_floor is not None or database.contacts is None:
        return settings
    toes_z = np.asarray(database.toe_positions)[:, :, 2]
    return replace(settings, toe_floor=pipeline.toe_floor(toes_z, database.contacts))


def search_index(database, cache=None):
    """The search index of the database's features (through ``cache``, see the module notes)."""
    return (cache or _no_cache)(SEARCH_INDEX, lambda: SearchIndex(database.matching.features))


# ---------------------------------------------------------------------------
# The bake


@dataclass
class BakeOutput:
    """What a bake computed, ready to key (nothing is written yet)."""

    result: pipeline.BakeResult       # per simulation step, at the database's rate
    frames: np.ndarray                # (F,) the scene frames to key
    times: np.ndarray                 # (F,) their seconds from the first
    locations: np.ndarray             # (F, J, 3) pose-bone locations on those frames
    rotations: np.ndarray             # (F, J, 4) pose-bone quaternions
    skeleton: pipeline.BakeSkeleton   # the database skeleton
    settings: BakeSettings            # as baked (the toe floor filled in)
    report: bake_report.BakeReport    # the report's figures (report.json) and per-frame arrays (None: not measured)

    def field_values(self):
        """{field name: value}, e.g. to build an output that adds to these."""
        return {f.name: getattr(self, f.name) for f in fields(BakeOutput)}


def bake(database, path, settings=None, tag_query="", cache=None, clock=time.perf_counter, started=None,
         previous=None, measure=True, moves=None, ground=None):
    """Play ``database`` (a core MotionDatabase) along ``path`` (a
    :class:`ControllerPath`) with ``settings`` (core BakeSettings, default the
    defaults), searching the rows ``tag_query`` selects (empty: every valid row).

    ``cache(key, make)``: returns ``make()``, or what it returned before for
    ``key`` on the same database (default: no cache). ``clock``: seconds, for
    the report's bake time, counted from ``started`` (default: when this starts;
    a caller that sampled the controller first passes its own start).
    ``previous``: the ``result`` of an earlier :class:`BakeOutput` (or None), of
    the same database along another path: the steps before the first one the
    change reaches are not searched again (core.bake.resume); the output is the same.
    ``measure``: False leaves the report out (``report`` None; the live preview
    shows poses only, and the report's measures cost as much as a resumed bake).
    ``moves`` (core.paths.moves.Moves or None): the tag query changing along the
    timeline, ``tag_query`` in force before the first move (every move is
    checked first: core.job.moves.MoveError); the report then says how each went.
    ``ground`` (core.bake.ground.GroundGrid or None): the ground walked on (None: the flat floor at 0).

    A generator: it yields the fraction done now and then and returns a
    :class:`BakeOutput`. Refusals (BakeError, TagError) are one sentence and
    come before any work."""
    t0 = clock() if started is None else started
    cache = cache or _no_cache
    settings = BakeSettings() if settings is None else settings
    path = path.checked(database)
    skeleton = cache("bake_skeleton", lambda: skeleton_of(database))
    if moves:
        allowed, playable, per_step = bake_moves.step_rows(database, moves, tag_query, settings,
                                                           step_frames(database, path.frames, path.fps))
    else:
        (allowed, playable), per_step = selection.bake_rows(database, tag_query, settings), None
    settings = with_take_toe_floor(settings, database)
    result = yield from pipeline.bake_steps(
        database.matching, database.poses.locations, database.poses.rotations, skeleton,
        path.positions, path.facing, settings=settings, allowed=allowed, index=search_index(database, cache),
        root_positions=database.root.positions, root_quats=database.root.quats,
        toe_speeds=cache("toe_speeds", lambda: toe_speeds(database)) if settings.foot_lock.lock_on_data else None,
        playable=playable, previous=previous.trace if previous is not None else None, cache=cache, moves=per_step,
        ground=ground)
    frames = path.frames
    times = (frames - frames[0]) / path.fps
    x = sample_positions(times, result.dt, len(result.rows))
    locs, rots = resample(result.locations, x), resample(result.rotations, x, rotations=True)
    searched = allowed if per_step is None else np.logical_or.reduce([a for a, _ in per_step.rows])
    per_move = bake_moves.moves_report(database, moves, tag_query, result, frames, times) if measure and moves \
        else None
    report = None if not measure else bake_report.measure_bake(
        take_of(database), skeleton, result, bake_report.BakeFrames(frames, times, path.fps, locs, rots), searched,
        path.facing if settings.strafe.enabled else None, clock() - t0, path.path_scale, cache=cache,
        moves=per_move)
    return BakeOutput(result=result, frames=frames, times=times, locations=locs, rotations=rots,
                      skeleton=skeleton, settings=settings, report=report)


def run(*args, progress=None, **kwargs):
    """:func:`bake` to the end; ``progress`` (optional) gets the fraction done."""
    return pipeline.run_to_end(bake(*args, **kwargs), progress)
