"""Stage 5 of the bake: the legs' stages applied to the pose by IK: stride
warping, foot lock (released in the joints or by a toe offset) and the toe floor."""

from dataclasses import dataclass

import numpy as np

from ...maths import springs
from ...maths import transforms as tf
from ...skeleton.contacts import contact_height
from ..pose import forward_kinematics, leg_joints
from ..resume import first_change
from . import foot_lock as fl
from . import leg_release as lr
from . import stride_warp as sw
from .solver import LegSolver, leg_points
from ...maths import same_everywhere


def apply_foot_lock(skeleton, locs, rots, contacts, root_quat, dt, settings, speeds=None, previous=None, kept=None):
    """Foot lock (``settings.foot_lock.enabled``) and the toe floor (``settings.toe_floor``)
    on the legs of ``skeleton``, by two-joint IK on hip-knee-ankle, the foot
    keeping its world orientation. ``contacts`` (S, 2) per step (with
    ``lock_on_touchdown``, each begun where the toe came down just before it:
    core.bake.legs.foot_lock.with_touchdowns), ``root_quat``
    (S, 4) the character's yaw (the knees' forward), ``speeds`` (S, 2) the take's
    toe speeds (lock by data) or None. Returns (rotations, locked (S, 2), lock
    count, toe positions (S, 2, 3)).

    ``kept`` (a dict, optional) receives what the step-by-step parts (the lock
    of each foot, the releases in the joints) read and kept; given back as
    ``previous`` to a later call on the same skeleton, they go on from their
    last state kept before their first changed input: the same result."""
    previous, kept = previous or {}, {} if kept is None else kept
    kept["locks"], kept["joints"] = {}, {}
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    S = len(locs)
    locked = np.zeros((S, 2), dtype=bool)
    count = 0
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), settings.legs.knee_min_bend)
    graded_floor = settings.toe_floor is not None and settings.legs.toe_floor_rate > 0
    toes_out = np.empty((S, 2, 3))
    in_joints = []
    downs = lock_flags(pose, skeleton.legs, contacts, dt, settings)
    for side, (up, low, foot, toe) in enumerate(skeleton.legs):
        toe_pos = pose[:, toe, :3, 3]
        heel = toe_pos - pose[:, foot, :3, 3]
        # The foot's heading on the ground (unwrapped), held by the lock with the toe.
        heading = np.unwrap(same_everywhere.arctan2(heel[:, 1], heel[:, 0]))
        turn = np.zeros(S)
        toes_out[:, side] = toe_pos
        if settings.foot_lock.enabled:
            down = downs[:, side]
            held, locked[:, side], n, kept["locks"][side] = fl.run_foot_lock_kept(
                down, np.column_stack([toe_pos, heading]),
                None if speeds is None else speeds[:, side], dt, previous.get("locks", {}).get(side),
                lock_speed=settings.foot_lock.lock_speed, on_contact=settings.foot_lock.lock_on_contact,
                unlock_distance=settings.foot_lock.unlock_distance, blend_halflife=settings.foot_lock.lock_blend_halflife)
            count += n
            if settings.foot_lock.release_in_joints:
                in_joints.append((side, heading))     # the legs are independent: both done together below
                continue
            wanted = held[:, :3]
            if settings.foot_lock.lock_on_contact:
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
    if in_joints:
        kept["joints"] = lock_in_joint_space(legs, locs, rots, [(side, locked[:, side], heading)
                                                                for side, heading in in_joints], dt, settings,
                                             previous.get("joints"))
    if graded_floor or settings.foot_lock.release_in_joints:
        toes_out = lift_toes(skeleton, locs, rots, root_quat, settings.toe_floor,
                              settings.legs.toe_floor_rate * dt if graded_floor else 0.0, settings.legs.knee_min_bend)
    return rots, locked, count, toes_out


@dataclass
class KeptJoints:
    """What :func:`joint_space_locks` of one leg read and made: to go on from
    the end of a lock run when only later steps change."""

    params: tuple
    inputs: tuple           # per step: the leg's channels, its joints' pose, the knees' forward, locks, heading
    ends: list              # (end, correction, its velocity) after each lock run
    out: np.ndarray = None  # (S, 3, 4) the leg's rotations (thigh, shin, foot) made


