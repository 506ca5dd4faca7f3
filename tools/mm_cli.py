"""Motion matching from the command line: BVH in, baked .blend and report out.

With the bpy module (Blender as a Python module), from the repository root:

    python -m tools.mm_cli --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --fps 24 --out out/run

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
"""

import argparse
import json
import math
import os
import shutil
import sys

try:  # absolute imports: this file also runs as a script inside Blender (see above)
    from core.bake import settings as core_bake_settings
    from core.io import scenario as core_scenario, scenario_builtins as core_scenario_builtins
    from core.database import query as core_tag_query
    from core.errors import MotionMatchingError
    from tools import addon_session
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
    ap.add_argument("--bvh", action="append", required=True, metavar="FILE", help="a take to match (repeatable)")
    ap.add_argument("--scale", type=float, default=0.01,
                    help="BVH scale (0.01 for centimetres; default 0.01)")
    ap.add_argument("--axis-forward", default="-Z", help="the file's forward axis: X, Y, Z, -X, -Y or -Z (default -Z)")
    ap.add_argument("--axis-up", default="Y", help="the file's up axis: X, Y, Z, -X, -Y or -Z (default Y)")
    ap.add_argument("--handedness", default="RIGHT", choices=("RIGHT", "LEFT"))
    ap.add_argument("--tpose", metavar="FILE", help="T-pose BVH of the takes' skeleton")
    ap.add_argument("--dance-card", metavar="FILE", help="dance card (TOML or JSON); tags are suggested from motion")
    ap.add_argument("--scenario", default="showcase", help="built-in scenario name or a JSON waypoint file")
    ap.add_argument("--fps", type=float, default=24.0, help="the scene's frame rate (default 24)")
    ap.add_argument("--tag-query", default="", help="restrict matching to tagged frames, e.g. 'walk or run'")
    ap.add_argument("--mirror-takes", nargs="?", const="on", type=str.lower, choices=MIRROR_CHOICES, default=None,
                    help="the database's Mirror Takes: auto (mirror when the skeleton can be mirrored, else say why "
                         "and build without), on (refuse then) or off; alone: on (default: the add-on's, auto)")
    ap.add_argument("--no-mirror-takes", dest="mirror_takes", action="store_const", const="off",
                    help="the same as --mirror-takes off")
    ap.add_argument("--out", required=True, metavar="DIR", help="output folder")
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
    for path in args.bvh:
        if not os.path.isfile(path):
            raise Failure("BVH file not found: %s" % path)
    for option, path in (("--tpose", args.tpose), ("--dance-card", args.dance_card)):
        if path is not None and not os.path.isfile(path):
            raise Failure("%s file not found: %s" % (option, path))
    if not os.path.isfile(args.scenario):
        names = sorted(core_scenario_builtins.BUILTINS)
        if args.scenario not in names:
            raise Failure("--scenario %r is neither a built-in scenario (%s) nor a file."
                          % (args.scenario, ", ".join(names)))
    if args.tag_query.strip():
        try:
            core_tag_query.parse_query(args.tag_query)
        except MotionMatchingError as ex:
            raise Failure("--tag-query: %s" % str(ex).rstrip(".") + ".") from None
    _check_bake_knobs(args)
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

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    fps = args.fps
    scene.render.fps = max(1, int(round(fps)))
    scene.render.fps_base = scene.render.fps / fps
    if args.dance_card:
        call(ops.import_dance_card, filepath=os.path.abspath(args.dance_card))
    armatures = []
    for path in args.bvh:
        before = set(bpy.data.objects.keys())
        call(ops.import_bvh, filepath=os.path.abspath(path), global_scale=args.scale,
             axis_forward=args.axis_forward, axis_up=args.axis_up, handedness=args.handedness,
             add_virtual_root=True)
        obj = [bpy.data.objects[n] for n in bpy.data.objects.keys() if n not in before][0]
        armatures.append(obj)
        if args.dance_card:
            call(ops.auto_tag)
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
    scenario = args.scenario
    if os.path.isfile(scenario):
        call(ops.add_scenario_controller, scenario="FILE", filepath=os.path.abspath(scenario), frame_start=1,
             update_scene_range=True)
    else:
        call(ops.add_scenario_controller, scenario=scenario, frame_start=1, update_scene_range=True)
    ctrl = bpy.context.active_object
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = armatures[0]
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as ex:
        raise Failure("Cannot make the folder %s (%s)." % (args.out, ex.strerror or ex)) from None
    report_path = os.path.join(os.path.abspath(args.out), "report.json")
    set_bake_settings(scene.motion_matching.bake_settings, args)
    if args.use_facing is None and scenario_has_facing(scenario):
        # A scenario that asks for a facing is baked facing it (--no-use-facing: where it goes).
        scene.motion_matching.bake_settings.use_facing = True
    call(ops.bake, report_path=report_path)
    call(bpy.ops.wm.save_as_mainfile, filepath=os.path.join(os.path.abspath(args.out), "baked.blend"))
    with open(report_path) as fh:
        report = json.load(fh)
    bake_report = __import__(module + ".core.measure.report", fromlist=["BakeReport"])
    print(bake_report.BakeReport.from_json(report).to_text())
    print("wrote %s and %s" % (os.path.join(args.out, "baked.blend"), report_path))
    if args.top_view:
        from tools import top_view
        print(top_view.summary(top_view.render_top_view(os.path.abspath(args.top_view), armatures[0], ctrl)))
    return report


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
