"""The mocap users bring: the sample take in other conventions, built with the
defaults and baked on four paths, measured from the baked keys.

Run from the repository root (tools/ and core/ are imported as packages):

    .venv-4.2/bin/python -m bench.bench_conventions [--fps 30] [--takes sample cmu bandai unreal fbx glb]
                                                   [--paths figure8 slow_circle zigzag walk_stand_walk]

The takes are written first (tools/convention_takes.py; FBX and glTF by
Blender's own exporters in a process of their own, tools/take_file.py), then
each is set up as a user would: the shipped dance card, the files imported
with nothing but their unit scale (BVH: ``motion_matching.import_bvh`` with
Add Virtual Root; FBX and glTF: Blender's importers with their defaults, then
Add Virtual Root), tags suggested, and the database built with the defaults.
Only if that build refuses because of the mirror images is it built again with
Mirror Takes off, and the bench says so. Every path is then baked with
``motion_matching.bake``'s defaults and measured from the keys
(bench/bench_paths.bake_path, tools/path_measure). The take's own figures are
measured the same way
at the same rate, pooled over its clips as the bake report pools them (metres
and moving seconds summed; rotation steps within each clip). This is
measurement, not a test.
"""

import argparse
import math
import os
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_conventions")

from bench import bench_paths as bp, done_when  # noqa: E402
from tools import addon_session  # noqa: E402

TAKES = ("sample", "cmu", "bandai", "unreal", "fbx", "glb")
PATHS = ("figure8", "slow_circle", "zigzag", "walk_stand_walk")
SCALES = {"sample": 0.01, "cmu": 0.056444, "bandai": 0.01, "unreal": 0.01}
# The limits: planted sliding, height-only sliding (times the take's own),
# the longest travel with no still ankle (s), facing off travel (degrees), rotation step ratio.
LIMITS = {"slide": 1.0, "height": 1.5, "stretch": 0.4, "facing": 10.0, "rot": 1.5}


def write_takes(folder, which):
    """{take: [files]} of the chosen takes, written into ``folder``."""
    from tools import convention_takes as ct, take_file

    files = {}
    files.update(ct.write_all(folder, [w for w in which if w in ("cmu", "bandai", "unreal")]))
    if "sample" in which:
        files["sample"] = [ct.SAMPLE]
    for fmt in ("fbx", "glb"):
        if fmt in which:
            files[fmt] = [take_file.write(fmt, ct.SAMPLE, 0.01, os.path.join(folder, "sample." + fmt))]
    return files


def _import(take, path):
    """Import one file as a user would; returns the armature."""
    import bpy

    ops = bpy.ops.motion_matching
    before = set(bpy.data.objects.keys())
    if take in SCALES:
        bp_result = ops.import_bvh(filepath=path, global_scale=SCALES[take], add_virtual_root=True)
    elif take == "fbx":
        bp_result = bpy.ops.import_scene.fbx(filepath=path)
    else:
        bp_result = bpy.ops.import_scene.gltf(filepath=path)
    if bp_result != {"FINISHED"}:
        raise RuntimeError("the import of %s did not finish" % path)
    obj = [bpy.data.objects[n] for n in bpy.data.objects.keys()
           if n not in before and bpy.data.objects[n].type == "ARMATURE"][0]
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    bpy.context.view_layer.objects.active = obj
    if not obj.data.motion_matching.root_bone:
        ops.add_virtual_root()
    if obj.animation_data.action.motion_matching.fps <= 0:
        obj.animation_data.action.motion_matching.fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    ops.auto_tag()
    return obj


def setup(take, files):
    """Import, tag and build; returns (armatures, database, build note, seconds)."""
    import bpy

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0      # the rate FBX and glTF keys are read at
    ops.import_dance_card(filepath=os.path.join(bp.SAMPLES, "jl_mm_dance_card.toml"))
    t0 = time.perf_counter()
    arms = [_import(take, path) for path in files]
    print("%s: %d file(s) imported; %s" % (take, len(files), arms[0].data.motion_matching.root_note or
                                           "no note on the root"), flush=True)
    for o in bpy.context.view_layer.objects:
        o.select_set(o in arms)
    bpy.context.view_layer.objects.active = arms[0]
    ops.database_add_action()
    ops.build_database()
    said = scene.motion_matching.database_note
    note = "database built with the defaults (Mirror Takes Automatic)" + ("; " + said if said else "")
    print("%s: %s" % (take, note), flush=True)
    from tools import path_measure

    database = path_measure.addon("bridge.database.store").load(scene)
    return arms, database.matching, note, time.perf_counter() - t0


