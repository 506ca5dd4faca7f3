"""Offline motion matching: play a database along a controller's path.

The bake runs at the database's frame rate (steps of dt = 1/fps), in stages,
each in its own module, with its settings in core.bake.settings:

1. A critically damped spring character follows the controller (core.maths.springs);
   its future at the feature times gives the query's trajectory, in its own
   ground frame (core.bake.trajectory; with Strafe, core.bake.strafe).
2. Every search interval, or at once when the wanted velocity turns or changes
   speed sharply, the query (the playing row's pose features + the predicted
   trajectory) is matched against the allowed rows (core.bake.matching). A best
   row within ``keep_window`` frames of the playing one, in the same clip, is
   not a jump (core.bake.playback).
3. On a jump, inertialization (core.maths.inertialization) hides the pose change:
   the offset between what was shown and the new row decays over a half-life
   (core.bake.pose, with the time warp's blended rows, core.bake.time_warp).
4. The root advances by the played rows' own root motion, is pulled toward the
   spring character (adjustment half-life, limited to a fraction of the root's
   own speed so the feet do not skate) and clamped within a distance of the
   controller's path (core.bake.root_motion).
5. Stride warping, foot lock and the toe floor by two-joint IK on
   hip-knee-ankle, the foot keeping its world orientation (core.bake.legs).

The result is per step: each bone's local location and rotation (Blender's pose
channels, the root bone included), and what happened (rows, searches, jumps,
costs, contacts, locks). :func:`resample` turns steps into scene frames.
"""

from dataclasses import dataclass, field, replace

import numpy as np

from ..maths import springs
from ..maths import transforms as tf
from .legs.apply import apply_foot_lock, toe_floor, warp_strides
from .legs.floor import clear_floor, floor_ease_steps
from .legs.ground import follow_ground
from .legs.solver import leg_points
from .matching import body_turn, make_matcher
from .moves_search import MovesMatcher, lead_matchers
from .playback import play_rows, time_warp_state
from .resume import Trace, legs_kept, resume_from
from .pose import forward_kinematics, inertialize, pose_root_bone, warped_pose
from .root_motion import RootMotion
from .rows import joint_turn_speeds, next_rows, yaw_of
from .settings import MAX_LOOK_AHEAD, BakeError, BakeSettings, Knob, knob, knobs
from .strafe import spine_shares, strafe_warp, turn_upper_body, upper_body_chain
from .trajectory import trajectory_queries

# A jump's pose offset fades no faster than this share of each joint's own turn speed
# in the rows (core.bake.rows.joint_turn_speeds, their 99.9th percentile): a large
# offset (the hips turned 24 degrees from the new row's) no longer turns a joint
# faster than the take ever turns it, on top of the data's own turn.
FADE_SHARE = 1.0

# What callers of the bake use, besides this module's own functions.
__all__ = ["BakeError", "BakeResult", "BakeSettings", "BakeSkeleton", "Knob", "MAX_LOOK_AHEAD", "apply_foot_lock",
           "bake", "bake_steps", "forward_kinematics", "knob", "knobs", "leg_points", "resample", "run_to_end",
           "step_index", "toe_floor", "trajectory_queries", "yaw_of"]


@dataclass
class BakeSkeleton:
    """The database skeleton: bone order, parents and Blender's rest offsets."""

    names: list
    parents: np.ndarray
    offsets: np.ndarray          # (J, 4, 4) rest relative to parent (root: its rest)
    root: int
    hips: int
    legs: list                   # [(upper, lower, foot, toe) left, (...) right] bone indices
    toe_tips: np.ndarray = None  # (2, 3) each toe bone's tip in its own frame (None: no floor clearance)


