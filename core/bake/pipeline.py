"""Offline motion matching: play a database along a controller's path.

The bake runs at the database's frame rate (steps of dt = 1/fps):

1. A critically damped spring character follows the controller (core.maths.springs);
   its future at the feature times gives the query's trajectory, in its own
   ground frame.
2. Every search interval, or at once when the wanted velocity turns or changes
   speed sharply, the query (the playing row's pose features + the predicted
   trajectory) is matched against the allowed rows. A best row within
   ``keep_window`` frames of the playing one, in the same clip, is not a jump.
3. On a jump, inertialization (core.maths.inertialization) hides the pose change:
   the offset between what was shown and the new row decays over a half-life.
4. The root advances by the played rows' own root motion, is pulled toward the
   spring character (adjustment half-life, limited to a fraction of the root's
   own speed so the feet do not skate) and clamped within a distance of the
   controller's path.
5. Foot lock (core.bake.foot_lock) pins planted toes; two-joint IK (core.maths.ik) on
   hip-knee-ankle puts them there, the foot keeping its world orientation.

The result is per step: each bone's local location and rotation (Blender's pose
channels, the root bone included), and what happened (rows, searches, jumps,
costs, contacts, locks). :func:`resample` turns steps into scene frames.
"""

from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..database import features as ft
from . import foot_lock as fl
from ..maths import ik
from ..maths import inertialization as inert
from . import leg_release as lr
from . import look_ahead as la
from ..measure import metrics
from ..maths import springs
from . import stride_warp as sw
from . import time_warp as twp
from ..maths import transforms as tf
from ..skeleton import virtual_root as vr
from ..errors import MotionMatchingError
from ..database.search import SearchIndex, keep_playing
from ..maths.springs import decay_spring


class BakeError(MotionMatchingError):
    """The bake cannot run with these inputs."""


@dataclass(frozen=True)
class Knob:
    """How an interface shows one bake setting (the add-on's properties, panel and
    command line are made from these). ``unit``: 'time' (seconds), 'length'
    (metres), 'velocity' (m/s), 'angle' (radians), 'factor' or None; ``ui_name``:
    the interface's name when it differs from the setting's (Blender's ``use_``
    prefix). ``name``, ``type`` and ``default`` are filled in by :func:`knobs`."""

    label: str
    description: str
    unit: str = None
    min: float = None
    max: float = None
    soft_max: float = None
    ui_name: str = None
    name: str = None
    type: type = None
    default: object = None


def knob(default, label, description, **shown):
    """A setting a user may turn: its default, and how an interface shows it (:class:`Knob`)."""
    return field(default=default, metadata={"knob": Knob(label, description, **shown)})


MAX_LOOK_AHEAD = 10.0   # s: the longest look-ahead a bake accepts