def reference(arms, db, fps):
    """The take's own motion at ``fps``: (metres its hips travel, the clip that
    travels furthest, every clip's Motion, furthest first). Its figures are
    pooled over the clips, as the bake report pools them (tools/path_measure.measure)."""
    from core.measure import path_metrics as pm

    clips = []
    for obj in arms:
        raw = bp.raw_motion(obj, obj.animation_data.action, db, fps)
        clips.append((float(pm.horizontal_steps(raw.hips).sum()), obj.name, raw))
    clips.sort(key=lambda c: -c[0])
    return sum(c[0] for c in clips), clips[0][1], [c[2] for c in clips]


def _f(v, fmt):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


HEAD = ("%-8s %-16s %-13s %-13s %-9s %-10s %-8s %-10s %-7s %-6s %s"
        % ("take", "path", "planted x", "height x", "stretch s", "facing", "rot x", "hips/clamp", "report",
           "glide", "failed"))


def line(take, row):
    """One row of the table, with the issue's checks that fail."""
    c = done_when.checks(row)
    fails = []
    if not row["sliding_ratio"] <= LIMITS["slide"]:
        fails.append("planted")
    if not row["height_sliding_ratio"] <= LIMITS["height"]:
        fails.append("height")
    if row["unsupported_s"] > LIMITS["stretch"]:
        fails.append("stretch")
    if not row["facing_travel"]["mean_deg"] <= LIMITS["facing"]:
        fails.append("facing")
    if not row["rotation"]["ratio"] <= LIMITS["rot"]:
        fails.append("rot")
    if not c["hips max"]:
        fails.append("hips")
    if not c["report"]:
        fails.append("report")
    return "%-8s %-16s %-13s %-13s %-9s %-10s %-8s %-10s %-7s %-6s %s" % (
        take, row["path"],
        "%s (%s)" % (_f(row["sliding_ratio"], "%.2f"), _f(row["sliding"]["cm_per_foot_per_moving_s"], "%.1f")),
        "%s (%s)" % (_f(row["height_sliding_ratio"], "%.2f"),
                     _f(row["height_sliding"]["cm_per_foot_per_moving_s"], "%.1f")),
        "%.2f/%.2f" % (row["unsupported_s"], row["raw_unsupported_s"]),
        _f(row["facing_travel"]["mean_deg"], "%.1f"), _f(row["rotation"]["ratio"], "%.2f"),
        "%.0f/%.0f" % (100 * row["tracking"]["max_m"], 100 * row["clamp_m"]),
        done_when.mark(c["report"]), "%d" % len(row["glides"]), ",".join(fails) or "none")


LEGEND = """\
planted x: planted ankle sliding (ankle within 3 cm of the take's planted height at both ends of a step and
  under 1 m/s), bake / the take's own (cm per foot per moving second); limit %.1f
height x: the same without the speed test (the seed's measure); limit %.1f
stretch s: longest stretch with the hips over 0.5 m/s and neither ankle under 0.3 m/s, bake/take; limit %.1f
facing: mean degrees between the body and its travel; limit %.0f. rot x: largest per-frame joint rotation
  change / the take's 99.9th percentile; limit %.1f. hips/clamp: hips' largest distance from the path / the
  clamp, cm (limit clamp + 2). report: the report's figures within 10%% of the measured (bench/done_when).
glide: frozen glides (bench/done_when). failed: the checks above that fail""" % (
    LIMITS["slide"], LIMITS["height"], LIMITS["stretch"], LIMITS["facing"], LIMITS["rot"])


def print_table(fps, notes, head, lines, legend, t_start):
    """The bench's closing print: Blender and fps, the notes per take, the table, its legend, the time."""
    import bpy

    print()
    print("Blender %s, bakes at %d fps" % (bpy.app.version_string, fps))
    for n in notes:
        print(n)
    print(head)
    for text in lines:
        print(text)
    print(legend)
    print("bench time %.0f s" % (time.perf_counter() - t_start))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fps", type=int, default=30, help="the scene's rate for the bakes (default 30)")
    ap.add_argument("--takes", nargs="+", default=list(TAKES), choices=TAKES)
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=bp.SUITE)
    args = ap.parse_args()
    t_start = time.perf_counter()
    addon_session.start()
    from tools import path_measure

    lines, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        files = write_takes(tmp, args.takes)
        for take in args.takes:
            arms, db, note, seconds = setup(take, files[take])
            obj, raw_action = arms[0], arms[0].animation_data.action
            travel, ref_name, raw = reference(arms, db, args.fps)
            notes.append("%s: %d file(s), %d rows, built in %.1f s; %s; the take's own figures: its %d clip(s) "
                         "pooled (%.0f m of travel; furthest %s)"
                         % (take, len(files[take]), db.num_rows, seconds, note, len(raw), travel, ref_name))
            floor = path_measure.planted_height(raw)
            for name in args.paths:
                row = bp.bake_path(obj, raw_action, name, args.fps, "", raw, floor, tmp)
                lines.append(line(take, row))
                print(lines[-1], flush=True)
    print_table(args.fps, notes, HEAD, lines, LEGEND, t_start)
    addon_session.disable()


if __name__ == "__main__":
    main()
