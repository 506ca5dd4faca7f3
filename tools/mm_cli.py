"""Motion matching from the command line: BVH in, baked .blend and report out.

With the bpy module (Blender as a Python module), from the repository root:

    python -m tools.mm_cli --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --fps 24 --out out/run

``--bvh`` takes one or more files or folders (a folder stands for the .bvh files
in it); every clip, in file-name order, goes into one database. A dance card's
file-name rules tag the clips by their files' names.

Inside Blender (use a throw-away user folder so your preferences are untouched),
from the repository root: Blender runs the file, and finds the ``core`` and
``tools`` packages through PYTHONPATH, which Blender reads only with
``--python-use-system-env``:

    PYTHONPATH=$PWD BLENDER_USER_RESOURCES=$(mktemp -d) blender -b --factory-startup \\
        --python-use-system-env --python tools/mm_cli.py -- \\
        --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --out out/run

Every argument is checked before Blender starts. With the bpy module, a
throw-away user folder is made before bpy is imported; the extension zip is
built inside it with Blender's own tool and installed there, and the folder
(and Blender's session folder in the temp directory) is removed at the end,
also on failure. Inside Blender, an enabled copy of the extension is used as it
is; without one, the extension is installed only when Blender was given a user
folder with BLENDER_USER_RESOURCES (and uninstalled again at the end), never
into your own Blender profile. Writes OUT/baked.blend and OUT/report.json,
prints the report as a table; any failure is one line ``mm_cli: <sentence>``
on stderr and exit status 1.

``--character FILE`` (.glb, .gltf, .fbx, or FILE.blend:Object) bakes onto that
rig, retargeted; ``--export FILE`` writes the baked action by the extension;
``--database FILE.npz`` bakes with an exported database and
``--save-database FILE.npz`` writes the one built (docs/user/command-line.md;
tools.mm_batch runs this once per entry of a batch manifest).
"""

import argparse
import json
import math
import os
import shutil
import sys

try:  # absolute imports: this file also runs as a script inside Blender (see above)
    from core.bake import settings as core_bake_settings
    from core.paths import scenario as core_scenario, scenario_builtins as core_scenario_builtins
    from core.database import query as core_tag_query
    from core.skeleton import humanoid_joints
    from core.errors import MotionMatchingError
    from tools import addon_session, cli_inputs
except ModuleNotFoundError as ex:  # run by file without the repository on the module path
    if ex.name not in ("core", "tools"):
        raise
    sys.exit("mm_cli: run it from the repository root as python -m tools.mm_cli; inside Blender, "
             "see the README (PYTHONPATH and --python-use-system-env).")


class Failure(Exception):
    pass