@dataclass
class BakeSettings:
    """Every knob of the bake, with the defaults of the technique's references.

    The one definition of the bake's options: each field made with :func:`knob`
    becomes an option of the bake operator, a scene setting in the Bake panel
    (read by the bake and the live preview alike) and a command-line option."""

    search_interval: float = knob(
        1.0 / 6.0, "Search Interval", "Seconds between searches: shorter reacts faster to the path, longer plays "
        "longer pieces of mocap", unit="time", min=1.0 / 120.0, soft_max=1.0)
    keep_window: int = knob(
        20, "Keep Window", "Frames: a best match this close to the frame playing is not a jump (fewer, longer "
        "pieces)", min=0, soft_max=60)
    jump_cost_margin: float = knob(
        0.0, "Jump Margin", "A jump must match better than the frame playing on by this much (search cost): higher "
        "plays longer pieces of mocap with fewer jumps, 0 always takes the best match", min=0.0, soft_max=5.0)
    inertialization_halflife: float = knob(
        0.1, "Blend Half-Life", "How fast a jump's pose difference fades: shorter is snappier, longer hides jumps "
        "better", unit="time", min=0.01, soft_max=0.5)
    sim_halflife: float = knob(
        0.25, "Path Half-Life", "Smoothing of the controller's path: shorter follows it tightly, longer asks for "
        "gentler motion", unit="time", min=0.01, soft_max=1.0)
    adjustment_halflife: float = knob(
        0.1, "Adjustment Half-Life", "How fast the root is pulled toward the path: faster tracks better, slower "
        "keeps the mocap's own steps", unit="time", min=0.01, soft_max=1.0)
    adjustment_ratio: float = knob(
        0.5, "Adjustment Limit", "The pull toward the path is at most this fraction of the root's own motion: "
        "higher tracks better, lower slides the feet less", unit="factor", min=0.0, soft_max=2.0)
    planted_adjustment: float = knob(
        1.0, "Planted Adjustment", "While the played data has a foot on the ground, the pull toward the path "
        "(position and heading) is scaled by this: lower keeps planted feet in place, the pull catches up while "
        "the feet swing", unit="factor", min=0.0, max=1.0)
    clamp_distance: float = knob(
        0.1, "Clamp", "The root never strays farther than this from the path (tight clamps can make feet slide)",
        unit="length", min=0.001, soft_max=1.0)
    clamp_angle: float = knob(
        np.radians(45.0), "Clamp Angle", "The character never faces farther than this from the wanted facing",
        unit="angle", min=0.0, max=3.14159)
    force_search_angle: float = knob(
        np.radians(45.0), "Turn Search", "Search at once when the wanted direction turns this much: reacts to "
        "sharp turns sooner", unit="angle", min=0.0, max=3.14159)
    force_search_speed: float = knob(
        1.0, "Speed Search", "Search at once when the wanted speed changes this much: reacts to starts and stops "
        "sooner", unit="velocity", min=0.0, soft_max=5.0)
    use_facing: bool = knob(
        False, "Strafe (Use Controller Rotation)", "Face where the controller faces instead of where it goes")
    strafe_warp: float = knob(
        np.radians(60.0), "Strafe Warp", "With Strafe on, the legs and hips turn up to this angle toward the "
        "direction of travel while the upper body keeps the controller's facing (orientation warping: the take's "
        "forward steps carry a sideways path); 0: off", unit="angle", min=0.0, max=3.14159)
    strafe_warp_rate: float = knob(
        2.0, "Strafe Warp Rate", "The strafe warp's angle changes by at most this many radians a second (the "
        "spine carries the counter-turn, and a warp that unwinds as the character stops turns it faster than the "
        "take ever does); 0: no limit", unit="angle", min=0.0, soft_max=10.0)
    stride_warp: bool = knob(
        True, "Stride Warp", "Scale each step's length along the direction of travel by the root's travel over "
        "the played data's (leg IK), so planted feet stay planted when the path asks for another speed than the "
        "data's; off: the data's stride, the feet slide or the lock stretches the legs")
    stride_warp_rate: float = knob(
        8.0, "Stride Warp Rate", "The stride warp's scale of the step length changes by at most this much a "
        "second (a scale that swings fast moves a swinging foot by centimetres a frame and snaps the knee); "
        "0: no limit", min=0.0, soft_max=20.0)
    knee_min_bend: float = knob(
        np.radians(15.0), "Least Knee Bend", "Leg IK never straightens a knee beyond this bend (or the "
        "animation's own, if straighter): near a straight leg each millimetre of reach turns the knee by degrees, "
        "so a held foot the body pulls away from snaps the knee; 0: up to a straight leg", unit="angle", min=0.0,
        max=1.0)
    foot_lock: bool = knob(
        True, "Foot Lock", "Pin planted toes with two-joint leg IK", ui_name="use_foot_lock")
    lock_speed: float = knob(
        0.15, "Lock Speed", "A planted toe slower than this locks: higher locks more often (less sliding), but can "
        "hold a foot that should move", unit="velocity", min=0.0, soft_max=2.0)
    lock_on_data: bool = knob(
        False, "Lock by Data", "Lock a toe when the take says it is planted and still, even if the path's "
        "corrections drag the baked toe: about 2.5x more locks and less sliding, but legs may snap when a lock "
        "holds through a jump; off: only when the baked toe itself is still")
    lock_on_contact: bool = knob(
        True, "Plant from Data", "A foot locks whenever the played data says it is in contact (not in a run's "
        "flight) and holds its place and heading until the data lifts it; off: the lock also waits for a still "
        "toe (Lock Speed)")
    lock_blend_halflife: float = knob(
        0.1, "Release Half-Life", "How fast a released foot blends back to the animation", unit="time", min=0.01,
        soft_max=0.5)
    unlock_distance: float = knob(
        0.5, "Unlock Distance", "Release a pinned toe when the animation pulls it this far away", unit="length",
        min=0.01, soft_max=1.0)
    tag_query_ahead: float = knob(
        1.0 / 3.0, "Tag Query Lead", "Under a tag query, a frame is offered only when this many seconds of the query's "
        "frames follow it in its take, so a piece chosen there plays at least that long before the bake must "
        "search again (it searches as soon as the frame playing leaves the query's frames); the trajectory's "
        "look-ahead (1 s) or more: the whole future a frame promises stays in the query's frames, which leaves "
        "almost nothing of a take cut in short tagged pieces", unit="time", min=0.0, soft_max=1.0)
    strict_tag_query: bool = knob(
        False, "Strict Tag Query", "Under a tag query, search and play only frames whose whole trajectory look-ahead "
        "(1 s) lies in the query's frames (the rule before Tag Query Lead; a take cut in short tagged pieces then "
        "offers almost nothing and one pose may freeze and glide)")
    release_in_joints: bool = knob(
        True, "Release in Joints", "A released foot blends back to the animation in the leg's joint rotations "
        "(the knee bends with the animation at once) rather than by a toe offset the leg may not reach (the leg "
        "stays straight, then folds in a few frames)")
    toe_floor_rate: float = knob(
        0.25, "Toe Lift Rate", "A toe that would dip under the floor is lifted gradually, by at most this speed "
        "(starting before the dip); 0: lifted by exactly the depth on the frame it dips", unit="velocity",
        min=0.0, soft_max=2.0)
    look_ahead: float = knob(
        1.0, "Look Ahead", "Seconds of the path each search looks ahead: candidates are ranked by how well their "
        "own motion follows the path that long and how well they join the step playing now (a jump should not "
        "cut or stretch a stance); 0: greedy, the nearest match only", unit="time", min=0.0, max=MAX_LOOK_AHEAD, soft_max=3.0)
    turn_like_data: bool = knob(
        True, "Turn Like the Data", "The root's heading, the path's corrections included, turns no faster in a "
        "step than the database's own root turns (its 99.9th percentile), unless the played data itself turns "
        "faster; off: the pull toward the path and the look-ahead's heading mend add to the data's own turn")
    time_warp: float = knob(
        0.2, "Time Warp", "Play the data up to this much faster or slower to meet the speed the path asks for "
        "(0.2: rates 0.8-1.25; poses blended between frames), so the pull toward the path drags the feet less; "
        "0: off, the data's own speed", unit="factor", min=0.0, max=twp.MAX_TIME_WARP)
    toe_floor: float = None                 # m: toes are kept above this height (None: no floor)

    def check(self):
        for name in ("search_interval", "inertialization_halflife", "sim_halflife",
                     "adjustment_halflife", "clamp_distance", "lock_speed", "unlock_distance",
                     "lock_blend_halflife"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise BakeError("The bake setting %s must be a positive number (got %s)."
                                % (name.replace("_", " "), v))
        if self.keep_window < 0:
            raise BakeError("The keep-playing window cannot be negative.")
        for name in ("toe_floor_rate", "strafe_warp_rate", "knee_min_bend", "stride_warp_rate"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise BakeError("The bake setting %s must be zero or a positive number (got %s)."
                                % (name.replace("_", " "), v))
        if not (np.isfinite(self.jump_cost_margin) and self.jump_cost_margin >= 0):
            raise BakeError("The jump margin must be zero or a positive number (got %s)." % self.jump_cost_margin)
        if not (np.isfinite(self.look_ahead) and 0 <= self.look_ahead <= MAX_LOOK_AHEAD):
            raise BakeError("The look-ahead must be from 0 to %g seconds (got %s)." % (MAX_LOOK_AHEAD, self.look_ahead))
        if not (np.isfinite(self.time_warp) and 0 <= self.time_warp <= twp.MAX_TIME_WARP):
            raise BakeError("The time warp must be from 0 to %g (got %s)." % (twp.MAX_TIME_WARP, self.time_warp))


def knobs():
    """The settings a user may turn, in order: :class:`Knob` with name, type,
    default and interface name filled in."""
    out = []
    for f in fields(BakeSettings):
        k = f.metadata.get("knob")
        if k is not None:
            out.append(replace(k, name=f.name, type=f.type, default=f.default, ui_name=k.ui_name or f.name))
    return tuple(out)


@dataclass
class BakeSkeleton:
    """The database skeleton: bone order, parents and Blender's rest offsets."""

    names: list
    parents: np.ndarray
    offsets: np.ndarray          # (J, 4, 4) rest relative to parent (root: its rest)
    root: int
    hips: int
    legs: list                   # [(upper, lower, foot, toe) left, (...) right] bone indices


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


def _row_deltas(db, root_pos, root_quat):
    """Root motion of every row to the next, in the row's own ground frame:
    (N, 3) local displacement and (N, 4) local rotation. The last row of a clip
    repeats the previous row's motion."""
    n = db.num_rows
    nxt = np.arange(1, n + 1)
    nxt[db.clip_offsets[1:] - 1] = db.clip_offsets[1:] - 1   # clip ends: no next row
    prev = np.arange(-1, n - 1)
    ends = nxt == np.arange(n)
    src = np.where(ends, np.maximum(prev, db.clip_offsets[db.clip_index]), np.arange(n))
    dst = np.where(ends, np.arange(n), nxt)
    src = np.where(src == dst, np.arange(n), src)
    inv = tf.quat_conjugate(root_quat[src])
    dpos = tf.quat_rotate(inv, root_pos[dst] - root_pos[src])
    dpos[:, 2] = 0.0
    drot = tf.quat_mul(inv, root_quat[dst])
    return dpos, drot


def _next_rows(db):
    """Row after each row within its clip (itself at a clip end)."""
    n = db.num_rows
    nxt = np.arange(1, n + 1)
    ends = db.clip_offsets[1:] - 1
    nxt[ends] = ends
    return nxt


def yaw_of(q):
    """Yaw angle (about Z) of yaw quaternions, 0 facing -Y."""
    return 2.0 * np.arctan2(q[..., 3], q[..., 0])


def _angular_velocities_of(rot, nxt, fps, rows):
    """(n, J, 3) angular velocity of each of ``rows`` toward the next row of its
    clip (at a clip end, the previous row's)."""
    rows = np.asarray(rows, dtype=np.int64)
    at_end = nxt[rows] == rows
    rows = np.where(at_end, np.maximum(rows - 1, 0), rows)   # clip ends: the previous row's velocity
    return inert.angular_velocity(rot[rows], rot[nxt[rows]], 1.0 / fps)


def trajectory_queries(spec, sim_pos, sim_yaw, fps):
    """Raw query columns of the trajectory groups for every step (S, D); the
    bone columns are left zero (they come from the playing row)."""
    S = len(sim_pos)
    q = np.zeros((S, spec.dim))
    slices = ft.group_slices(spec)
    cos, sin = np.cos(sim_yaw), np.sin(sim_yaw)

    def local_xy(v):
        # R(yaw)^T v for a yaw rotation about Z.
        return np.stack([cos * v[:, 0] + sin * v[:, 1], -sin * v[:, 0] + cos * v[:, 1]], axis=1)

    for g in spec.groups:
        if not g.is_trajectory:
            continue
        cols = slices[g.name]
        out = []
        for t in g.times_s:
            k = ft.frame_offset(t, fps)
            idx = np.clip(np.arange(S) + k, 0, S - 1)
            if g.kind == "trajectory_position":
                out.append(local_xy(sim_pos[idx] - sim_pos))
            else:
                fy = sim_yaw[idx]
                out.append(local_xy(np.stack([np.sin(fy), -np.cos(fy)], axis=1)))
        q[:, cols] = np.concatenate(out, axis=1)
    return q


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
               toe_speeds=None, playable=None):
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

    A generator: it yields the fraction done now and then (so a caller can show
    progress or stop early) and returns the :class:`BakeResult`. The stages are
    those of the module's description.
    """
    settings = settings or BakeSettings()
    fps, ctrl, allowed = _checked_inputs(db, controller_pos, allowed, settings)
    dt = 1.0 / fps
    # 1. The spring character, and the trajectory part of every query.
    facing = controller_facing if settings.use_facing else None
    sim = springs.simulate_character(ctrl, facing, dt, halflife_pos=settings.sim_halflife,
                                     halflife_rot=settings.sim_halflife)
    sim_yaw = np.asarray(sim.yaws, dtype=np.float64)
    warp = _strafe_warp(sim_yaw, sim.velocities, settings, dt) if facing is not None else None
    if warp is not None:
        sim_yaw = sim_yaw + warp      # the lower body's wanted facing: the search and the root follow it
    matcher = _matcher(db, trajectory_queries(db.spec, sim.positions, sim_yaw, fps), allowed, index, settings,
                       sim, sim_yaw, root_positions, root_quats, fps,
                       lambda: body_turn(skeleton, pose_locations, pose_rotations, root_quats), playable)
    # 2 and 4. The rows played (searches, jumps) and the root, step by step.
    root = _RootMotion(db, root_positions, root_quats, settings, dt)
    played = yield from _play_rows(db, ctrl, sim.positions, sim_yaw, sim.velocities, matcher, root, settings, fps,
                                   _time_warp(db, root, sim.velocities, settings, fps))
    # 3. The pose: the played rows' channels (blended between rows when time-warped) with inertialization at jumps.
    row_steps = _row_deltas(db, root_positions, root_quats)[0]
    if played.phase is None:
        locs, rots = _inertialize(pose_locations, pose_rotations, played.rows, played.jumped, skeleton.hips,
                                  _next_rows(db), fps, settings.inertialization_halflife)
    else:
        played, row_steps, locs, rots = _warped_pose(db, pose_locations, pose_rotations, played, row_steps,
                                                     skeleton.hips, fps, settings.inertialization_halflife)
    root_quat = _pose_root_bone(skeleton, locs, rots, played.root_pos, played.root_yaw)
    if warp is not None:
        _turn_upper_body(skeleton, locs, rots, -warp, spine_shares(pose_rotations, _next_rows(db),
                                                                   _upper_body_chain(skeleton)))
    # 5. Stride warping, foot lock and two-joint IK.
    if settings.stride_warp and skeleton.legs:
        _warp_strides(skeleton, locs, rots, root_quat, played if played.phase is None else
                      replace(played, rows=np.arange(len(ctrl))), row_steps, dt, settings.knee_min_bend,
                      settings.stride_warp_rate)
    S = len(ctrl)
    contacts = db.contacts[played.rows] if db.contacts is not None else np.zeros((S, 2), dtype=bool)
    locked = np.zeros((S, 2), dtype=bool)
    lock_count = 0
    toes = None
    if (settings.foot_lock or settings.toe_floor is not None) and skeleton.legs:
        speeds = None if toe_speeds is None else np.asarray(toe_speeds)[played.rows]
        rots, locked, lock_count, toes = apply_foot_lock(skeleton, locs, rots, contacts, root_quat, dt, settings,
                                                         speeds)
    rots = tf.quat_unroll(tf.quat_normalize(rots), axis=0)
    yield 1.0
    return BakeResult(dt=dt, locations=locs, rotations=rots, rows=played.rows, searched=played.searched,
                      jumped=played.jumped, cost=played.cost, contacts=contacts, locked=locked,
                      lock_count=lock_count, root_pos=played.root_pos, root_quat=root_quat,
                      sim_pos=sim.positions, controller=ctrl, toes=toes)


WARP_SPEED = (0.2, 0.5)     # m/s: orientation warping fades in between these speeds


def _strafe_warp(sim_yaw, sim_vel, settings, dt):
    """Per step, the angle (radians) the lower body turns from the wanted facing
    toward the direction of travel: the difference, limited to
    ``settings.strafe_warp`` and faded out at walking-in-place speeds. None when
    off."""
    if not settings.strafe_warp > 0:
        return None
    v = np.asarray(sim_vel, dtype=np.float64)[:, :2]
    speed = np.linalg.norm(v, axis=1)
    travel = np.arctan2(v[:, 0], -v[:, 1])          # the yaw whose facing (sin, -cos) is along v
    diff = springs.wrap_angle(travel - sim_yaw)
    lo, hi = WARP_SPEED
    fade = np.clip((speed - lo) / (hi - lo), 0.0, 1.0)
    warp = np.clip(diff, -settings.strafe_warp, settings.strafe_warp) * fade
    if settings.strafe_warp_rate > 0:
        warp = lr.slew_limited(warp, settings.strafe_warp_rate * dt)
    return warp


SPINE_BONES = 4   # the strafe warp's counter-turn spreads over this many spine bones above the hips


def _upper_body_chain(skeleton, length=SPINE_BONES):
    """The spine bones above the hips (the first child of the hips that is not a
    leg, then its first children), up to ``length`` of them."""
    uppers = {leg[0] for leg in skeleton.legs}
    chain, bone = [], skeleton.hips
    while len(chain) < length:
        kids = [j for j in range(len(skeleton.names)) if skeleton.parents[j] == bone and j not in uppers]
        if not kids:
            break
        bone = kids[0]
        chain.append(bone)
    return chain


def spine_shares(pose_rotations, nxt, chain):
    """Each bone of ``chain``'s share of the upper body's turn: in proportion to
    how fast the data itself turns it from a row to the next (the 99.9th
    percentile), so a stiff bone takes little and none turns much faster than
    the take ever does. Equal shares when the data holds no steps."""
    nxt = np.asarray(nxt)
    rows = np.flatnonzero(nxt != np.arange(len(nxt)))
    if not len(chain) or not len(rows):
        return np.full(len(chain), 1.0 / max(len(chain), 1))
    q = np.asarray(pose_rotations, dtype=np.float64)[:, chain]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    dots = np.abs(np.sum(q[rows] * q[nxt[rows]], axis=-1))
    fast = np.percentile(2.0 * np.arccos(np.clip(dots, 0.0, 1.0)), TURN_PERCENTILE, axis=0)
    return fast / fast.sum() if fast.sum() > 0 else np.full(len(chain), 1.0 / len(chain))


def _turn_upper_body(skeleton, locs, rots, angle, shares=None):
    """Turn the upper body about the vertical by ``angle`` (S,) radians, spread
    over the spine bones by ``shares`` (None: evenly), so it faces ``angle``
    away from the hips (in place)."""
    chain = _upper_body_chain(skeleton)
    if not chain:
        return
    reach = np.cumsum(np.full(len(chain), 1.0 / len(chain)) if shares is None else shares)
    pose = forward_kinematics(skeleton, locs, rots)
    world = tf.matrix_to_quat(pose[:, :, :3, :3])
    offset_q = tf.matrix_to_quat(skeleton.offsets[:, :3, :3])
    z = np.array([0.0, 0.0, 1.0])
    parent_new = world[:, skeleton.hips]
    for k, bone in enumerate(chain):
        turned = tf.quat_mul(tf.quat_from_axis_angle(z, angle * reach[k]), world[:, bone])
        rots[:, bone] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent_new, offset_q[bone])), turned)
        parent_new = turned


def _checked_inputs(db, controller_pos, allowed, settings):
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


def _matcher(db, traj, allowed, index, settings, sim, sim_yaw, root_positions, root_quats, fps, turn, playable=None):
    """Stage 2's search: greedy, or with the future in view when ``settings.look_ahead`` > 0
    (``turn()`` gives each row's body facing off its root's, see :func:`body_turn`)."""
    if settings.look_ahead > 0 and root_positions is not None and root_quats is not None:
        return _LookAheadMatcher(db, traj, allowed, index, settings, np.asarray(sim.positions, dtype=np.float64),
                                 sim_yaw, root_positions, root_quats, fps, turn(), playable)
    return _Matcher(db, traj, allowed, index or SearchIndex(db.features), settings, playable)


def body_turn(skeleton, pose_locations, pose_rotations, root_quats):
    """(N,) radians each row's body (the line of its hip joints, turned to face
    forward) is turned from its root's yaw; zeros when the skeleton has no legs.
    Forward kinematics of the hip joints' ancestors only."""
    n = len(root_quats)
    if not skeleton.legs:
        return np.zeros(n)
    chain = set()
    for leg in skeleton.legs:
        j = leg[0]
        while j >= 0:
            chain.add(j)
            j = int(skeleton.parents[j])
    bones = sorted(chain)                  # parents come before children
    remap = {b: i for i, b in enumerate(bones)}
    parents = np.array([remap.get(int(skeleton.parents[b]), -1) for b in bones])
    basis = tf.compose(np.asarray(pose_locations[:, bones], dtype=np.float64),
                       tf.quat_to_matrix(np.asarray(pose_rotations[:, bones], dtype=np.float64)))
    pose = tf.pose_fk(parents, None, basis, skeleton.offsets[bones])
    left, right = (pose[:, remap[leg[0]], :3, 3] for leg in skeleton.legs)
    lr = left - right                      # facing = (left - right) x Z, as core.measure.path_metrics
    body = np.arctan2(lr[:, 1], lr[:, 0])  # the yaw whose facing (sin, -cos) is along that
    return springs.wrap_angle(body - yaw_of(np.asarray(root_quats, dtype=np.float64)))


