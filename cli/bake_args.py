"""The bake command's arguments (``blender -c motion_matching bake ...`` and
``build ...``), read and checked before anything is done: every problem is one
sentence (:class:`Failure`), never argparse's usage and exit 2. Plain Python
and core: no Blender needed, so a batch checks all its entries at once.

The bake options are made from core.bake's settings (one flag per knob).
"""

import argparse
import math
import os

from ..core.bake import settings as core_bake_settings
from ..core.database import query as core_tag_query
from ..core.errors import MotionMatchingError
from ..core.paths import moves as core_moves, scenario as core_scenario, scenario_builtins as core_scenario_builtins
from . import scene_inputs

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


PROG = "blender -b -c motion_matching"
DESCRIPTIONS = {"bake": "Bake motion matching along a path, onto the takes' skeleton or a character.",
                "build": "Only build the database of the takes and write it to a .npz file."}


def parse(argv, command="bake"):
    """The arguments of ``bake`` or ``build``, checked (see :func:`validate`);
    raises Failure with a sentence."""
    ap = parser(command)
    # "--axis-up -Y": argparse would take "-Y" for an option; read it as the value.
    joined = []
    for token in argv:
        if joined and joined[-1] in ("--axis-forward", "--axis-up") and token.upper() in AXES:
            joined[-1] += "=" + token
        else:
            joined.append(token)
    args = ap.parse_args(joined)
    if command == "build":
        if args.save_database is None:
            raise Failure("build needs --save-database FILE.npz: the file the database is written to.")
        if args.out is not None:
            raise Failure("build only writes the database: leave out --out, or use bake.")
    return validate(args)


def parser(command="bake"):
    """The argument parser of ``bake`` or ``build`` (its help is the command's ``--help``)."""
    ap = _Parser(prog="%s %s" % (PROG, command), description=DESCRIPTIONS[command])
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
    ap.add_argument("--ground", metavar="FILE",
                    help="walk on this mesh: FILE.blend:Object, or a .glb, .gltf, .fbx or .obj file with one mesh")
    ap.add_argument("--export", action="append", default=[], metavar="FILE",
                    help="export the baked action to a .bvh, .fbx, .glb or .gltf file (repeatable)")
    ap.add_argument("--fps", type=float, default=24.0, help="the scene's frame rate (default 24)")
    ap.add_argument("--tag-query", default="", help="restrict matching to tagged frames, e.g. 'walk or run'")
    ap.add_argument("--moves", action="extend", nargs="+", default=[], metavar="FRAME=QUERY",
                    help="moves along the timeline: from scene FRAME on, bake with tag QUERY (FRAME= alone: back to "
                         "--tag-query); replaces the path's own moves")
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
    return ap


def validate(args):
    """Check every argument before anything is done; raise Failure with one sentence."""
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
            scene_inputs.check_character(args.character)
        if getattr(args, "ground", None) is not None:
            scene_inputs.check_ground(args.ground)
        args.export_formats = [scene_inputs.check_export(path) for path in args.export]
    except ValueError as ex:
        raise Failure(str(ex)) from None
    if args.tag_query.strip():
        try:
            core_tag_query.parse_query(args.tag_query)
        except MotionMatchingError as ex:
            raise Failure("--tag-query: %s" % str(ex).rstrip(".") + ".") from None
    args.move_list = parse_moves(args.moves)
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
            scene_inputs.check_controller(args.controller)
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


def parse_moves(items):
    """core Moves of ``--moves`` items ``FRAME=QUERY`` (any order); raises Failure naming the item."""
    pairs = []
    for item in items:
        frame, sep, query = item.partition("=")
        try:
            value = float(frame)
        except ValueError:
            value = math.nan
        if not sep or not math.isfinite(value):
            raise Failure("--moves %s: give each move as FRAME=QUERY, like 120=run (120= goes back to --tag-query)."
                          % item)
        pairs.append((value, query))
    try:
        return core_moves.Moves.of(pairs)
    except MotionMatchingError as ex:
        raise Failure("--moves: %s" % ex) from None


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
            setattr(settings, k.name, math.radians(value) if k.unit == "angle" else value)
