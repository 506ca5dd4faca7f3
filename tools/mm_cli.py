"""Motion matching from the command line: BVH in, baked .blend and report out.

With the bpy module (Blender as a Python module):

    python tools/mm_cli.py --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --fps 24 --out out/run

Inside Blender (use a throw-away user folder so your preferences are untouched):

    BLENDER_USER_RESOURCES=$(mktemp -d) blender -b --factory-startup --python tools/mm_cli.py -- \\
        --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --out out/run

The add-on is loaded the way Blender loads it: the extension zip is built with
Blender's own tool and installed into the user repository, unless an enabled
copy is already there. Writes OUT/baked.blend and OUT/report.json, prints the
report as a table, and exits non-zero with a one-line message on failure.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _tool(name):
    """A sibling module of tools/, loaded by file (no sys.path change)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mm_tools_siblings", os.path.join(HERE, "siblings.py"))
    siblings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(siblings)
    return siblings.load(name)


def parse(argv):
    ap = argparse.ArgumentParser(prog="mm_cli", description="Bake motion matching along a scenario path.")
    ap.add_argument("--bvh", action="append", required=True, metavar="FILE", help="a take to match (repeatable)")
    ap.add_argument("--scale", type=float, default=0.01, help="BVH scale (0.01 for centimetres; default 0.01)")
    ap.add_argument("--axis-forward", default="-Z", help="the file's forward axis (default -Z)")
    ap.add_argument("--axis-up", default="Y", help="the file's up axis (default Y)")
    ap.add_argument("--handedness", default="RIGHT", choices=("RIGHT", "LEFT"))
    ap.add_argument("--tpose", metavar="FILE", help="T-pose BVH of the takes' skeleton")
    ap.add_argument("--dance-card", metavar="FILE", help="dance card (TOML or JSON); tags are suggested from motion")
    ap.add_argument("--scenario", default="showcase", help="built-in scenario name or a JSON waypoint file")
    ap.add_argument("--fps", type=float, default=24.0, help="the scene's frame rate (default 24)")
    ap.add_argument("--tag-query", default="", help="restrict matching to tagged frames, e.g. 'walk or run'")
    ap.add_argument("--out", required=True, metavar="DIR", help="output folder")
    group = ap.add_argument_group("bake settings", "one per knob of core.bake.BakeSettings (default: its default)")
    for k in bake_knobs():
        flag, text = "--" + k.name.replace("_", "-"), k.description.replace("%", "%%")
        if k.type is bool:
            group.add_argument(flag, dest=k.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            unit = {"angle": "degrees", "time": "s", "length": "m", "velocity": "m/s"}.get(k.unit)
            group.add_argument(flag, dest=k.name, type=k.type, default=None, metavar=k.type.__name__.upper(),
                               help=text + (" (%s)" % unit if unit else ""))
    return ap.parse_args(argv)


def bake_knobs():
    """The bake's knobs (core.bake.knobs), from this repository's core package
    (numpy and the standard library only: no Blender needed to read them)."""
    import importlib
    import importlib.util

    name = "mm_tools_core"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "core", "__init__.py"),
                                                      submodule_search_locations=[os.path.join(REPO, "core")])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return importlib.import_module(name + ".bake").knobs()


def set_bake_settings(settings, args):
    """Put the knobs given on the command line on the scene's bake settings."""
    import math

    for k in bake_knobs():
        value = getattr(args, k.name)
        if value is not None:
            setattr(settings, k.ui_name, math.radians(value) if k.unit == "angle" else value)


_INSTALLED = []


def load_addon():
    """Enable the add-on as Blender does; return the module name."""
    addon_session = _tool("addon_session")

    if "bpy" not in sys.modules:
        _INSTALLED.append(addon_session.start())
        return _INSTALLED[-1]
    import bpy

    for name in bpy.context.preferences.addons.keys():
        if name.endswith(".motion_matching") and name.startswith("bl_ext."):
            return name
    import tempfile

    _INSTALLED.append(addon_session.install(addon_session.build_zip(tempfile.mkdtemp(prefix="mm_zip_"))))
    return _INSTALLED[-1]


class Failure(Exception):
    pass


def call(op, **kw):
    """Run an operator; turn its error report into a one-line failure."""
    try:
        result = op(**kw)
    except RuntimeError as ex:
        raise Failure(str(ex).strip().replace("Error: ", "").splitlines()[0]) from None
    if result != {"FINISHED"}:
        raise Failure("%s did not finish." % op.idname_py())
    return result


def run(args):
    import bpy

    module = load_addon()
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
        if not os.path.isfile(path):
            raise Failure("BVH file not found: %s" % path)
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
    call(ops.build_database)
    scenario = args.scenario
    if os.path.isfile(scenario):
        call(ops.add_scenario_controller, scenario="FILE", filepath=os.path.abspath(scenario), frame_start=1,
             update_scene_range=True)
    else:
        call(ops.add_scenario_controller, scenario=scenario, frame_start=1, update_scene_range=True)
    ctrl = bpy.context.active_object
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = armatures[0]
    os.makedirs(args.out, exist_ok=True)
    report_path = os.path.join(os.path.abspath(args.out), "report.json")
    set_bake_settings(scene.motion_matching.bake_settings, args)
    call(ops.bake, report_path=report_path)
    bpy.ops.wm.save_as_mainfile(filepath=os.path.join(os.path.abspath(args.out), "baked.blend"))
    with open(report_path) as fh:
        report = json.load(fh)
    bake_bridge = __import__(module + ".motion_matching_addon.bake_bridge", fromlist=["report_text"])
    print(bake_bridge.report_text(report))
    print("wrote %s and %s" % (os.path.join(args.out, "baked.blend"), report_path))
    return report


def main(argv=None):
    if argv is None:
        argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    args = parse(argv)
    try:
        run(args)
    except Failure as ex:
        print("mm_cli: %s" % ex, file=sys.stderr)
        return 1
    finally:
        if _INSTALLED:
            # Unregister panels before the process ends: a bpy process that exits
            # with them registered can hang.
            _tool("addon_session").disable()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if "bpy" in sys.modules and _INSTALLED:
        # A bpy-module process: skip the interpreter teardown, which can crash
        # in some Blender versions once exporters have run; all is written.
        os._exit(code)
    sys.exit(code)