class _Matcher:
    """Stage 2's search: the query of a step (the playing row's pose features and
    the spring character's trajectory ``traj`` (S, D), raw) against the allowed rows."""

    def __init__(self, db, traj, allowed, index, settings, playable=None):
        self.db, self.traj, self.allowed, self.index = db, traj, allowed, index
        self.playable = allowed if playable is None else np.asarray(playable, dtype=bool) | allowed
        self.margin = settings.jump_cost_margin
        self.bone_cols = np.zeros(db.spec.dim, dtype=bool)
        slices = ft.group_slices(db.spec)
        for g in db.spec.groups:
            if not g.is_trajectory:
                self.bone_cols[slices[g.name]] = True
        self.weights = ft.feature_weights(db.spec)
        self.query = np.empty(db.spec.dim)

    def normalized_query(self, s, cur):
        """The weighted, normalised query of step ``s`` while row ``cur`` plays."""
        db, query, bone_cols = self.db, self.query, self.bone_cols
        query[:] = self.traj[s]
        # Before anything plays, the pose part is neutral (the mean pose).
        query[bone_cols] = db.raw[cur, bone_cols] if cur is not None else db.norm.mean[bone_cols]
        return ((query - db.norm.mean) / db.norm.scale) * self.weights

    def played(self, row, root, rate=1.0, moved_on=None):
        """Note the row played on a step and the root (x, y, yaw) (the greedy search needs no history)."""

    def search(self, s, cur, can_continue, root=None):
        """(best row, its cost) for step ``s`` while row ``cur`` plays (None: nothing
        yet); ``root`` (x, y, yaw) where the character stands (unused here)."""
        db = self.db
        qn = self.normalized_query(s, cur)
        best, best_cost = self.index.search(qn, self.allowed)
        if can_continue and self.margin > 0:
            # Play on unless the best row beats the playing one by the margin.
            own = float(np.sum((qn - db.features[cur]) ** 2))
            if own <= best_cost + self.margin:
                return cur, own
        return best, best_cost


