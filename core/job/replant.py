"""A bake retargeted onto another rig, its feet planted again on that rig's own
legs: the database's foot contacts enforced once more (foot lock and two-joint
IK, core.bake.legs) in the target's body frame (metres, Z up), after the hips
are lifted or lowered so that a skinned mesh's soles, not its toe joints, stand
on the floor.

The caller retargets the baked frames (core.retarget.frames.retarget_frames)
and reads how high the toes stand above the mesh's soles; :func:`replant_feet`
does the rest on arrays and returns the new keys. Nothing here reads or writes
Blender data.
"""

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..bake import pipeline
from ..bake.legs import floor
from ..bake.legs.floor import floor_ease_steps
from ..maths import transforms as tf
from ..retarget import frames as rt_frames

UNMAPPED_LEGS = ("the target's legs are not all mapped (hip, knee, ankle, toes), so its feet were not "
                 "planted again")


@dataclass
class Replanted:
    """The retarget's keys with the feet planted again on the target's legs."""

    rotations: np.ndarray           # (F, K, 4) the keyed bones' local quaternions, continuous over frames
    locations: np.ndarray           # (F, L, 3) the located bones' locations, in the target's units
    foot_locks: Optional[int]       # foot locks on the target's legs (None: its feet were not planted again)
    sole_shift: Optional[float]     # m the hips were lifted (or lowered, < 0) onto the soles (None: not moved)
    warnings: list                  # sentences for the report
    floor_lifts: object = None      # core.bake.legs.floor.FloorLifts per frame (None: its feet were not planted again)


def frame_contacts(result, times):
    """(foot contacts (F, 2), root yaw (F,) rad) of a bake's ``result`` (a
    core.bake.pipeline.BakeResult) on the frames at ``times`` (s from the
    first), as the bake's report has them per frame: what :func:`replant_feet`
    reads, for a caller without the report (the live preview measures none)."""
    at = pipeline.step_index(result, times)
    return result.contacts[at], pipeline.yaw_of(result.root_quat[at])


def frame_toe_ground(result, times):
    """(F, 2) the ground's height under the bake's toes on the frames at ``times``
    (the database skeleton's metres), or None when it walked the flat floor."""
    if getattr(result, "toe_ground", None) is None:
        return None
    return result.toe_ground[pipeline.step_index(result, times)]


def target_legs(names, target_map):
    """The target's (hip, knee, ankle, toe) bone indices of each mapped leg."""
    legs = []
    for side in ("Left", "Right"):
        chain = [target_map.get(side + k) for k in ("UpperLeg", "LowerLeg", "Foot", "Toes")]
        if all(chain):
            legs.append(tuple(names.index(b) for b in chain))
    return legs


def replant_feet(plan, target, target_map, result, contacts, root_yaw, fps, settings, toe_above_soles=None,
                 soles=None, toe_ground=None):
    """Plant the feet of ``result`` (a core.retarget.frames.Result of ``plan``
    onto ``target``, a RetargetSkeleton whose canonical joints ``target_map``
    names) again on the target's legs, where ``contacts`` (F, 2) flag the
    database's foot contacts, ``root_yaw`` (F,) the bake's root heading, at
    ``fps`` scene frames per second, with the bake's ``settings`` (the toe
    floor replaced by the target's own). ``toe_above_soles``: how high the
    target's toes stand above its mesh's soles at rest (m), or None (no mesh);
    ``soles``: the mesh's sole points per leg (points in the foot's frame, in
    the toe's), kept on the floor, or None (the flat floor only).
    ``toe_ground`` (F, 2): the ground's height under the bake's toes
    (:func:`frame_toe_ground`; None: the flat floor): the toes' heights are
    then read above it, and no single toe floor is kept (the ground is not flat).

    Returns a :class:`Replanted`; when a leg is not mapped (or the plan's
    bones follow constraints of their own) the keys are left as they are."""
    names = list(target.names)
    J = len(names)
    frames = len(result.rotations)
    t_locs = np.zeros((frames, J, 3))
    t_rots = np.zeros((frames, J, 4))
    t_rots[..., 0] = 1.0
    t_locs[:, result.located] = result.locations * target.scale
    t_rots[:, result.keyed] = result.rotations
    legs = target_legs(names, target_map)
    keyed = set(int(j) for j in result.keyed)
    if not (len(legs) == 2 and all(j in keyed for leg in legs for j in leg[:3])
            and not getattr(plan, "overridden", None)):
        return Replanted(rotations=result.rotations, locations=result.locations, foot_locks=None, sole_shift=None,
                         warnings=[UNMAPPED_LEGS])
    t_skel = pipeline.BakeSkeleton(names=names, parents=np.asarray(target.parents), offsets=target.offsets,
                                   root=0, hips=names.index(target_map["Hips"]), legs=legs)
    under = None if toe_ground is None else np.asarray(toe_ground) * plan.scale
    locations, sole_shift = _stand_on_soles(plan, target, t_skel, t_locs, t_rots, result, contacts,
                                             toe_above_soles, under)
    root_quat = tf.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), root_yaw)
    floor = _target_floor(t_skel, t_locs, t_rots, contacts) if under is None else None
    fset = dataclasses.replace(settings, toe_floor=floor)
    t_rots, _locked, count, _toes = pipeline.apply_foot_lock(
        t_skel, t_locs, t_rots, contacts, root_quat, 1.0 / fps, fset)
    # On a ground the bake's feet already stand on it (core.bake.legs.ground); the flat floor's clearance is for height 0.
    lifts = (clear_target_floor(target, t_skel, t_locs, t_rots, root_quat, toe_above_soles, settings, soles,
                                half=floor_ease_steps(1.0 / fps))
             if under is None else None)
    return Replanted(rotations=tf.quat_unroll(t_rots[:, result.keyed], axis=0), locations=locations,
                     foot_locks=int(count), sole_shift=sole_shift, warnings=[], floor_lifts=lifts)