@dataclass
class BakeResult:
    """Per simulation step (S steps of ``dt``)."""

    dt: float
    locations: np.ndarray        # (S, J, 3) pose-bone locations
    rotations: np.ndarray        # (S, J, 4) pose-bone quaternions
    rows: np.ndarray             # (S,) database row played
    searched: np.ndarray         # (S,) a search ran on this step
    jumped: np.ndarray           # (S,) the played row jumped on this step
    cost: np.ndarray             # (S,) cost of the latest search
    contacts: np.ndarray         # (S, 2) database contacts of the played row
    locked: np.ndarray           # (S, 2) foot lock engaged
    lock_count: int
    root_pos: np.ndarray         # (S, 3) character position (armature space)
    root_quat: np.ndarray        # (S, 4) character yaw
    sim_pos: np.ndarray          # (S, 3) spring character
    controller: np.ndarray       # (S, 3) controller positions
    toes: np.ndarray = field(default=None)  # (S, 2, 3) toe positions after foot lock/IK
    floor_lifts: object = field(default=None)  # core.bake.legs.floor.FloorLifts, None without floor clearance
    toe_ground: np.ndarray = field(default=None)  # (S, 2) the ground's height under each toe (None: the flat floor)
    trace: object = field(default=None, repr=False)  # core.bake.resume.Trace: to bake again from a changed step


def run_to_end(steps, progress=None):
    """Drive a step generator (one that yields fractions done and returns its
    result) to the end; ``progress`` (optional) gets each fraction."""
    while True:
        try:
            fraction = next(steps)
        except StopIteration as done:
            return done.value
        if progress is not None:
            progress(fraction)


def bake(*args, progress=None, **kwargs):
    """Run :func:`bake_steps` to the end; ``progress`` (optional) gets the fraction done."""
    return run_to_end(bake_steps(*args, **kwargs), progress)


def bake_steps(db, pose_locations, pose_rotations, skeleton, controller_pos, controller_facing,
               settings=None, allowed=None, index=None, root_positions=None, root_quats=None,
               toe_speeds=None, playable=None, previous=None, cache=None, moves=None, ground=None):
    """Run motion matching along ``controller_pos`` (S, 3), sampled every
    1/fps seconds of the database, in the armature's space.

    ``pose_locations`` (N, J, 3) and ``pose_rotations`` (N, J, 4): each row's pose
    channels; ``root_positions`` (N, 3) and ``root_quats`` (N, 4): each row's
    character frame (ground position and yaw), in its clip's own space.
    ``allowed`` (N,) rows a search may return (default: the valid ones);
    ``playable`` (N,) rows that may play on once reached (default: the allowed
    ones; a tag query's selection, of which only rows with a lead are searched):
    the bake searches at once when the row playing is not playable.
    ``toe_speeds`` (N, 2): each row's toe speeds in the take; when given, a toe
    locks when the data says it is planted and still there (rather than when the
    baked toe, which the path's corrections may be dragging, is still).
    ``previous``: the ``trace`` of an earlier result (core.bake.resume), to
    play again only from the steps whose inputs changed; the result is the same.
    ``cache(key, make)`` (optional): returns ``make()``, or what it returned
    before for ``key`` with the same database, skeleton and rows' arrays (the
    tables made from the database alone are then made once).
    ``moves`` (core.bake.moves_search.StepRows or None): the rows each step may
    search and play on when the tag query changes over the bake (``allowed`` and
    ``playable`` then those of the first step); None: ``allowed`` on every step.

    A generator: it yields the fraction done now and then (so a caller can show
    progress or stop early) and returns the :class:`BakeResult`. The stages are
    those of the module's description.
    """
    settings = settings or BakeSettings()
    fps, ctrl, allowed = checked_inputs(db, controller_pos, allowed, settings)
    dt = 1.0 / fps
    # 1. The spring character, and the trajectory part of every query.
    facing = controller_facing if settings.strafe.enabled else None
    sim = springs.simulate_character(ctrl, facing, dt, halflife_pos=settings.root.sim_halflife,
                                     halflife_rot=settings.root.sim_halflife,
                                     previous=previous.sim if previous is not None else None)
    sim_yaw = np.asarray(sim.yaws, dtype=np.float64)
    warp = strafe_warp(sim_yaw, sim.velocities, settings, dt) if facing is not None else None
    if warp is not None:
        sim_yaw = sim_yaw + warp      # the lower body's wanted facing: the search and the root follow it
    traj = trajectory_queries(db.spec, sim.positions, sim_yaw, fps)
    made = cache or (lambda _key, make: make())

    def turn():
        return made("body_turn", lambda: body_turn(skeleton, pose_locations, pose_rotations, root_quats))

    if moves is None:
        matcher = make_matcher(db, traj, allowed, index, settings, sim, sim_yaw, root_positions, root_quats, fps,
                               turn, playable, cache)
    else:
        def make(a, p):
            return make_matcher(db, traj, a, index, settings, sim, sim_yaw, root_positions, root_quats, fps, turn, p,
                                cache)
        horizon = int(round(settings.look_ahead.seconds * fps)) if settings.look_ahead.on else 0
        matcher = MovesMatcher(*lead_matchers(moves, make, db, horizon))
    # 2 and 4. The rows played (searches, jumps) and the root, step by step; from
    # a state the previous bake kept when only later steps' inputs changed.
    inputs = (ctrl, sim.positions, sim_yaw, sim.velocities, traj)
    root = RootMotion(db, root_positions, root_quats, settings, dt, cache)
    played = yield from play_rows(db, ctrl, sim.positions, sim_yaw, sim.velocities, matcher, root, settings, fps,
                                   time_warp_state(db, root, sim.velocities, settings, fps, cache),
                                   resume_from(previous, settings, db, allowed, playable, inputs, moves))
    trace = Trace(settings, db, allowed, playable, inputs, getattr(getattr(matcher, "ahead", None), "reach",
                                                                   lambda: 0)(), played, sim, moves=moves)
    trace.legs = {}         # what foot lock keeps, to go on from (core.bake.legs.apply)
    fade = FADE_SHARE * made("joint_turn_speeds", lambda: joint_turn_speeds(pose_rotations, next_rows(db), fps))
    played, locs, rots, root_quat, contacts, locked, lock_count, toes = _pose_and_legs(
        db, pose_locations, pose_rotations, skeleton, played, root.dpos, warp, settings, fps, toe_speeds,
        (legs_kept(previous, settings, db, len(ctrl)), trace.legs), fade)
    root_pos, toes, toe_ground, lifts = _on_the_ground(skeleton, locs, rots, played.root_pos, root_quat, toes,
                                                       ground, dt, settings)
    rots = tf.quat_unroll(tf.quat_normalize(rots), axis=0)
    yield 1.0
    return BakeResult(dt=dt, locations=locs, rotations=rots, rows=played.rows, searched=played.searched,
                      jumped=played.jumped, cost=played.cost, contacts=contacts, locked=locked,
                      lock_count=lock_count, root_pos=root_pos, root_quat=root_quat,
                      sim_pos=sim.positions, controller=ctrl, toes=toes, trace=trace,
                      floor_lifts=lifts, toe_ground=toe_ground)