class _LookAheadMatcher(_Matcher):
    """Stage 2's search with the future in view (core.bake.look_ahead): the rows nearest
    the query (feature cost plus a jump's contact-phase cost) and the row playing
    on are ranked again by what playing each would do over the next
    ``settings.look_ahead`` seconds of the path."""

    def __init__(self, db, traj, allowed, index, settings, sim_pos, sim_yaw, root_positions, root_quats, fps, turn,
                 playable=None):
        super().__init__(db, traj, allowed, index, settings, playable)
        self.window = settings.keep_window
        self.sim_pos, self.sim_yaw = sim_pos, sim_yaw
        self.ahead = la.LookAhead(db, root_positions, root_quats, allowed, fps, settings.look_ahead, turn)
        self.rows = np.flatnonzero(allowed)
        self.features = np.asarray(db.features[self.rows], dtype=np.float64)
        self.row_clips = db.clip_index[self.rows]
        self.tie = la.tie_order(db)     # ties: lowest frame, then lowest clip

    def played(self, row, root, rate=1.0, moved_on=None):
        self.ahead.played(row, root, rate, moved_on)

    def search(self, s, cur, can_continue, root=None):
        qn = self.normalized_query(s, cur)
        d = self.features - qn
        np.multiply(d, d, out=d)
        cost = np.add.reduce(d, axis=1)     # a fixed summation order (einsum's depends on the SIMD code)
        rows = self.rows
        if cur is not None:
            if can_continue:
                # Rows near the one playing are not jumps: the row playing on stands for them.
                lo, hi = np.searchsorted(rows, (cur - self.window, cur + self.window + 1))
                near = self.row_clips[lo:hi] == self.db.clip_index[cur]
                cost[lo:hi][near] = np.inf
            rows, cost = self._with_jump_costs(rows, cost, cur)
        pick = la.rank(cost, la.CANDIDATES, self.tie[rows])
        pick = pick[np.isfinite(cost[pick])]
        cand, base = rows[pick], cost[pick]
        if cur is not None and can_continue:
            own = float(np.sum((qn - self.db.features[cur]) ** 2))
            cand, base = np.append(cur, cand), np.append(own, base)     # first: a tie plays on
        total = base + self.ahead.future_cost(cand, root, self.sim_pos, self.sim_yaw, s)
        # Among equal totals: the row playing on, then the lowest frame, then the lowest clip.
        tied = np.flatnonzero(total == total.min())
        plays_on = cur is not None and can_continue and tied[0] == 0
        k = 0 if plays_on else tied[np.argmin(self.tie[cand[tied]])]
        return int(cand[k]), float(base[k])


    def _with_jump_costs(self, rows, cost, cur):
        """(rows, their feature cost plus the cost of jumping there): only for the
        rows that can still be among the candidates when there are many (a jump
        costs at least JUMP_COST, so a row whose feature cost alone is past the
        candidates' worst total cannot be one); the same candidates as costing all."""
        extra = self.margin * la.MARGIN_SCALE
        few = la.CANDIDATES * PRUNE_FACTOR
        if len(rows) > few:
            sub = la.smallest(cost, few, self.tie[rows])    # in row order; ties kept as among all rows
            total = cost[sub] + self.ahead.jump_cost(rows[sub], cur) + extra
            kth = np.partition(total, la.CANDIDATES - 1)[la.CANDIDATES - 1]
            if np.partition(cost, few)[few] + la.JUMP_COST + extra > kth:
                return rows[sub], total
        return rows, cost + self.ahead.jump_cost(rows, cur) + extra


