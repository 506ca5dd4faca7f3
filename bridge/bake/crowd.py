"""A crowd in the scene: controllers spread in lanes from one curve, characters
to walk them, and the list of (controller, character) pairs that Bake All bakes.

The lanes themselves are core's (:mod:`core.paths.crowd_lanes`); here the curve is
read, the controllers keyed (as scenario controllers), the characters copied
and the pairs listed.
"""

import bpy

from ...core.errors import MotionMatchingError
from ...core.paths import crowd_lanes, scenario as core_scenario
from . import controller as controller_build
from ..blender.scene_data import scene_fps

COLLECTION = "Motion Matching Crowd"


def _collection(scene):
    coll = bpy.data.collections.get(COLLECTION)
    if coll is None:
        coll = bpy.data.collections.new(COLLECTION)
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def _move_to(obj, coll):
    for other in list(obj.users_collection):
        other.objects.unlink(obj)
    coll.objects.link(obj)


def copy_character(obj, coll, name):
    """A linked copy of the armature ``obj`` (its armature data shared, so its bone
    map and T-pose too) with copies of the meshes parented to it, in ``coll``."""
    new = obj.copy()
    new.name = name
    new.animation_data_clear()
    coll.objects.link(new)
    for child in obj.children:
        if child.type != "MESH":
            continue
        mesh = child.copy()
        mesh.parent = new
        for mod in mesh.modifiers:
            if mod.type == "ARMATURE" and mod.object == obj:
                mod.object = new
        coll.objects.link(mesh)
    return new


def characters_to_use(context):
    """The armatures a crowd is made of: the selected ones, in name order, else the
    scene's Bake Onto armature."""
    chosen = sorted((o for o in context.selected_objects if o.type == "ARMATURE"), key=lambda o: o.name)
    if not chosen and context.scene.motion_matching.bake_armature is not None:
        chosen = [context.scene.motion_matching.bake_armature]
    if not chosen:
        raise MotionMatchingError("Select the characters to walk the lanes (armatures), or choose one to Bake Onto.")
    return chosen


def add_crowd(context, curve_obj, lanes, characters, frame_start=None, name="Crowd"):
    """Controllers spread from ``curve_obj`` by ``lanes`` (core ``Lanes``), one
    character each (``characters`` first, then linked copies of them in turn),
    listed as pairs for Bake All. Returns the pairs added. Everything is checked
    before anything is made; on failure nothing is left."""
    scene = context.scene
    points, _edges = controller_build.curve_world_points(context, curve_obj)
    scenarios = crowd_lanes.spread(points, lanes, name=name)
    fs = scene.frame_start if frame_start is None else int(frame_start)
    fps = scene_fps(scene)
    made, pairs = [], []
    new_collection = COLLECTION not in bpy.data.collections
    try:
        coll = _collection(scene)
        for k, sc in enumerate(scenarios):
            ctrl = controller_build.controller_from_scenario(context, sc, fps=fps, frame_start=fs, name=sc.name)
            made.append(ctrl)
            _move_to(ctrl, coll)
            if k < len(characters):
                char = characters[k]
            else:
                char = copy_character(characters[k % len(characters)], coll, "%s_%s" % (sc.name, characters[k % len(characters)].name))
                made.append(char)
                made.extend(char.children)
            pairs.append((ctrl, char))
    except BaseException:
        for obj in reversed(made):
            if obj.name in bpy.data.objects:
                controller_build.discard(obj)
        coll = bpy.data.collections.get(COLLECTION)
        if new_collection and coll is not None and not coll.all_objects:
            bpy.data.collections.remove(coll)
        raise
    for ctrl, char in pairs:
        item = scene.motion_matching.crowd.add()
        item.controller, item.armature = ctrl, char
    end = fs + int(round(core_scenario.duration(scenarios[0]) * fps))
    if scene.frame_end < end:
        scene.frame_end = end
    return pairs


def pairs_to_bake(scene):
    """The crowd list's (controller, armature) pairs, each checked: a row without
    either, or with an object gone from the scene, is refused by its number."""
    out = []
    for i, item in enumerate(scene.motion_matching.crowd, 1):
        if item.controller is None or item.armature is None:
            raise MotionMatchingError("Row %d of the crowd list has no %s." % (
                i, "controller" if item.controller is None else "character"))
        for obj in (item.controller, item.armature):
            if obj.name not in scene.objects:
                raise MotionMatchingError("Row %d of the crowd list names %s, which is not in this scene." % (i, obj.name))
        out.append((item.controller, item.armature))
    if not out:
        raise MotionMatchingError("The crowd list is empty: add pairs, or Add Crowd from a curve.")
    return out


def bake_pairs(context, pairs, settings, results, database=None, done=None):
    """Bake every (controller, armature) pair in turn with core ``settings``, as
    the Bake operator would one at a time: a generator yielding the fraction done,
    appending (armature name, BakeReport) to ``results`` as each pair is keyed and
    returning it. Stopped early (closed), the pairs already baked keep their keys
    and the one under way writes nothing. ``database``: (MotionDatabase, note)
    when the caller has just checked it (bridge.bake.ensure_database).
    ``done(job, computed)``: what becomes of each pair's computed bake
    (bake_job.compute), returning its report; default keyed here (bake_job.write)."""
    from . import bake_job

    # Baking keys only the characters, never the database's inputs: its
    # staleness is checked (and a rebuild done) once, for the first pair.
    for i, (ctrl, arm) in enumerate(pairs):
        job = bake_job.start(context, settings, controller=ctrl.name, armature=arm.name, database=database)
        database = (job.database, "")
        steps = job.steps
        try:
            while True:
                yield (i + next(steps)) / len(pairs)
        except StopIteration as finished:
            output = finished.value
        finally:
            steps.close()
        computed = bake_job.compute(context, job, output)
        report = bake_job.write(context, job, computed)[0] if done is None else done(job, computed)
        results.append((arm.name, report))
    return results


def summary_text(results, total):
    """The crowd's table: one line per character baked."""
    lines = ["Motion Matching Crowd: %d of %d characters baked" % (len(results), total), "",
             "%-32s %7s %6s %9s %12s" % ("character", "frames", "jumps", "track max", "sliding/raw")]
    for name, r in results:
        ratio = "-" if r.contact_sliding_ratio is None else "%.2fx" % r.contact_sliding_ratio
        lines.append("%-32s %7d %6d %7.1f cm %12s" % (name[:32], r.frames, r.jumps, 100 * r.tracking_error_max_m, ratio))
    return "\n".join(lines) + "\n"