def _on_the_ground(skeleton, locs, rots, root_pos, root_quat, toes, ground, dt, settings):
    """6. The feet over what they stand on (``rots`` in place): the scene's
    ``ground`` (core.bake.ground grid; core.bake.legs.ground raises the root and
    the feet over it), else the flat floor (height 0). Returns (root positions,
    toes, the ground's height under each toe or None, FloorLifts or None)."""
    if ground is not None and skeleton.legs:
        rise, toes = follow_ground(skeleton, locs, rots, root_quat, ground, dt, settings.legs.knee_min_bend)
        root_pos = root_pos + np.column_stack([np.zeros((len(rise), 2)), rise])
        return root_pos, toes, ground.height_at(toes[..., :2]), None
    toes, lifts = _clear_floor(skeleton, locs, rots, root_quat, toes, settings, dt)
    return root_pos, toes, None, lifts


def _clear_floor(skeleton, locs, rots, root_quat, toes, settings, dt):
    """Nothing under the flat floor (core.bake.legs.floor): toe joints lifted, toe
    tips bent up (``rots`` in place). Returns (toes, FloorLifts or None)."""
    if skeleton.toe_tips is None or not skeleton.legs:
        return toes, None
    lifts = clear_floor(skeleton, locs, rots, root_quat, skeleton.toe_tips, min_bend=settings.legs.knee_min_bend,
                        half=floor_ease_steps(dt))
    if toes is not None:
        toes = toes.copy()
        toes[..., 2] += lifts.joint
    return toes, lifts