PRUNE_FACTOR = 8    # the look-ahead prices jumps to this many times its candidates (more when that is not enough)


class _RootMotion:
    """Stage 4: the character's root (ground position and yaw), moved by the
    played rows' own root motion, pulled toward the spring character and
    clamped to the controller's path."""

    def __init__(self, db, root_positions, root_quats, settings, dt):
        self.dpos, drot = _row_deltas(db, root_positions, root_quats)
        self.dyaw = yaw_of(drot)
        # Per row: the share of the pull allowed (less while the data plants a foot).
        planted = db.contacts.any(axis=1) if db.contacts is not None else np.zeros(db.num_rows, dtype=bool)
        self.share = np.where(planted, settings.planted_adjustment, 1.0)
        self.ratio, self.clamp, self.clamp_a = settings.adjustment_ratio, settings.clamp_distance, settings.clamp_angle
        self.alpha = 1.0 - np.exp(-np.log(2.0) / settings.adjustment_halflife * dt)
        # With the look-ahead on, the heading may also be corrected at a small rate of its own.
        self.turn_floor = la.TURN_RATE * dt if settings.look_ahead > 0 else 0.0
        # The fastest turn a step may take (the data's own, corrections included).
        self.turn_cap = float(np.percentile(np.abs(self.dyaw), TURN_PERCENTILE)) if settings.turn_like_data \
            else np.inf

    def advance(self, px, py, yaw, row, sim_xy, sim_yaw, rate=1.0):
        """One step along the row being left: its own root motion (times the
        time warp's ``rate``), in our frame, then the pull toward the spring
        character (at most ratio * own motion)."""
        c, sn = np.cos(yaw), np.sin(yaw)
        lx, ly = self.dpos[row, 0], self.dpos[row, 1]
        dyaw_row = self.dyaw[row]
        if rate != 1.0:
            lx, ly, dyaw_row = lx * rate, ly * rate, dyaw_row * rate
        vx, vy = c * lx - sn * ly, sn * lx + c * ly
        px += vx
        py += vy
        yaw += dyaw_row
        alpha, ratio = self.alpha, self.ratio * self.share[row]
        ax, ay = (sim_xy[0] - px) * alpha, (sim_xy[1] - py) * alpha
        limit = ratio * np.hypot(vx, vy)
        mag = np.hypot(ax, ay)
        if mag > limit:
            ax, ay = ax * limit / max(mag, 1e-12), ay * limit / max(mag, 1e-12)
        px += ax
        py += ay
        dyw = springs.wrap_angle(sim_yaw - yaw)
        limit_a = ratio * abs(dyaw_row) + self.turn_floor
        step_a = float(np.clip(dyw * alpha, -limit_a, limit_a))
        yaw += capped_turn(dyaw_row, step_a, self.turn_cap) - dyaw_row
        return px, py, yaw

    def clamped(self, px, py, yaw, ctrl_xy, sim_yaw):
        """Within the clamp distance of the controller (the path the user asked
        for; the spring character only smooths it) and the clamp angle of the
        wanted facing."""
        clamp = self.clamp
        ex, ey = px - ctrl_xy[0], py - ctrl_xy[1]
        d = np.hypot(ex, ey)
        if d > clamp:
            px, py = ctrl_xy[0] + ex * clamp / d, ctrl_xy[1] + ey * clamp / d
        dyw = springs.wrap_angle(yaw - sim_yaw)
        if abs(dyw) > self.clamp_a:
            yaw = sim_yaw + np.sign(dyw) * self.clamp_a
        return px, py, yaw


TURN_PERCENTILE = 99.9   # the root's fastest turn per step: this percentile of the database's own


def capped_turn(data, correction, cap):
    """A step's whole yaw change: the data's own ``data`` plus ``correction``,
    held within ``cap`` (radians per step) unless the data alone turns faster
    (then a correction may only slow it)."""
    cap = max(cap, abs(data))
    return min(max(float(data + correction), -cap), cap)