def clear_target_floor(target, t_skel, t_locs, t_rots, root_quat, above, settings, soles=None,
                       ground=floor.flat_ground, half=0):
    """Nothing of the target's feet under ``ground`` (core.bake.legs.floor):
    its toe joints and toe tips (core.bake.legs.floor.tip_offsets) kept
    ``above`` (m, a skinned mesh's soles under its toe joints; 0 without a
    mesh) over it, the mesh's ``soles`` on it. ``t_rots`` changes in place;
    returns the FloorLifts."""
    lift = 0.0 if above is None else max(float(above), 0.0)
    tips = floor.tip_offsets(t_skel.parents, t_skel.offsets, getattr(target, "lengths", None), t_skel.legs)
    feet, toes = (None, None) if soles is None else ([s[0] for s in soles], [s[1] for s in soles])
    return floor.clear_floor(t_skel, t_locs, t_rots, root_quat, tips, ground, settings.legs.knee_min_bend,
                             clearance=lift, foot_points=feet, toe_points=toes, half=half)


def _stand_on_soles(plan, target, t_skel, t_locs, t_rots, result, contacts, above, under=None):
    """With a skinned mesh (``above`` not None), lift or lower the hips so that
    the toe floor (the planted toe height less 1 cm, which the toes are kept
    above) lies as high as the toe joints stand above the mesh's soles at rest:
    the mesh, not the bones, stands on the floor, and a toe held at the toe
    floor keeps its sole on it. Moves the hips of ``t_locs`` in place; returns
    the result's locations with the hips moved too and the shift (world
    metres), or the locations as they were and None. ``under`` (F, 2): the
    ground under the toes (None: the flat floor), their heights read above it."""
    if above is None or not np.any(contacts):
        return result.locations, None
    pose = pipeline.forward_kinematics(t_skel, t_locs, t_rots)
    z = np.stack([pose[:, leg[3], 2, 3] for leg in t_skel.legs], axis=1)
    if under is not None:
        z = z - under
    dz = above - pipeline.toe_floor(z, contacts)
    # The hips' location is in its rest frame; its parents only turn about
    # the vertical, so a world lift is the same local vector on every frame.
    hips = plan.target_hips
    lift = tf.quat_rotate(tf.quat_conjugate(plan.rest_rot[hips]), np.array([0.0, 0.0, dz]))
    t_locs[:, hips] += lift
    k = int(np.flatnonzero(result.located == hips)[0])
    locations = result.locations.copy()
    locations[:, k] += lift / target.scale
    return locations, float(dz)


def _target_floor(t_skel, t_locs, t_rots, contacts):
    """The target's planted toe height (median over contact frames), less 1 cm."""
    pose = pipeline.forward_kinematics(t_skel, t_locs, t_rots)
    z = np.stack([pose[:, leg[3], 2, 3] for leg in t_skel.legs], axis=1)
    return pipeline.toe_floor(z, contacts)


def retarget_and_replant(plan, target, target_map, output, fps, toe_above_soles=None, soles=None):
    """A core.job.run.BakeOutput retargeted by ``plan`` onto ``target`` and its
    feet planted again on the target's own legs (:func:`replant_feet`, on the
    ground the bake walked on) at ``fps`` scene frames per second. Returns
    (core.retarget.frames.Result with the planted keys, :class:`Replanted`)."""
    pose = pipeline.forward_kinematics(output.skeleton, output.locations, output.rotations)
    result = rt_frames.retarget_pose(plan, pose)
    contact, root_yaw = frame_contacts(output.result, output.times)
    planted = replant_feet(plan, target, target_map, result, contact, root_yaw, fps, output.settings,
                           toe_above_soles=toe_above_soles, soles=soles,
                           toe_ground=frame_toe_ground(output.result, output.times))
    result.rotations, result.locations = planted.rotations, planted.locations
    return result, planted
