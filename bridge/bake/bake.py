"""The bake, Blender side: database and controller in, a keyed action out."""

import dataclasses
import time

import bpy
import numpy as np

from ...core.bake import pipeline as core_bake
from ...core.bake.legs.floor import lift_summary
from ...core.job import replant as core_replant
from ...core.job import run as core_run
from ...core.measure import retarget_checks
from ...core.errors import MotionMatchingError
from ..blender import armature_data, compat
from ..database import build as database_build, store as database_store, handlers
from ..blender.scene_data import scene_fps
from . import ground as bake_ground

# Keyed custom properties on the baked armature, per frame.
FIGURES = ("mm_match_cost", "mm_jump", "mm_contact_left", "mm_contact_right",
           "mm_lock_left", "mm_lock_right", "mm_tracking_error")


def bake_target(context, name=""):
    """The armature to bake onto: the one named, else the scene's choice, else
    the first armature of the database list."""
    settings = context.scene.motion_matching
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != "ARMATURE":
            raise MotionMatchingError("There is no armature named %s." % name)
        return obj
    if settings.bake_armature is not None:
        return settings.bake_armature
    for e in settings.entries:
        if e.armature is not None:
            return e.armature
    raise MotionMatchingError("Choose the armature to bake onto (Bake panel).")


def controller_object(context, name=""):
    """The object to follow: the one named, else the scene's controller (which
    must still be in the scene)."""
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise MotionMatchingError("There is no object named %s to follow." % name)
        return obj
    obj = context.scene.motion_matching.controller
    if obj is None:
        raise MotionMatchingError("Choose a controller to follow (Bake panel), or add one from a curve.")
    if obj.name not in context.scene.objects:
        raise MotionMatchingError("The controller %s is not in this scene (deleted?): choose another." % obj.name)
    return obj


def ensure_database(context):
    """The scene's database, rebuilt first when it is missing or stale and the
    inputs to rebuild it are there (an imported one is used as it is). Returns
    (core MotionDatabase, note) where note says plainly what happened ('' when
    nothing did). A refusal changes nothing, the stale flag included."""
    scene = context.scene
    settings = scene.motion_matching
    note = ""
    if not database_store.has_database(scene):
        if not len(settings.entries):
            raise MotionMatchingError("There is no database: list the actions to match and build it (Database panel).")
        database_build.build_and_store(context)
        note = "The database was built first."
    elif not database_store.is_imported(scene) and (handlers.is_stale(scene) or settings.database_stale):
        if len(settings.entries) and all(e.action and e.armature for e in settings.entries):
            database_build.build_and_store(context)
            note = "The database was out of date and was rebuilt first."
        else:
            raise MotionMatchingError("The database is out of date and its actions are gone, so it cannot be "
                                      "rebuilt: rebuild it from the listed actions or import one.")
    return database_store.load(scene), note


def sample_controller(context, obj, frames):
    """World positions (F, 3) and facings (F, 2) of the controller on (possibly
    fractional) scene frames."""
    from . import controller as controller_build

    return controller_build.sample_controller(context, obj, frames)


def database_cache(database):
    """The ``cache(key, make)`` hook of core.job.run for ``database``: what is
    derived from it is kept with the parsed database (database_store.derived)."""
    return lambda key, make: database_store.derived(database, key, make)


def search_index(database):
    """The search index of the scene's database, built once per stored bytes."""
    return core_run.search_index(database, database_cache(database))


@dataclasses.dataclass
class BakeOutput(core_run.BakeOutput):
    """What a bake computed (core.job.run.BakeOutput), and where the controller
    was in the world."""

    controller_world: np.ndarray = None  # (F, 3) the controller in world space on the frames keyed


def run(*args, progress=None, **kwargs):
    """:func:`run_steps` to the end; ``progress`` (optional) gets the fraction done."""
    return core_bake.run_to_end(run_steps(*args, **kwargs), progress)