@dataclass
class _Played:
    """Stages 2 and 4, per step."""

    rows: np.ndarray
    searched: np.ndarray
    jumped: np.ndarray
    cost: np.ndarray
    root_pos: np.ndarray
    root_yaw: np.ndarray
    phase: np.ndarray = None     # (S,) time warp: share of the way to the next row (None: off)
    rate: np.ndarray = None      # (S,) time warp: rows advanced on the step


def _sharp_change(want_v, v, settings):
    """Has the wanted velocity changed speed or turned enough to search at once?"""
    turn = np.arctan2(want_v[0] * v[1] - want_v[1] * v[0], want_v @ v)
    return (abs(np.hypot(*v) - np.hypot(*want_v)) > settings.force_search_speed
            or (np.hypot(*v) > 0.3 and np.hypot(*want_v) > 0.3 and abs(turn) > settings.force_search_angle))


def _play_rows(db, ctrl, sim_pos, sim_yaw, sim_vel, matcher, root, settings, fps, warp=None):
    """Stages 2 and 4, step by step: search on schedule, at a clip end, or when
    the wanted motion changes sharply; a best row close to the playing one is no
    jump; the root follows. ``warp`` (core.bake.time_warp.TimeWarp or None) sets the
    playback rate. A generator yielding progress (up to 0.8), returning
    :class:`_Played`."""
    S = len(ctrl)
    nxt = _next_rows(db)
    rows = np.empty(S, dtype=np.int64)
    searched = np.zeros(S, dtype=bool)
    jumped = np.zeros(S, dtype=bool)
    cost = np.zeros(S)
    root_pos = np.empty((S, 3))
    root_yaw = np.empty(S)
    interval = max(1, int(round(settings.search_interval * fps)))
    cur = None
    px, py = float(sim_pos[0, 0]), float(sim_pos[0, 1])
    yaw = float(sim_yaw[0])
    last_search = -interval
    want_v = sim_vel[0, :2].copy()
    phase, rates, rate = (None, None, 1.0) if warp is None else (np.zeros(S), np.ones(S), 1.0)
    for s in range(S):
        if s % 256 == 0:
            yield 0.8 * s / S
        if cur is not None:
            rate = 1.0 if warp is None else warp.step_rate(s, cur)
            px, py, yaw = root.advance(px, py, yaw, cur, sim_pos[s], sim_yaw[s], rate)
            if warp is None:
                cur = int(nxt[cur]) if nxt[cur] != cur else cur
            else:
                cur = warp.advance(cur)
        px, py, yaw = root.clamped(px, py, yaw, ctrl[s], sim_yaw[s])
        v = sim_vel[s, :2]
        at_end = cur is not None and (nxt[cur] == cur or not matcher.playable[cur])
        if cur is None or s - last_search >= interval or _sharp_change(want_v, v, settings) or at_end:
            best, best_cost = matcher.search(s, cur, cur is not None and not at_end, (px, py, yaw))
            searched[s] = True
            last_search = s
            want_v = v.copy()
            cost[s] = best_cost
            same_clip = cur is not None and db.clip_index[best] == db.clip_index[cur]
            if cur is None or not (same_clip and keep_playing(cur, best, True, settings.keep_window)) \
                    or (at_end and best != cur):
                if cur is not None:
                    jumped[s] = True
                cur = int(best)
                if warp is not None:
                    warp.restart()
        elif s > 0:
            cost[s] = cost[s - 1]
        rows[s] = cur
        if warp is None:
            matcher.played(cur, (px, py, yaw))
        else:
            matcher.played(cur, (px, py, yaw), rate=rate, moved_on=not jumped[s])
            phase[s], rates[s] = warp.phase, rate
        root_pos[s] = (px, py, 0.0)
        root_yaw[s] = yaw
    return _Played(rows=rows, searched=searched, jumped=jumped, cost=cost, root_pos=root_pos, root_yaw=root_yaw,
                   phase=phase, rate=rates)


def _time_warp(db, root, sim_vel, settings, fps):
    """The playback rate's state (core.bake.time_warp), or None when the knob is off."""
    if not settings.time_warp > 0:
        return None
    speeds = twp.row_speeds(root.dpos, db.clip_index, db.clip_offsets, fps)
    wanted = np.hypot(sim_vel[:, 0], sim_vel[:, 1])
    return twp.TimeWarp(speeds, _next_rows(db), wanted, settings.time_warp, 1.0 / fps)


def _warped_pose(db, pose_locations, pose_rotations, played, row_steps, hips, fps, halflife):
    """Stage 3 under the time warp: poses blended at each step's playback
    position, inertialized at jumps. Returns (played with the nearest rows,
    the data's own ground travel of each step into the next (S, 3), locations,
    rotations)."""
    nxt = _next_rows(db)
    vlocs, vrots, vrows, vnxt = twp.warped_rows(pose_locations, pose_rotations, played.rows, played.phase,
                                                played.rate, nxt)
    locs, rots = _inertialize(vlocs, vrots, vrows, played.jumped, hips, vnxt, fps, halflife)
    ahead = np.append(played.rate[1:], played.rate[-1:])           # the rate of the step into the next
    steps = row_steps[played.rows] * ahead[:, None]
    return replace(played, rows=twp.nearest_rows(played.rows, played.phase, nxt)), steps, locs, rots


def _inertialize(pose_locations, pose_rotations, rows, jumped, hips, nxt, fps, halflife):
    """Stage 3: the played rows' pose channels, float64 (S, J, 3) and (S, J, 4),
    with each jump's pose difference (every joint's rotation and the hips'
    location) fading over ``halflife`` (core.maths.inertialization's offsets; between
    two jumps the fade has a closed form, so the steps of each piece are done
    at once)."""
    dt = 1.0 / fps
    lin = (pose_locations[nxt, hips] - pose_locations[:, hips]) * fps
    locs = pose_locations[rows].astype(np.float64)
    rots = tf.quat_normalize(pose_rotations[rows].astype(np.float64))
    J = rots.shape[1]
    x, v, px, pv = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros(3), np.zeros(3)
    jumps = np.flatnonzero(jumped[1:]) + 1
    # Only the rows jumped from and to need their joints' angular velocities.
    srcs, dsts = nxt[rows[jumps - 1]], rows[jumps]
    av_src, av_dst = _angular_velocities_of(pose_rotations, nxt, fps, srcs), \
        _angular_velocities_of(pose_rotations, nxt, fps, dsts)
    for i, (a, b) in enumerate(zip(jumps, np.append(jumps[1:], len(rows)))):
        # What was playing would have continued to nxt[rows[a - 1]] at this instant:
        # the new offset is what was shown (with the offset still fading) less the new row.
        src, r = srcs[i], dsts[i]
        shown = tf.quat_mul(tf.quat_from_rotvec(x), tf.quat_normalize(pose_rotations[src].astype(np.float64)))
        x = tf.quat_to_rotvec(tf.quat_mul(shown, tf.quat_conjugate(tf.quat_normalize(
            pose_rotations[r].astype(np.float64)))))
        v = (av_src[i] + v) - av_dst[i]
        px = (pose_locations[src, hips] + px) - pose_locations[r, hips]
        pv = (lin[src] + pv) - lin[r]
        # The jump's own step shows the whole offset (what was playing, one data
        # step on); the fade starts from there (the last value carries on).
        t = np.arange(0, b - a + 1) * dt
        xs, vs = decay_spring(x[None], v[None], halflife, t[:, None, None])
        ps, pvs = decay_spring(px[None], pv[None], halflife, t[:, None])
        rots[a:b] = tf.quat_mul(tf.quat_from_rotvec(xs[:-1]), rots[a:b])
        locs[a:b, hips] += ps[:-1]
        x, v, px, pv = xs[-1], vs[-1], ps[-1], pvs[-1]
    return locs, rots