def lock_flags(pose, legs, contacts, dt, settings):
    """(S, 2) the steps each foot may lock on: the played data's contacts (S, 2),
    each begun where the toe came down (``lock_on_touchdown``), and with
    ``lock_stance`` a stance foot where the data has neither foot down (``pose``
    the world matrices, ``legs`` the skeleton's (hip, knee, ankle, toe) joints)."""
    downs = np.array(contacts, dtype=bool)
    toes = np.stack([pose[:, leg[3], :3, 3] for leg in legs], axis=1)
    if settings.toe_floor is None:
        return downs
    planted = settings.toe_floor + TOE_FLOOR_BELOW_PLANTED
    if settings.foot_lock.lock_on_touchdown:
        for side in range(downs.shape[1]):
            downs[:, side] = fl.with_touchdowns(downs[:, side], toes[:, side, 2], planted, dt)
    if settings.foot_lock.lock_stance and downs.shape[1] == 2:
        heel = toes - np.stack([pose[:, leg[2], :3, 3] for leg in legs], axis=1)
        headings = np.unwrap(same_everywhere.arctan2(heel[..., 1], heel[..., 0]), axis=0)
        downs = fl.with_stance(downs, toes, headings, planted, dt)
    return downs


def lock_in_joint_space(legs, locs, rots, sides, dt, settings, previous=None):
    """:func:`joint_space_locks` of each ``(side, locked (S,), heading (S,))`` of
    ``sides``, run side by side: the legs do not touch each other's joints, so
    each round's IK solves of all legs are made in one call (``legs.solve_many``).
    ``previous``: what an earlier call returned ({side: :class:`KeptJoints`}),
    for each leg to go on after the last lock run that ended before its first
    changed input. Returns what this call kept."""
    params = (float(dt), settings.foot_lock.lock_blend_halflife, settings.foot_lock.lock_on_contact,
              legs.min_bend)
    kept, runs = {}, []
    for side, locked, heading in sides:
        up, low, foot, toe = legs.skeleton.legs[side]
        chain = [up, low, foot, toe]
        inputs = (rots[:, chain], locs[:, chain], legs.pose[:, [legs.skeleton.parents[up]] + chain], legs.forward,
                  locked, heading)
        before = (previous or {}).get(side)
        start = None
        if before is not None and before.params == params:
            first = first_change(before.inputs, inputs)
            done = sum(1 for end, _, _ in before.ends if end < first)   # lock runs read and ended before it
            if done:
                start = (done,) + tuple(before.ends[done - 1]) + (before.out,)
        kept[side] = KeptJoints(params, inputs, list(before.ends[:start[0]]) if start else [])
        runs.append(joint_space_locks(legs, side, locs, rots, locked, heading, dt, settings, start, kept[side].ends))
    asks = [next(run, None) for run in runs]
    while any(a is not None for a in asks):
        legs.solve_many(rots, [a for a in asks if a is not None])
        asks = [None if a is None else next(run, None) for run, a in zip(runs, asks)]
    for side, k in kept.items():
        k.out = rots[:, list(legs.skeleton.legs[side][:3])].copy()
    return kept


