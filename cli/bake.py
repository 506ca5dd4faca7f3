"""The bake command inside Blender: the takes imported and their database
built (or an exported database read), the character imported and mapped, the
controller laid from a scenario, then the bake, its exports, baked.blend and
report.json, all through the add-on's own operators. The arguments come
checked from :mod:`.bake_args`; each refusal is a :class:`~.bake_args.Failure`
sentence, and everything that can refuse comes before anything is written.
"""

import json
import math
import os
import shutil
import tempfile

import bpy

from ..bridge.bake import moves as bake_moves
from ..core.paths import scenario as core_scenario
from ..core.measure.report import BakeReport
from ..core.skeleton import humanoid_joints
from . import bake_args, scene_inputs
from .bake_args import Failure


def call(op, **kw):
    """Run an operator; turn its error report into a one-line failure."""
    try:
        result = op(**kw)
    except RuntimeError as ex:
        lines = [line.strip() for line in str(ex).replace("Error: ", "").splitlines() if line.strip()]
        if lines and "Traceback" in lines[0]:
            # A Python error inside the operator: its last line says what it was.
            lines = [line for line in lines if not line.startswith("Location:")]
            raise Failure("%s failed: %s" % (op.idname_py(), lines[-1])) from None
        raise Failure(lines[0] if lines else "%s failed." % op.idname_py()) from None
    if result != {"FINISHED"}:
        raise Failure("%s did not finish." % op.idname_py())
    return result


def run(args):
    """Bake (or, without --out, only build and write the database) as the
    checked ``args`` say, in the running Blender with the add-on enabled;
    returns the report (None when only the database was written)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    fps = args.fps
    scene.render.fps = max(1, int(round(fps)))
    scene.render.fps_base = scene.render.fps / fps
    armatures = database(args)
    if args.out is not None:
        # Everything that can refuse the run comes before anything is written.
        target = character(args, armatures[0] if armatures else None) if args.character else armatures[0]
        ctrl = controller(args)
        if args.move_list:
            # --moves replace the controller's own moves (a scenario's query points, a .blend's list).
            bake_moves.store_moves(ctrl, args.move_list)
        if getattr(args, "ground", None):
            try:
                scene.motion_matching.ground = scene_inputs.load_ground(args.ground)
            except ValueError as ex:
                raise Failure(str(ex)) from None
    if args.save_database:
        call(bpy.ops.motion_matching.export_database, filepath=os.path.abspath(args.save_database))
        print("wrote %s" % args.save_database)
        if args.out is None:
            return None
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = target
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as ex:
        raise Failure("Cannot make the folder %s (%s)." % (args.out, ex.strerror or ex)) from None
    report_path = os.path.join(os.path.abspath(args.out), "report.json")
    bake_args.set_bake_settings(scene.motion_matching.bake_settings, args)
    if args.use_strafe is None and args.controller is None and bake_args.scenario_has_facing(args.scenario):
        # A scenario that asks for a facing is baked facing it (--no-use-strafe: where it goes).
        scene.motion_matching.bake_settings.use_strafe = True
    call(bpy.ops.motion_matching.bake, report_path=report_path)
    for path, fmt in zip(args.export, args.export_formats):
        call(bpy.ops.motion_matching.export_baked, filepath=os.path.abspath(path), format=fmt, armature=target.name)
    call(bpy.ops.wm.save_as_mainfile, filepath=os.path.join(os.path.abspath(args.out), "baked.blend"))
    with open(report_path) as fh:
        report = json.load(fh)
    print(BakeReport.from_json(report).to_text())
    for path in [os.path.join(args.out, "baked.blend"), report_path] + list(args.export):
        print("wrote %s" % path)
    if args.top_view:
        from . import top_view

        print(top_view.summary(top_view.render_top_view(os.path.abspath(args.top_view), target, ctrl)))
    return report


def database(args):
    """Import the takes and build the database (returns the takes' armatures),
    or import an exported database (returns [])."""
    ops = bpy.ops.motion_matching
    scene = bpy.context.scene
    if args.database:
        call(ops.import_database, filepath=os.path.abspath(args.database))
        scene.motion_matching.tag_query = args.tag_query
        return []
    if args.dance_card:
        call(ops.import_dance_card, filepath=os.path.abspath(args.dance_card))
    before = set(bpy.data.objects.keys())
    paths = [os.path.abspath(p) for p in args.bvh]
    call(ops.import_bvh, filepath=paths[0], directory=os.path.dirname(paths[0]),
         files=[{"name": os.path.relpath(p, os.path.dirname(paths[0]))} for p in paths],
         global_scale=args.scale, axis_forward=args.axis_forward, axis_up=args.axis_up,
         handedness=args.handedness, add_virtual_root=True)
    armatures = sorted((o for o in bpy.data.objects if o.name not in before and o.type == "ARMATURE"),
                       key=lambda o: o.name)
    if args.dance_card:
        tag_clips(ops, armatures)
    for obj in armatures[:1]:
        print("virtual root: %s" % obj.data.motion_matching.root_note)
    if args.tpose:
        bpy.context.view_layer.objects.active = armatures[0]
        call(ops.load_tpose, filepath=os.path.abspath(args.tpose), global_scale=args.scale,
             axis_forward=args.axis_forward, axis_up=args.axis_up, handedness=args.handedness)
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in armatures)
    bpy.context.view_layer.objects.active = armatures[0]
    call(ops.database_add_action)
    scene.motion_matching.tag_query = args.tag_query
    if args.mirror_takes is None:
        call(ops.build_database)
    else:
        call(ops.build_database, mirror_takes=args.mirror_takes.upper())
    print("database: %s" % scene.motion_matching.database_summary)
    if scene.motion_matching.database_note:
        print(scene.motion_matching.database_note)
    return armatures


def character(args, source):
    """The --character imported or appended, its bones mapped (a mapping it
    carries is kept), chosen as the Retarget panel's target; returns it."""
    try:
        rig = scene_inputs.load_character(args.character)
    except ValueError as ex:
        raise Failure(str(ex)) from None
    choices = bpy.context.scene.motion_matching.retarget
    choices.source, choices.target = source, rig
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj == rig)
    bpy.context.view_layer.objects.active = rig
    mapped = {item.name for item in rig.data.motion_matching.bone_map if item.bone}
    if not mapped:
        try:
            call(bpy.ops.motion_matching.auto_map_bones)
        except Failure as ex:
            raise Failure("--character %s cannot be mapped: %s" % (args.character, ex)) from None
        mapped = {item.name for item in rig.data.motion_matching.bone_map if item.bone}
    missing = [j for j in humanoid_joints.REQUIRED if j not in mapped]
    if missing:
        raise Failure("--character %s cannot be mapped: no bones found for %s; map them in Blender (Retarget "
                      "panel) and give the rig as FILE.blend:Object." % (args.character, ", ".join(missing)))
    return rig