def _pose_root_bone(skeleton, locs, rots, root_pos, root_yaw):
    """Put the character frame on the root bone's channels (in bone axes), in
    place; returns the frame's yaw quaternions (S, 4)."""
    root_quat = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), root_yaw)
    root_bone = vr.root_bone_matrices(root_pos, root_quat)
    basis = np.linalg.inv(skeleton.offsets[skeleton.root]) @ root_bone
    locs[:, skeleton.root] = basis[:, :3, 3]
    rots[:, skeleton.root] = tf.matrix_to_quat(basis[:, :3, :3])
    return root_quat


def forward_kinematics(skeleton, locs, rots):
    """Armature-space bone matrices (S, J, 4, 4) of pose channels (S, J, 3) and (S, J, 4)."""
    return tf.pose_fk(skeleton.parents, None, tf.compose(locs, tf.quat_to_matrix(rots)), skeleton.offsets)


def apply_foot_lock(skeleton, locs, rots, contacts, root_quat, dt, settings, speeds=None):
    """Foot lock (``settings.foot_lock``) and the toe floor (``settings.toe_floor``)
    on the legs of ``skeleton``, by two-joint IK on hip-knee-ankle, the foot
    keeping its world orientation. ``contacts`` (S, 2) per step, ``root_quat``
    (S, 4) the character's yaw (the knees' forward), ``speeds`` (S, 2) the take's
    toe speeds (lock by data) or None. Returns (rotations, locked (S, 2), lock
    count, toe positions (S, 2, 3))."""
    pose = forward_kinematics(skeleton, locs, rots)
    S = len(locs)
    locked = np.zeros((S, 2), dtype=bool)
    count = 0
    legs = _LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), settings.knee_min_bend)
    graded_floor = settings.toe_floor is not None and settings.toe_floor_rate > 0
    toes_out = np.empty((S, 2, 3))
    for side, (up, low, foot, toe) in enumerate(skeleton.legs):
        toe_pos = pose[:, toe, :3, 3]
        heel = toe_pos - pose[:, foot, :3, 3]
        # The foot's heading on the ground (unwrapped), held by the lock with the toe.
        heading = np.unwrap(np.arctan2(heel[:, 1], heel[:, 0]))
        turn = np.zeros(S)
        toes_out[:, side] = toe_pos
        if settings.foot_lock:
            held, locked[:, side], n = fl.run_foot_lock(
                contacts[:, side], np.column_stack([toe_pos, heading]),
                None if speeds is None else speeds[:, side], dt,
                lock_speed=settings.lock_speed, on_contact=settings.lock_on_contact,
                unlock_distance=settings.unlock_distance, blend_halflife=settings.lock_blend_halflife)
            count += n
            if settings.release_in_joints:
                _lock_in_joint_space(legs, side, locs, rots, locked[:, side], heading, dt, settings)
                continue
            wanted = held[:, :3]
            if settings.lock_on_contact:
                turn = held[:, 3] - heading
        else:
            wanted = toe_pos.copy()
        if settings.toe_floor is not None and not graded_floor:
            # Blends after jumps can swing a free toe through the ground: keep it above.
            wanted[:, 2] = np.maximum(wanted[:, 2], settings.toe_floor)
        move = (np.linalg.norm(wanted - toe_pos, axis=1) > 1e-7) | (np.abs(turn) > 1e-7)
        if move.any():
            idx = np.flatnonzero(move)
            legs.solve(rots, side, idx, wanted[idx], turn[idx])
            toes_out[idx, side] = wanted[idx]
    if graded_floor or settings.release_in_joints:
        toes_out = _lift_toes(skeleton, locs, rots, root_quat, settings.toe_floor,
                              settings.toe_floor_rate * dt if graded_floor else 0.0, settings.knee_min_bend)
    return rots, locked, count, toes_out


def _warp_strides(skeleton, locs, rots, root_quat, played, row_steps, dt, min_bend=0.0, rate=0.0):
    """Stride warping (core.bake.stride_warp): the legs' IK scales each step along
    the data's travel by the root's travel over the data's (in place); the
    scale changes by at most ``rate`` a second (0: no limit)."""
    k, u = sw.stride_scale(played.root_pos, sw.data_travel(played.root_pos, played.root_yaw, row_steps,
                                                           played.rows), dt, played.jumped, rate=rate)
    if np.abs(k - 1.0).max() < 1e-6:
        return
    pose = forward_kinematics(skeleton, locs, rots)
    toes, _ = leg_points(skeleton, pose)
    wanted = sw.warped_toes(toes, played.root_pos, k, u)
    legs = _LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    for side in range(len(skeleton.legs)):
        idx = np.flatnonzero(np.linalg.norm(wanted[:, side] - toes[:, side], axis=1) > 1e-6)
        if len(idx):
            legs.solve(rots, side, idx, wanted[idx, side], np.zeros(len(idx)))


class _LegSolver:
    """Two-joint IK of the legs of one pose (S, J, 4, 4): the ankle moved so the
    toe lands where wanted, the foot turned about the vertical by a heading
    difference (pivoting on its toe), keeping its own world orientation."""

    def __init__(self, skeleton, pose, forward, min_bend=0.0):
        self.skeleton, self.pose, self.forward, self.min_bend = skeleton, pose, forward, min_bend
        self.world_q = tf.matrix_to_quat(pose[:, :, :3, :3])
        self.offset_q = tf.matrix_to_quat(skeleton.offsets[:, :3, :3])

    def solve(self, rots, side, idx, wanted, turn):
        """Pose channels ``rots`` of leg ``side`` on steps ``idx`` (in place) so the
        toe reaches ``wanted`` (n, 3) with the foot turned by ``turn`` (n,)."""
        sk, pose, world_q, offset_q = self.skeleton, self.pose, self.world_q, self.offset_q
        up, low, foot, toe = sk.legs[side]
        heel = pose[idx, toe, :3, 3] - pose[idx, foot, :3, 3]
        hip_p, knee_p, ankle_p = (pose[idx, b, :3, 3] for b in (up, low, foot))
        # The ankle goes where the turned foot puts it.
        spin = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), turn)
        target = _soft_reach(hip_p, knee_p, ankle_p, wanted - tf.quat_rotate(spin, heel), min_bend=self.min_bend)
        d_hip, d_knee = ik.two_bone_ik(hip_p, knee_p, ankle_p, target, self.forward[idx], pole_blend=IK_POLE_BLEND)
        # New world rotations: upper and lower leg turned, the foot keeps its own
        # world orientation (turned by the held heading).
        up_w = tf.quat_mul(d_hip, world_q[idx, up])
        low_w = tf.quat_mul(d_knee, world_q[idx, low])
        foot_w = tf.quat_mul(spin, world_q[idx, foot])
        parent_up = world_q[idx, sk.parents[up]]
        # basis = (parent_world * offset)^-1 * world, for rotations.
        rots[idx, up] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(parent_up, offset_q[up])), up_w)
        rots[idx, low] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(up_w, offset_q[low])), low_w)
        rots[idx, foot] = tf.quat_mul(tf.quat_conjugate(tf.quat_mul(low_w, offset_q[foot])), foot_w)