def _pose_and_legs(db, pose_locations, pose_rotations, skeleton, played, row_steps, warp, settings, fps,
                   toe_speeds, legs=(None, None), fade_speeds=None):
    """Stages 3 and 5 after the loop: the pose of the ``played`` rows
    (``row_steps``: each row's own ground travel into the next, core.bake.rows.row_deltas;
    ``warp``: the strafe's lower-body turn or None), stride warping, foot lock
    and IK (``legs``: what an earlier bake's foot lock kept, or None, and a
    dict for this one's; core.bake.legs.apply.apply_foot_lock; ``fade_speeds``:
    each joint's fastest inertialization fade, core.bake.pose.inertialize). Returns
    (played, with the nearest rows under the time warp, locations,
    rotations, the root's yaw quaternions, contacts, locked, lock count, toes)."""
    dt = 1.0 / fps
    # 3. The pose: the played rows' channels (blended between rows when time-warped) with inertialization at jumps.
    if played.phase is None:
        locs, rots = inertialize(pose_locations, pose_rotations, played.rows, played.jumped, skeleton.hips,
                                  next_rows(db), fps, settings.search.inertialization_halflife, fade_speeds)
    else:
        played, row_steps, locs, rots = warped_pose(db, pose_locations, pose_rotations, played, row_steps,
                                                     skeleton.hips, fps, settings.search.inertialization_halflife,
                                                     fade_speeds)
    root_quat = pose_root_bone(skeleton, locs, rots, played.root_pos, played.root_yaw)
    if warp is not None:
        turn_upper_body(skeleton, locs, rots, -warp, spine_shares(pose_rotations, next_rows(db),
                                                                   upper_body_chain(skeleton)))
    # 5. Stride warping, foot lock and two-joint IK.
    if settings.stride_warp.enabled and skeleton.legs:
        warp_strides(skeleton, locs, rots, root_quat, played if played.phase is None else
                      replace(played, rows=np.arange(len(played.rows))), row_steps, dt, settings.legs.knee_min_bend,
                      settings.stride_warp.stride_warp_rate)
    S = len(played.rows)
    contacts = db.contacts[played.rows] if db.contacts is not None else np.zeros((S, 2), dtype=bool)
    locked = np.zeros((S, 2), dtype=bool)
    lock_count = 0
    toes = None
    if (settings.foot_lock.enabled or settings.toe_floor is not None) and skeleton.legs:
        speeds = None if toe_speeds is None else np.asarray(toe_speeds)[played.rows]
        rots, locked, lock_count, toes = apply_foot_lock(skeleton, locs, rots, contacts, root_quat, dt, settings,
                                                         speeds, *legs)
    return played, locs, rots, root_quat, contacts, locked, lock_count, toes


def checked_inputs(db, controller_pos, allowed, settings):
    """Refuse what the bake cannot run on; return (database fps, the controller
    path (S, 3) as float64, the allowed rows (N,))."""
    settings.check()
    fps = float(db.clip_fps[0])
    if not np.allclose(db.clip_fps, fps):
        raise BakeError("The database mixes frame rates (%s fps); bake needs one rate: re-import the "
                        "takes at the same rate." % ", ".join("%g" % f for f in np.unique(db.clip_fps)))
    ctrl = np.asarray(controller_pos, dtype=np.float64)
    if len(ctrl) < 2:
        raise BakeError("The bake needs at least two frames.")
    if not np.all(np.isfinite(ctrl)):
        raise BakeError("The controller's path holds NaN or infinite values.")
    allowed = db.valid if allowed is None else np.asarray(allowed, dtype=bool)
    if not allowed.any():
        raise BakeError("No database row may be played (every row is excluded or filtered out).")
    return fps, ctrl, allowed


def resample(result, times):
    """Pose channels at ``times`` seconds from the first step: (locations
    (T, J, 3), rotations (T, J, 4)), blending the two neighbouring steps
    (linear for locations, normalised linear for unit quaternions, which are
    sign-continuous)."""
    times = np.asarray(times, dtype=np.float64)
    S = len(result.rows)
    x = np.clip(times / result.dt, 0.0, S - 1)
    i0 = np.floor(x).astype(np.int64)
    i1 = np.minimum(i0 + 1, S - 1)
    a = (x - i0)[:, None, None]
    locs = result.locations[i0] * (1 - a) + result.locations[i1] * a
    q0, q1 = result.rotations[i0], result.rotations[i1]
    q1 = np.where(np.sum(q0 * q1, axis=-1, keepdims=True) < 0, -q1, q1)
    rots = tf.quat_normalize(q0 * (1 - a) + q1 * a)
    return locs, rots


def step_index(result, times):
    """Nearest simulation step of each time (for per-frame figures)."""
    return np.clip(np.rint(np.asarray(times) / result.dt).astype(np.int64), 0, len(result.rows) - 1)