def run_steps(context, controller, armature, settings, tag_query="", frame_start=None, frame_end=None,
              path_scale=1.0, to_bake=None, database=None, sampled=None, moves=None, ground=""):
    """Sample the controller and bake (core.job.run.bake); returns a
    :class:`BakeOutput` (no data written).

    ``path_scale``: when the result will be retargeted onto a character of
    another size (positions scaled by it), the database skeleton walks the path
    divided by it, so the retargeted character walks the path itself; distances
    in the report are given in the target's size. ``to_bake`` (4, 4): the
    matrix taking the world to the space the database skeleton walks in
    (default: the inverse of the armature's world matrix, divided by
    ``path_scale``; see :func:`controller_matrix` for another rig). ``database``:
    what :func:`ensure_database` returned, when the caller has just called it (its
    fingerprint check reads every key of the listed actions). ``sampled``: the
    controller's (world positions, facings) on :func:`sample_frames`, when the
    caller has sampled it already (the live preview). ``moves``: the tag query
    along the timeline (core.paths.moves.Moves, bridge.bake.moves), ``tag_query``
    before the first; None: ``tag_query`` throughout. ``ground``: the mesh
    object's name walked on (empty: the scene's Ground). A generator yielding
    the fraction done; a caller may stop it early, nothing is written here."""
    t0 = time.perf_counter()
    database, note = database if database is not None else ensure_database(context)
    where = controller_path(context, controller, armature, database, frame_start, frame_end, path_scale, to_bake,
                            sampled, ground)
    output = yield from core_run.bake(database, where.path, settings, tag_query, cache=database_cache(database),
                                      clock=time.perf_counter, started=t0, moves=moves, ground=where.ground)
    return with_controller(output, note, where)


@dataclasses.dataclass
class PathSampled:
    """The controller as one bake follows it: the core path, and where it was in the world."""

    path: core_run.ControllerPath
    world: np.ndarray        # (S, 3) world positions on the simulation steps
    steps: np.ndarray        # (S,) their scene frames
    frames: np.ndarray       # (F,) the scene frames to key
    ground: object = None    # core.bake.ground.GroundGrid of the scene's Ground (None: the flat floor)


def controller_path(context, controller, armature, database, frame_start=None, frame_end=None, path_scale=1.0,
                    to_bake=None, sampled=None, ground=""):
    """The :class:`PathSampled` of :func:`run_steps` (its arguments); reads
    Blender data, so it runs before the simulation (which reads none)."""
    scene = context.scene
    frames, sim_frames = sample_frames(scene, database, frame_start, frame_end)
    ctrl_world, facing = sampled if sampled is not None else sample_controller(context, controller, sim_frames)
    path = core_run.ControllerPath.from_world(
        ctrl_world, facing, frames, scene_fps(scene), path_scale=path_scale, to_bake=to_bake,
        armature_world=np.asarray(armature.matrix_world, dtype=np.float64) if to_bake is None else None)
    obj = bake_ground.ground_object(context, ground)
    ground = None if obj is None else bake_ground.sample_ground(
        context, obj, bake_ground.world_to_bake(armature.matrix_world, path_scale, to_bake), path.positions)
    return PathSampled(path=path, world=ctrl_world, steps=sim_frames, frames=frames, ground=ground)


def with_controller(output, note, where):
    """The bridge :class:`BakeOutput` of a core one, with the database's note and
    the controller's world positions on the frames keyed."""
    if output.report is not None:
        output.report.note = note
    return BakeOutput(**output.field_values(), controller_world=core_run.on_frames(where.world, where.steps,
                                                                                   where.frames))


def sample_frames(scene, database, frame_start=None, frame_end=None):
    """(the scene frames to key, the fractional scene frames the controller is
    sampled on: one per simulation step) for the scene's range or the one given."""
    frames = core_run.frames_to_key(scene.frame_start if frame_start is None else frame_start,
                                    scene.frame_end if frame_end is None else frame_end)
    return frames, core_run.step_frames(database, frames, scene_fps(scene))