def joint_space_locks(legs, side, locs, rots, locked, heading, dt, settings, start=None, ends=None):
    """Foot lock of one leg with the release blended in the leg's joint rotations
    (core.bake.legs.leg_release): each lock pins the toe where the leg is on its first
    step (as if still free) and holds it by IK; after it, the IK's correction of
    thigh, shin and foot decays to the animation. ``rots`` changes in place.
    Each release needs only its lock's last two steps solved, so the rest of
    every lock is solved at once at the end. A generator: it yields each IK
    solve it needs, ``(side, steps, toe targets, foot turns)``, to be made
    (into ``rots``) before it is resumed. ``start``: (lock runs done, the
    last one's end, correction and velocity, the leg's rotations then made
    (S, 3, 4)) to go on from there; ``ends`` (a list) gets each run's
    (end, correction, velocity)."""
    sk, pose = legs.skeleton, legs.pose
    up, low, foot, toe = sk.legs[side]
    bones, chain = [up, low, foot], [up, low, foot, toe]
    anim = rots[:, bones].copy()
    S = len(rots)
    since, c0, v0 = None, None, None      # the last release, its correction and velocity
    held = []                             # (steps, toe targets, foot turns) left to solve
    runs = lr.lock_runs(locked)
    if start is not None:
        done, since, c0, v0, out = start
        runs = runs[done:]
        rots[:since, bones] = out[:since]
    for first, end in runs + [(S, S)]:
        span = slice(min(first, S - 1), min(first + 1, S))
        leg = anim[span]
        if since is not None:
            span = slice(since, min(first + 1, S))
            leg = lr.released(anim[span], c0, v0, span.stop - since, dt, settings.foot_lock.lock_blend_halflife)
            rots[since:first, bones] = leg[:first - since]
        if first >= S:
            break
        heads, _ = lr.chain_points(pose[span, sk.parents[up]][-1:], sk.offsets[chain], locs[span][-1:, chain],
                                   np.concatenate([leg[-1:], rots[span, toe][-1:, None]], axis=1))
        idx = np.arange(first, end)
        wanted = np.repeat(heads[:, 3], len(idx), axis=0)
        turn = np.zeros(len(idx))
        if settings.foot_lock.lock_on_contact:
            wanted[:, 2] = pose[idx, toe, 2, 3]        # the data's height; place and heading held
            turn = springs.wrap_angle(lr.toe_heading(heads[0, 3], heads[0, 2]) - heading[idx])
        tail = max(end - 2, first) - first
        yield side, idx[tail:], wanted[tail:], turn[tail:]
        held.append((idx[:tail], wanted[:tail], turn[:tail]))
        c = lr.corrections(rots[first + tail:end][:, bones], anim[first + tail:end])
        since, c0, v0 = end, c[-1], lr.first_derivative(c, dt)
        if ends is not None:
            ends.append((since, c0, v0))
    if held:
        yield (side, *(np.concatenate(parts) for parts in zip(*held)))


def lift_toes(skeleton, locs, rots, root_quat, floor, rate, min_bend=0.0):
    """Toes kept above ``floor`` (None: none) by IK lifts that change by at most
    ``rate`` metres a step (0: exactly the depth, core.bake.legs.leg_release.floor_lift).
    ``rots`` changes in place; returns the toes (S, 2, 3)."""
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    toes, _ = leg_points(skeleton, pose)
    if floor is None:
        return toes
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
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


def warp_strides(skeleton, locs, rots, root_quat, played, row_steps, dt, min_bend=0.0, rate=0.0):
    """Stride warping (core.bake.legs.stride_warp): the legs' IK scales each step along
    the data's travel by the root's travel over the data's (in place); the
    scale changes by at most ``rate`` a second (0: no limit)."""
    k, u = sw.stride_scale(played.root_pos, sw.data_travel(played.root_pos, played.root_yaw, row_steps,
                                                           played.rows), dt, played.jumped, rate=rate)
    if np.abs(k - 1.0).max() < 1e-6:
        return
    pose = forward_kinematics(skeleton, locs, rots, leg_joints(skeleton))
    toes, _ = leg_points(skeleton, pose)
    wanted = sw.warped_toes(toes, played.root_pos, k, u)
    legs = LegSolver(skeleton, pose, tf.quat_rotate(root_quat, np.array([0.0, -1.0, 0.0])), min_bend)
    for side in range(len(skeleton.legs)):
        idx = np.flatnonzero(np.linalg.norm(wanted[:, side] - toes[:, side], axis=1) > 1e-6)
        if len(idx):
            legs.solve(rots, side, idx, wanted[idx, side], np.zeros(len(idx)))


TOE_FLOOR_BELOW_PLANTED = 0.01   # m: the toe floor lies this far under the planted toe height


def toe_floor(toe_heights, contacts):
    """The height toes are kept above: the planted toe height (median over
    contact frames) less 1 cm."""
    return contact_height(np.ravel(toe_heights), np.ravel(contacts)) - TOE_FLOOR_BELOW_PLANTED