def _lock_in_joint_space(legs, side, locs, rots, locked, heading, dt, settings):
    """Foot lock of one leg with the release blended in the leg's joint rotations
    (core.bake.leg_release): each lock pins the toe where the leg is on its first
    step (as if still free) and holds it by IK; after it, the IK's correction of
    thigh, shin and foot decays to the animation. ``rots`` changes in place.
    Each release needs only its lock's last two steps solved, so the rest of
    every lock is solved at once at the end."""
    sk, pose = legs.skeleton, legs.pose
    up, low, foot, toe = sk.legs[side]
    bones, chain = [up, low, foot], [up, low, foot, toe]
    anim = rots[:, bones].copy()
    S = len(rots)
    since, c0, v0 = None, None, None      # the last release, its correction and velocity
    held = []                             # (steps, toe targets, foot turns) left to solve
    for first, end in lr.lock_runs(locked) + [(S, S)]:
        span = slice(min(first, S - 1), min(first + 1, S))
        leg = anim[span]
        if since is not None:
            span = slice(since, min(first + 1, S))
            leg = lr.released(anim[span], c0, v0, span.stop - since, dt, settings.lock_blend_halflife)
            rots[since:first, bones] = leg[:first - since]
        if first >= S:
            break
        heads, _ = lr.chain_points(pose[span, sk.parents[up]][-1:], sk.offsets[chain], locs[span][-1:, chain],
                                   np.concatenate([leg[-1:], rots[span, toe][-1:, None]], axis=1))
        idx = np.arange(first, end)
        wanted = np.repeat(heads[:, 3], len(idx), axis=0)
        turn = np.zeros(len(idx))
        if settings.lock_on_contact:
            wanted[:, 2] = pose[idx, toe, 2, 3]        # the data's height; place and heading held
            turn = springs.wrap_angle(lr.toe_heading(heads[0, 3], heads[0, 2]) - heading[idx])
        tail = max(end - 2, first) - first
        legs.solve(rots, side, idx[tail:], wanted[tail:], turn[tail:])
        held.append((idx[:tail], wanted[:tail], turn[:tail]))
        c = lr.corrections(rots[first + tail:end][:, bones], anim[first + tail:end])
        since, c0, v0 = end, c[-1], lr.first_derivative(c, dt)
    if held:
        legs.solve(rots, side, *(np.concatenate(parts) for parts in zip(*held)))


def _lift_toes(skeleton, locs, rots, root_quat, floor, rate, min_bend=0.0):
    """Toes kept above ``floor`` (None: none) by IK lifts that change by at most
    ``rate`` metres a step (0: exactly the depth, core.bake.leg_release.floor_lift).
    ``rots`` changes in place; returns the toes (S, 2, 3)."""
    pose = forward_kinematics(skeleton, locs, rots)
    toes, _ = leg_points(skeleton, pose)
    if floor is None:
        return toes
    legs = _LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    for side in range(len(skeleton.legs)):
        need = np.maximum(floor - toes[:, side, 2], 0.0)
        lift = lr.floor_lift(need, rate) if rate > 0 else need
        idx = np.flatnonzero(lift > 1e-7)
        if len(idx):
            wanted = toes[idx, side].copy()
            wanted[:, 2] += lift[idx]
            legs.solve(rots, side, idx, wanted, np.zeros(len(idx)))
            toes[idx, side] = wanted
    return toes


IK_POLE_BLEND = 0.15   # a knee off the hip-ankle line by under this share of the thigh bends toward forward
SOFT_REACH = 0.97   # share of the leg's length beyond which a target is eased in (soft IK)


def _soft_reach(hip, knee, ankle, target, soft=SOFT_REACH, min_bend=0.0):
    """Ankle targets (n, 3) eased toward the hip near the leg's full length: the
    last few percent of reach are approached exponentially, so a held foot that
    the body moves away from stretches the knee smoothly instead of snapping it
    straight (the analytic IK's knee angle changes fastest there). Targets no
    farther than the animated ankle are left as they are. ``min_bend`` > 0
    (radians): the knee is never eased straighter than this or the animation's
    own bend, whichever is less (near straight, each millimetre of reach turns
    the knee by degrees)."""
    thigh, shin = np.linalg.norm(knee - hip, axis=1), np.linalg.norm(ankle - knee, axis=1)
    length = thigh + shin
    d = target - hip
    dist = np.linalg.norm(d, axis=1)
    own = np.linalg.norm(ankle - hip, axis=1)
    # The farthest reach: the straight leg, or the reach at the least bend.
    cap = length
    if min_bend > 0:
        bent = np.sqrt(thigh ** 2 + shin ** 2 + 2.0 * thigh * shin * np.cos(min_bend))
        cap = np.minimum(np.maximum(own, bent), length)
    # Never short of the animation's own reach (a standing leg keeps its foot down).
    start = np.minimum(np.maximum(soft * length, own), cap)
    room = np.maximum(cap - start, 1e-9)
    over = np.maximum(dist - start, 0.0)
    eased = np.where(over > 0.0, start + room * (1.0 - np.exp(-over / room)), dist)
    return hip + d * (eased / np.maximum(dist, 1e-12))[:, None]


TOE_FLOOR_BELOW_PLANTED = 0.01   # m: the toe floor lies this far under the planted toe height


def toe_floor(toe_heights, contacts):
    """The height toes are kept above: the planted toe height (median over
    contact frames) less 1 cm."""
    return metrics.planted_height(np.ravel(toe_heights), np.ravel(contacts)) - TOE_FLOOR_BELOW_PLANTED


def leg_points(skeleton, pose):
    """(toes, ankles): (S, 2, 3) positions of both legs' toe and ankle (foot)
    bones in ``pose`` (S, J, 4, 4); (None, None) when the skeleton has no legs."""
    if not skeleton.legs:
        return None, None
    toes = pose[:, [leg[3] for leg in skeleton.legs]][:, :, :3, 3]
    ankles = pose[:, [leg[2] for leg in skeleton.legs]][:, :, :3, 3]
    return toes, ankles


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
