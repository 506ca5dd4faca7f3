"""Gliding and skating where the path asks for what the takes barely hold: the
path suite and three harder paths baked on the sample, the CMU clips and the
thin takes, measured from the keys.

Run from the repository root (tools/ and core/ are imported as packages):

    .venv-5.3/bin/python -m bench.bench_gliding [--fps 30] [--takes sample cmu_clips thin]
                                              [--paths showcase figure8 ... fast_reversal run_zigzag start_stop]

Takes: ``sample`` (samples/jl_mm_run.bvh), ``cmu_clips`` (the CMU BVH files in
tests/data/cmu or $MM_CMU_DIR, CMU units) and ``thin`` (tools/thin_takes:
3-6 s clips moving one way, feet sliding a little). Each is set up as a user
would and baked by the operator with its defaults (bench/bench_conventions.setup,
bench/bench_paths.bake_path); the extra paths are tools/make_path_suite.EXTRA.
Printed per row: glides (travel over 0.5 m/s with neither ankle under 0.3 m/s
for 0.4 s or more) total and longest, planted and height-only sliding against
the take's own, the rotation-step ratio and the hips' largest distance from the
controller, with the issue's limits that fail. This is measurement, not a test.
"""

import argparse
import glob
import math
import os
import shutil
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_gliding")

from bench import bench_conventions as bc, bench_paths as bp  # noqa: E402
from tools import addon_session  # noqa: E402

TAKES = ("sample", "cmu_clips", "thin")
EXTRA = ("fast_reversal", "run_zigzag", "start_stop")
PATHS = bp.SUITE + EXTRA
_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CMU_DIR = os.environ.get("MM_CMU_DIR", os.path.join(_REPO, "tests", "data", "cmu"))
# The limits: glide longest (s), planted and height-only sliding (x the
# take's own), rotation step (x the take's 99.9th percentile), hips off the path (m).
LIMITS = {"glide": 0.3, "slide": 1.0, "height": 1.5, "rot": 1.5, "hips": 0.12}


def path_folder(tmp):
    """The suite's files and the extra paths in one folder (bench_paths reads it)."""
    from tools import make_path_suite

    folder = os.path.join(tmp, "paths")
    os.makedirs(folder, exist_ok=True)
    for f in glob.glob(os.path.join(bp.SUITE_DIR, "*.json")):
        shutil.copy(f, folder)
    make_path_suite.write(folder, make_path_suite.EXTRA)
    return folder


def take_files(tmp, which):
    from tools import convention_takes as ct

    files = {}
    if "sample" in which:
        files["sample"] = [ct.SAMPLE]
    if "cmu_clips" in which:
        files["cmu_clips"] = sorted(glob.glob(os.path.join(CMU_DIR, "*.bvh")))
        if not files["cmu_clips"]:
            sys.exit("No CMU clips in %s (set MM_CMU_DIR)." % CMU_DIR)
    if "thin" in which:
        files.update(ct.write_all(tmp, ["thin"]))
    return files


def _f(v, fmt):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


HEAD = "%-9s %-15s %-11s %-9s %-12s %-12s %-6s %-7s %s" % (
    "take", "path", "glide tot/l", "raw long", "planted x", "height x", "rot x", "hips cm", "failed")


def line(take, row):
    g, track = row["glide"], row["tracking"]
    fails = [name for name, bad in (
        ("glide", g["longest_s"] > LIMITS["glide"]),
        ("planted", not row["sliding_ratio"] <= LIMITS["slide"]),
        ("height", not row["height_sliding_ratio"] <= LIMITS["height"]),
        ("rot", not row["rotation"]["ratio"] <= LIMITS["rot"]),
        ("hips", not track["max_m"] <= LIMITS["hips"])) if bad]
    return "%-9s %-15s %-11s %-9s %-12s %-12s %-6s %-7s %s" % (
        take, row["path"], "%.2f/%.2f" % (g["total_s"], g["longest_s"]), "%.2f" % row["raw_glide"]["longest_s"],
        "%s (%s)" % (_f(row["sliding_ratio"], "%.2f"), _f(row["sliding"]["cm_per_foot_per_moving_s"], "%.1f")),
        "%s (%s)" % (_f(row["height_sliding_ratio"], "%.2f"),
                     _f(row["height_sliding"]["cm_per_foot_per_moving_s"], "%.1f")),
        _f(row["rotation"]["ratio"], "%.2f"), "%.1f" % (100 * track["max_m"]), ",".join(fails) or "none")


LEGEND = """\
glide tot/l: seconds of glides in the bake (hips over 0.5 m/s, neither ankle under 0.3 m/s, 0.4 s or more),
  total / longest; limit on the longest %.1f s. raw long: the take's own longest (its clips).
planted x / height x: planted and height-only ankle sliding, bake / the take's own (cm per foot per moving
  second); limits %.1f and %.1f. rot x: largest per-frame joint rotation / the take's 99.9th percentile;
  limit %.1f. hips cm: hips' largest distance from the controller; limit %.0f cm.""" % (
    LIMITS["glide"], LIMITS["slide"], LIMITS["height"], LIMITS["rot"], 100 * LIMITS["hips"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fps", type=int, default=30, help="the scene's rate for the bakes (default 30)")
    ap.add_argument("--takes", nargs="+", default=list(TAKES), choices=TAKES)
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    args = ap.parse_args()
    t_start = time.perf_counter()
    addon_session.start()
    from tools import path_measure

    bc.SCALES.update(cmu_clips=0.056444, thin=0.01)
    lines, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        bp.SUITE_DIR = path_folder(tmp)
        files = take_files(tmp, args.takes)
        for take in args.takes:
            arms, db, note, seconds = bc.setup(take, files[take])
            obj, raw_action = arms[0], arms[0].animation_data.action
            travel, _ref, raw = bc.reference(arms, db, args.fps)
            notes.append("%s: %d file(s), %d rows, %.0f m of travel; %s" % (take, len(files[take]), db.num_rows,
                                                                          travel, note))
            floor = path_measure.planted_height(raw)
            for name in args.paths:
                row = bp.bake_path(obj, raw_action, name, args.fps, "", raw, floor, tmp)
                lines.append(line(take, row))
                print(lines[-1], flush=True)
    bc.print_table(args.fps, notes, HEAD, lines, LEGEND, t_start)
    addon_session.disable()


if __name__ == "__main__":
    main()