def controller(args):
    """The controller: appended from a .blend, or laid from the scenario (at
    --speed-scale, its time 0 on --start-frame); the scene's range set to it."""
    if args.controller is not None:
        try:
            ctrl = scene_inputs.load_controller(args.controller)
        except ValueError as ex:
            raise Failure(str(ex)) from None
        first, last = ctrl.animation_data.action.frame_range
        bpy.context.scene.frame_start, bpy.context.scene.frame_end = int(first), int(math.ceil(last))
        return ctrl
    ops = bpy.ops.motion_matching
    scenario = args.scenario
    if args.speed_scale != 1.0:
        folder = tempfile.mkdtemp(prefix="mm_scenario_")
        try:
            path = os.path.join(folder, "scenario.json")
            core_scenario.save_scenario(bake_args.load_scenario(scenario, args.speed_scale), path)
            call(ops.add_scenario_controller, scenario="FILE", filepath=path, frame_start=args.start_frame,
                 update_scene_range=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    elif os.path.isfile(scenario):
        call(ops.add_scenario_controller, scenario="FILE", filepath=os.path.abspath(scenario),
             frame_start=args.start_frame, update_scene_range=True)
    else:
        call(ops.add_scenario_controller, scenario=scenario, frame_start=args.start_frame, update_scene_range=True)
    return bpy.context.active_object


def tag_clips(ops, armatures):
    """Suggest tags on every clip (each armature plays its clips in turn), then
    tag whole clips by the dance card's file-name rules."""
    scene = bpy.context.scene
    for obj in armatures:
        bpy.context.view_layer.objects.active = obj
        first = obj.animation_data.action
        clips = [e.action for e in scene.motion_matching.entries if e.armature == obj] or [first]
        for action in clips:
            obj.animation_data.action = action
            call(ops.auto_tag)
        obj.animation_data.action = first
    if len(scene.motion_matching.dance_card_rules):
        call(ops.tags_from_file_names)