FPS_RANGE = (1.0, 1000.0)          # Blender's own frame-rate range
SCALE_RANGE = (0.0001, 1000000.0)  # the range of the importers' Scale option
AXES = ("X", "Y", "Z", "-X", "-Y", "-Z")  # the choices of Blender's importers
MIRROR_CHOICES = ("auto", "on", "off")   # the database's Mirror Takes (its Automatic, On, Off)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse prints usage and exits with 2; here every failure is one line and status 1.
        raise Failure(message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


def parse(argv):
    """The arguments, checked (see :func:`validate`); raises Failure with a sentence."""
    ap = _Parser(prog="mm_cli", description="Bake motion matching along a scenario path.")
    ap.add_argument("--bvh", action="extend", nargs="+", default=[], metavar="FILE",
                    help="takes to match: BVH files or folders of them, all built into one database")
    ap.add_argument("--database", metavar="FILE", help="an exported database (.npz) instead of --bvh takes")
    ap.add_argument("--save-database", metavar="FILE", help="also write the built database to this .npz "
                    "(without --out: only build and write it)")
    ap.add_argument("--scale", type=float, default=0.01,
                    help="BVH scale (0.01 for centimetres; default 0.01)")
    ap.add_argument("--axis-forward", default="-Z", help="the file's forward axis: X, Y, Z, -X, -Y or -Z (default -Z)")
    ap.add_argument("--axis-up", default="Y", help="the file's up axis: X, Y, Z, -X, -Y or -Z (default Y)")
    ap.add_argument("--handedness", default="RIGHT", choices=("RIGHT", "LEFT"))
    ap.add_argument("--tpose", metavar="FILE", help="T-pose BVH of the takes' skeleton")
    ap.add_argument("--dance-card", metavar="FILE", help="dance card (TOML or JSON); tags are suggested from motion")
    ap.add_argument("--scenario", help="built-in scenario name or a JSON waypoint file (default showcase)")
    ap.add_argument("--controller", metavar="FILE.blend:Object",
                    help="follow this animated controller appended from a .blend instead of a scenario")
    ap.add_argument("--speed-scale", type=float, default=1.0,
                    help="play the scenario this many times faster (its waypoint times divided by it; default 1)")
    ap.add_argument("--start-frame", type=int, default=1, help="the frame of the scenario's time 0 (default 1)")
    ap.add_argument("--character", metavar="FILE",
                    help="bake onto this character: a .glb, .gltf or .fbx file, or FILE.blend:Object")
    ap.add_argument("--export", action="append", default=[], metavar="FILE",
                    help="export the baked action to a .bvh, .fbx, .glb or .gltf file (repeatable)")
    ap.add_argument("--fps", type=float, default=24.0, help="the scene's frame rate (default 24)")
    ap.add_argument("--tag-query", default="", help="restrict matching to tagged frames, e.g. 'walk or run'")
    ap.add_argument("--mirror-takes", nargs="?", const="on", type=str.lower, choices=MIRROR_CHOICES, default=None,
                    help="the database's Mirror Takes: auto (mirror when the skeleton can be mirrored, else say why "
                         "and build without), on (refuse then) or off; alone: on (default: the add-on's, auto)")
    ap.add_argument("--no-mirror-takes", dest="mirror_takes", action="store_const", const="off",
                    help="the same as --mirror-takes off")
    ap.add_argument("--out", metavar="DIR", help="output folder")
    ap.add_argument("--top-view", metavar="FILE", help="also render a top view of the bake to this PNG")
    group = ap.add_argument_group("bake settings", "one per knob of core.bake.settings (default: its default)")
    for k in bake_knobs():
        flag, text = "--" + k.name.replace("_", "-"), k.description.replace("%", "%%")
        if k.type is bool:
            group.add_argument(flag, dest=k.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            unit = {"angle": "degrees", "time": "s", "length": "m", "velocity": "m/s"}.get(k.unit)
            group.add_argument(flag, dest=k.name, type=k.type, default=None, metavar=k.type.__name__.upper(),
                               help=text + (" (%s)" % unit if unit else ""))
    # "--axis-up -Y": argparse would take "-Y" for an option; read it as the value.
    joined = []
    for token in argv:
        if joined and joined[-1] in ("--axis-forward", "--axis-up") and token.upper() in AXES:
            joined[-1] += "=" + token
        else:
            joined.append(token)
    return validate(ap.parse_args(joined))


def validate(args):
    """Check every argument before Blender starts; raise Failure with one sentence."""
    lo, hi = FPS_RANGE
    if not (math.isfinite(args.fps) and lo <= args.fps <= hi):
        raise Failure("--fps must be a frame rate from %g to %g, not %g." % (lo, hi, args.fps))
    lo, hi = SCALE_RANGE
    if not (math.isfinite(args.scale) and lo <= args.scale <= hi):
        raise Failure("--scale must be a number from %g to %g, not %g." % (lo, hi, args.scale))
    for option, value in (("--axis-forward", args.axis_forward), ("--axis-up", args.axis_up)):
        if value.upper() not in AXES:
            raise Failure("%s must be one of %s, not %r." % (option, ", ".join(AXES), value))
    args.axis_forward, args.axis_up = args.axis_forward.upper(), args.axis_up.upper()
    if args.axis_forward[-1] == args.axis_up[-1]:
        raise Failure("--axis-forward %s and --axis-up %s are on the same axis: choose two different axes."
                      % (args.axis_forward, args.axis_up))
    _check_database(args)
    for option, path in (("--tpose", args.tpose), ("--dance-card", args.dance_card)):
        if path is not None and not os.path.isfile(path):
            raise Failure("%s file not found: %s" % (option, path))
    _check_path(args)
    try:
        if args.character is not None:
            cli_inputs.check_character(args.character)
        args.export_formats = [cli_inputs.check_export(path) for path in args.export]
    except ValueError as ex:
        raise Failure(str(ex)) from None
    if args.tag_query.strip():
        try:
            core_tag_query.parse_query(args.tag_query)
        except MotionMatchingError as ex:
            raise Failure("--tag-query: %s" % str(ex).rstrip(".") + ".") from None
    _check_bake_knobs(args)
    if args.out is None:
        if args.save_database is None:
            raise Failure("The argument --out is required (or --save-database alone to only build the database).")
        if args.export or args.character or args.top_view:
            raise Failure("--export, --character and --top-view need --out: they come after a bake.")
        return args
    if args.database and not args.character:
        raise Failure("--database needs --character: an exported database holds no armature to key.")
    out = os.path.abspath(args.out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise Failure("--out %s is a file: give a folder (it is made if missing)." % args.out)
    parent = out
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise Failure("--out %s cannot be made: %s is a file." % (args.out, parent))
    if not os.access(parent, os.W_OK):
        raise Failure("--out %s cannot be written (no permission in %s)." % (args.out, parent))
    return args


SPEED_SCALE_RANGE = (0.05, 20.0)
START_FRAME_RANGE = (0, 1000000)


def _check_database(args):
    """Takes (--bvh) or an exported database (--database), not both; their files there."""
    if bool(args.bvh) == bool(args.database):
        raise Failure("Give the takes with --bvh FILE, or an exported database with --database FILE.npz "
                      "(one of the two).")
    args.bvh = bvh_files(args.bvh)
    if args.database:
        if not os.path.isfile(args.database):
            raise Failure("--database file not found: %s" % args.database)
        for option, value in (("--tpose", args.tpose), ("--dance-card", args.dance_card),
                              ("--mirror-takes", args.mirror_takes), ("--save-database", args.save_database)):
            if value is not None:
                raise Failure("%s goes with --bvh takes; a --database file is already built." % option)
    if args.save_database is not None:
        folder = os.path.dirname(os.path.abspath(args.save_database))
        if not os.path.isdir(folder):
            raise Failure("--save-database %s: the folder %s does not exist." % (args.save_database, folder))


def _check_path(args):
    """A scenario (built-in or file) or a controller from a .blend, and the variations."""
    lo, hi = SPEED_SCALE_RANGE
    if not (math.isfinite(args.speed_scale) and lo <= args.speed_scale <= hi):
        raise Failure("--speed-scale must be from %g to %g, not %g." % (lo, hi, args.speed_scale))
    lo, hi = START_FRAME_RANGE
    if not lo <= args.start_frame <= hi:
        raise Failure("--start-frame must be from %d to %d, not %d." % (lo, hi, args.start_frame))
    if args.controller is not None:
        if args.scenario is not None:
            raise Failure("Give --scenario or --controller, not both.")
        if args.speed_scale != 1.0 or args.start_frame != 1:
            raise Failure("--speed-scale and --start-frame apply to scenarios; a --controller keeps its own keys.")
        try:
            cli_inputs.check_controller(args.controller)
        except ValueError as ex:
            raise Failure(str(ex)) from None
        return
    if args.scenario is None:
        args.scenario = "showcase"
    if not os.path.isfile(args.scenario):
        names = sorted(core_scenario_builtins.BUILTINS)
        if args.scenario not in names:
            raise Failure("--scenario %r is neither a built-in scenario (%s) nor a file."
                          % (args.scenario, ", ".join(names)))
    if args.speed_scale != 1.0:
        try:
            load_scenario(args.scenario, args.speed_scale)
        except MotionMatchingError as ex:
            raise Failure("--scenario %s at --speed-scale %g: %s" % (args.scenario, args.speed_scale, ex)) from None


def load_scenario(scenario, speed_scale=1.0):
    """The scenario (built-in name or file) as core data, its times divided by ``speed_scale``."""
    if os.path.isfile(scenario):
        sc = core_scenario.load_scenario(scenario)
    else:
        sc = core_scenario_builtins.builtin(scenario)
    if speed_scale == 1.0:
        return sc
    data = core_scenario.scenario_to_dict(sc)
    for point in data["points"]:
        point["t"] = point["t"] / speed_scale
    return core_scenario.scenario_from_dict(data, name=data.get("name") or "scenario")


def bvh_files(given):
    """The BVH files of ``--bvh`` (files and folders), sorted by file name;
    raises Failure for a missing path, a file that is not .bvh, an empty folder
    or a file given twice."""
    paths = []
    for path in given:
        if os.path.isdir(path):
            inside = [os.path.join(path, n) for n in os.listdir(path)
                      if n.lower().endswith(".bvh") and os.path.isfile(os.path.join(path, n))]
            if not inside:
                raise Failure("The folder %s holds no .bvh file." % path)
            paths += inside
        elif not os.path.isfile(path):
            raise Failure("BVH file not found: %s" % path)
        elif not path.lower().endswith(".bvh"):
            raise Failure("%s is not a .bvh file: give BVH files or folders of them." % path)
        else:
            paths.append(path)
    seen = {}
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            raise Failure("%s is given twice (also as %s): give each take once." % (path, seen[real]))
        seen[real] = path
    return sorted(paths, key=lambda p: (os.path.basename(p), os.path.abspath(p)))


_SESSION = {}   # what load_addon set up, for finish(): module enabled, build folder, uninstall, own bpy


def bake_knobs():
    """The bake's knobs (core.bake.settings.knobs): no Blender needed to read them."""
    return core_bake_settings.knobs()


def scenario_has_facing(scenario):
    """Does the scenario (a built-in name or a file) ask for a facing of its own?"""
    if os.path.isfile(scenario):
        return bool(core_scenario.load_scenario(scenario).has_facing)
    builtins = core_scenario_builtins
    return bool(builtins.builtin(scenario).has_facing) if scenario in builtins.BUILTINS else False


def _check_bake_knobs(args):
    """Each bake option given: a finite number within the setting's bounds."""
    for k in bake_knobs():
        value = getattr(args, k.name, None)
        if value is None or k.type is bool:
            continue
        flag = "--" + k.name.replace("_", "-")
        shown = math.radians(value) if k.unit == "angle" else value
        if not math.isfinite(value):
            raise Failure("%s must be a finite number, not %s." % (flag, value))
        lo = k.min if k.min is not None else -math.inf
        hi = k.max if k.max is not None else math.inf
        if not lo <= shown <= hi:
            bounds = [math.degrees(b) if k.unit == "angle" else b for b in (lo, hi)]
            raise Failure("%s must be from %g to %g, not %g." % (flag, bounds[0], bounds[1], value))


def set_bake_settings(settings, args):
    """Put the knobs given on the command line on the scene's bake settings."""
    import math

    for k in bake_knobs():
        value = getattr(args, k.name)
        if value is not None:
            setattr(settings, k.ui_name, math.radians(value) if k.unit == "angle" else value)


def load_addon():
    """Enable the add-on as Blender does; return the module name.

    With the bpy module (bpy not imported yet), Blender starts here with a
    throw-away user folder chosen first. Inside Blender, an enabled copy is
    used; otherwise the extension is installed only into a user folder given
    with BLENDER_USER_RESOURCES, never into the real profile."""
    if "bpy" not in sys.modules:
        user = addon_session.prepare_user_dir()
        _SESSION["own_bpy"] = True
        try:
            import bpy  # noqa: F401  (Blender starts here, with the user folder above)
        except ImportError:
            raise Failure("This Python has no bpy module: use the environment of the setup command "
                          "(README), or run the script inside Blender.") from None

        _SESSION["module"] = addon_session.install(addon_session.build_zip(os.path.join(user, "dist")))
        return _SESSION["module"]
    import bpy

    for name in bpy.context.preferences.addons.keys():
        if name.endswith(".motion_matching") and name.startswith("bl_ext."):
            return name
    if not os.environ.get("BLENDER_USER_RESOURCES"):
        raise Failure("The Motion Matching extension is not enabled in this Blender, and installing it would "
                      "change your Blender profile: enable it first, or start Blender with a throw-away user "
                      "folder (BLENDER_USER_RESOURCES=$(mktemp -d) blender -b --factory-startup --python-use-system-env "
                      "--python ..., as the README shows).")
    import tempfile

    build = _SESSION["build"] = tempfile.mkdtemp(prefix="mm_cli_build_")
    _SESSION["module"] = addon_session.install(addon_session.build_zip(build))
    _SESSION["uninstall"] = True
    return _SESSION["module"]


def finish():
    """Disable what load_addon enabled and remove what it made (also after a failure)."""
    try:
        if _SESSION.pop("module", None) and "bpy" in sys.modules:
            # Unregister panels before the process ends: a bpy process that exits
            # with them registered can hang.
            addon_session.disable()
            if _SESSION.pop("uninstall", False):
                import bpy

                repos = [r.module for r in bpy.context.preferences.extensions.repos]
                if "user_default" in repos:
                    bpy.ops.extensions.package_uninstall(repo_index=repos.index("user_default"),
                                                         pkg_id="motion_matching")
    finally:
        if _SESSION.get("build"):
            shutil.rmtree(_SESSION.pop("build"), ignore_errors=True)
        if _SESSION.get("own_bpy"):
            # The throw-away user folder made in load_addon, and Blender's session
            # folder in the temp directory, which Blender removes itself only when
            # it shuts down normally (this process ends with os._exit, see below).
            addon_session.finish(blender_temp=True)


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
    module = load_addon()   # before bpy is imported: it chooses Blender's user folder
    import bpy

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
    set_bake_settings(scene.motion_matching.bake_settings, args)
    if args.use_facing is None and args.controller is None and scenario_has_facing(args.scenario):
        # A scenario that asks for a facing is baked facing it (--no-use-facing: where it goes).
        scene.motion_matching.bake_settings.use_facing = True
    call(bpy.ops.motion_matching.bake, report_path=report_path)
    for path, fmt in zip(args.export, args.export_formats):
        call(bpy.ops.motion_matching.export_baked, filepath=os.path.abspath(path), format=fmt, armature=target.name)
    call(bpy.ops.wm.save_as_mainfile, filepath=os.path.join(os.path.abspath(args.out), "baked.blend"))
    with open(report_path) as fh:
        report = json.load(fh)
    bake_report = __import__(module + ".core.measure.report", fromlist=["BakeReport"])
    print(bake_report.BakeReport.from_json(report).to_text())
    for path in [os.path.join(args.out, "baked.blend"), report_path] + list(args.export):
        print("wrote %s" % path)
    if args.top_view:
        from tools import top_view
        print(top_view.summary(top_view.render_top_view(os.path.abspath(args.top_view), target, ctrl)))
    return report


def database(args):
    """Import the takes and build the database (returns the takes' armatures),
    or import an exported database (returns [])."""
    import bpy

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
    import bpy

    try:
        rig = cli_inputs.load_character(args.character)
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
    import tempfile

    import bpy

    if args.controller is not None:
        try:
            ctrl = cli_inputs.load_controller(args.controller)
        except ValueError as ex:
            raise Failure(str(ex)) from None
        first, last = ctrl.animation_data.action.frame_range
        bpy.context.scene.frame_start, bpy.context.scene.frame_end = int(first), int(math.ceil(last))
        return ctrl
    ops = bpy.ops.motion_matching
    scenario = args.scenario
    if args.speed_scale != 1.0:
        folder = tempfile.mkdtemp(prefix="mm_cli_scenario_")
        try:
            path = os.path.join(folder, "scenario.json")
            core_scenario.save_scenario(load_scenario(scenario, args.speed_scale), path)
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
    import bpy

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


def _say(message):
    print("mm_cli: %s" % message, file=sys.stderr)


def main(argv=None):
    """Run the command line; returns the exit status (0 done, 1 failed, one line on stderr)."""
    if argv is None:
        argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    code = 1
    try:
        run(parse(argv))
        code = 0
    except Failure as ex:
        _say(ex)
    except Exception as ex:  # noqa: BLE001  (anything unforeseen is still one line and status 1)
        if os.environ.get("MM_CLI_TRACEBACK"):
            import traceback

            traceback.print_exc()
        _say("unexpected error, nothing more was done (%s: %s); set MM_CLI_TRACEBACK=1 to see where."
             % (type(ex).__name__, str(ex).strip().splitlines()[0] if str(ex).strip() else "no message"))
    finally:
        try:
            finish()
        except Exception as ex:  # noqa: BLE001
            _say("could not clean up after the run (%s: %s)." % (type(ex).__name__, ex))
            code = 1
    return code


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if _SESSION.get("own_bpy"):
        # A bpy-module process started by this script: skip the interpreter
        # teardown, which can crash in some Blender versions once exporters have
        # run; everything is written and removed by now (finish).
        os._exit(code)
    sys.exit(code)