def check_skeleton(armature, skeleton):
    """Refuse an armature that lacks bones of the database skeleton, naming them."""
    missing = [n for n in skeleton.names if n not in armature.data.bones]
    if missing:
        raise MotionMatchingError("%s lacks bones of the database skeleton: %s." % (
            armature.name, ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")))


def write(armature, output, name="MM_Bake"):
    """A new action on ``armature`` with every bone keyed on every frame of the
    :class:`BakeOutput`, plus the per-frame figures as keyed custom properties.
    Returns the action; on failure nothing is left."""
    skeleton, frames, locs, rots = output.skeleton, output.frames, output.locations, output.rotations
    names = skeleton.names
    check_skeleton(armature, skeleton)
    ad = armature.animation_data
    previous = ad.action if ad else None
    if previous is not None:
        previous.use_fake_user = True   # keep the take the armature played
    action = compat.new_action(armature, name)
    try:
        channels, cols = [], []
        moving_loc = np.ptp(locs, axis=0).max(axis=1) > 1e-7
        for j, bone in enumerate(names):
            if j in (skeleton.root, skeleton.hips) or moving_loc[j]:
                path = armature_data.bone_path(bone, "location")
                channels += [(path, k, bone) for k in range(3)]
                cols.append(locs[:, j])
            path = armature_data.bone_path(bone, "rotation_quaternion")
            channels += [(path, k, bone) for k in range(4)]
            cols.append(rots[:, j])
        for bone in names:
            armature.pose.bones[bone].rotation_mode = "QUATERNION"
        compat.write_curves(action, armature, channels, frames, np.concatenate(cols, axis=1))
        _key_figures(action, armature, frames, output.report)
    except BaseException:
        bpy.data.actions.remove(action)
        if previous is not None:
            compat.assign_action(armature, previous)
        raise
    return action


# ---------------------------------------------------------------------------
# Baking onto another rig: retarget each frame, then plant the feet again


def needs_retarget(armature, skeleton):
    """True when ``armature`` is not the database's own skeleton."""
    return any(n not in armature.data.bones for n in skeleton.names)


def source_armature(context):
    """The armature the database's actions play on (for its mapping and T-pose)."""
    for e in context.scene.motion_matching.entries:
        if e.armature is not None:
            return e.armature
    raise MotionMatchingError("Baking onto another rig needs the database's own armature in the scene "
                              "(its bone mapping and T-pose): it is gone.")


def retarget_setup(context, target, scale=None, database=None):
    """The retarget set-up (bridge.retarget.plan.Setup) from the database's armature
    onto ``target`` (``scale``: the size ratio, None for automatic): the armature
    in the file for a database built here, else the armature the ``database``
    (core MotionDatabase) recorded (an imported database, in a file that may lack it)."""
    from ..retarget import plan as retarget_plan

    scene = context.scene
    recorded = database is not None and database.source is not None
    if recorded and (database_store.is_imported(scene) or not any(e.armature for e in scene.motion_matching.entries)):
        return retarget_plan.plan_for(context, None, target, scale=scale, recorded=database)
    return retarget_plan.plan_for(context, source_armature(context), target, scale=scale)


def controller_matrix(setup):
    """The matrix taking the world to the database armature's space for a bake
    onto another rig: into the target's ground frame (where its object stands
    and faces), divided by the size ratio (the database skeleton walks the
    path at its own size, so the retargeted rig walks it at its own), and out
    of the database armature's body frame (its tilt and scale)."""
    src, ratio = setup.source, setup.plan.scale
    body_inv = np.eye(4)
    body_inv[:3, :3] = src.turn.T / src.scale
    body_inv[:3, 3] = -(src.turn.T @ src.shift) / src.scale
    shrink = np.diag([1.0 / ratio, 1.0 / ratio, 1.0 / ratio, 1.0])
    return body_inv @ shrink @ np.linalg.inv(setup.ground)


def target_world_joints(setup, result):
    """World positions of the target rig's hips, pelvis, head, ankles and toes
    on every frame of a retarget result (retarget_bridge.world_joints): the
    report's figures are measured on the character itself."""
    from ..retarget import retarget as retarget_bridge

    return retarget_bridge.world_joints(setup, result)


def retarget_frames(setup, output, fps, toe_above_soles, soles=None):
    """The frames of the :class:`BakeOutput` retargeted through ``setup``
    (core.retarget, the T-pose correspondence) and their feet planted again on
    the target's own legs (core.job.replant) at ``fps`` scene frames per
    second; ``toe_above_soles``: bridge.retarget.meshes.toe_above_soles of the
    target, ``soles`` its bridge.retarget.meshes.sole_points. Reads no Blender
    data (the live preview runs it on a thread).
    Returns (core.retarget.frames.Result with the planted keys, core_replant.Replanted)."""
    return core_replant.retarget_and_replant(setup.plan, setup.target, setup.target_map, output, fps,
                                             toe_above_soles, soles)


@dataclasses.dataclass
class Retargeted:
    """A bake retargeted onto another rig, ready to key (:func:`retarget`): the
    target's core.retarget Result (its feet planted again), the scene frames,
    the report (the retarget's figures and warnings added) and those warnings."""

    result: object
    frames: np.ndarray
    report: object
    warnings: list


def retarget(context, target, output, setup):
    """Retarget the baked frames of the :class:`BakeOutput` onto ``target``
    (core.retarget through the T-pose correspondence), enforce the database's
    foot contacts again on the target's own legs (core.job.replant: foot lock +
    two-joint IK, the hips on a skinned mesh's soles) and measure the result on
    the target. Reads Blender data, writes none: :func:`write_retargeted_result`
    keys it."""
    from ..retarget import meshes

    report = output.report
    result, planted = retarget_frames(setup, output, report.fps, meshes.toe_above_soles(target, setup),
                                      meshes.sole_points(target, setup))
    if planted.foot_locks is not None:
        report.target_foot_locks = planted.foot_locks
    if planted.sole_shift is not None:
        report.sole_shift_m = planted.sole_shift
    if planted.floor_lifts is not None:
        report.floor_raised_frames, report.floor_raised_max_m = lift_summary(planted.floor_lifts, slice(None))
    warnings = list(getattr(setup, "warnings", [])) + planted.warnings
    world = target_world_joints(setup, result)
    if output.controller_world is not None:
        report.track_target(world["hips"], output.controller_world)
    report.size_ratio = float(setup.plan.scale)
    warnings += retarget_checks.result_warnings(target.name, setup.plan.target_height, world,
                                                output.controller_world)
    warnings = ["Retargeted onto %s: %s." % (target.name, w) for w in warnings]
    report.warnings = list(report.warnings) + warnings
    report.retargeted_onto = target.name
    return Retargeted(result=result, frames=output.frames, report=report, warnings=warnings)


def write_retargeted_result(target, setup, retargeted, name="MM_Bake"):
    """Key a :class:`Retargeted` on ``target`` with the per-frame figures;
    returns the action."""
    from ..retarget import write as retarget_write

    action, _switched = retarget_write.write_action(target, setup, retargeted.result, retargeted.frames, name)
    _key_figures(action, target, retargeted.frames, retargeted.report)
    target["mm_size_ratio"] = retargeted.report.size_ratio      # shown in the Retarget panel
    return action


def _key_figures(action, armature, frames, report):
    per = report.per_frame
    values = {
        "mm_match_cost": per.match_cost, "mm_jump": per.jump.astype(float),
        "mm_contact_left": per.contact[:, 0].astype(float), "mm_contact_right": per.contact[:, 1].astype(float),
        "mm_lock_left": per.lock[:, 0].astype(float), "mm_lock_right": per.lock[:, 1].astype(float),
        "mm_tracking_error": per.tracking_error,
    }
    for key in FIGURES:
        armature[key] = 0.0
    smooth = (FIGURES[0], FIGURES[-1])
    compat.write_curves(action, armature, [('["%s"]' % k, 0, "Motion Matching") for k in smooth],
                        frames, np.column_stack([values[k] for k in smooth]))
    flags = FIGURES[1:-1]
    compat.write_curves(action, armature, [('["%s"]' % k, 0, "Motion Matching") for k in flags],
                        frames, np.column_stack([values[k] for k in flags]), interpolation="CONSTANT")
