"""Many clips: time and peak memory of importing N BVH clips in one call and
building their database, for N = 25, 50, 100, 150.

Run: .venv-4.2/bin/python -m bench.bench_clips [--counts 25 50 100 150] [--runs 3]

The clips are cut from the sample take (3-10 s each, seeded; the first N of the
same 150 files, so a larger N only adds clips) by ``tools.clip_files`` into a
temporary folder. Each run is a fresh bpy process (so that its peak memory is
its own): it loads the add-on, then imports the N files with one
``motion_matching.import_bvh`` call (virtual root on) and runs
``motion_matching.build_database`` (Mirror Takes as the scene's default). Peak
memory is the process's resident high-water mark (Linux: VmHWM, which sees
Blender's own allocations; elsewhere ru_maxrss) above what it held once the
add-on was loaded. Printed: medians over the runs, and per clip and per 1,000
frames, so that linear growth shows as flat ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_clips")

from bench.bench_scale import current_bytes, peak_bytes, reset_peak  # noqa: E402
from tools import addon_session  # noqa: E402
from tools.clip_files import cut_clips  # noqa: E402

SAMPLE = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")


def child(folder, count):
    """One run in this (fresh) process: import ``count`` clips of ``folder`` and build; print a JSON line."""
    addon_session.start()
    import bpy

    names = sorted(n for n in os.listdir(folder) if n.endswith(".bvh"))[:count]
    bpy.ops.wm.read_homefile(use_empty=True)
    base = current_bytes()
    reset_peak()
    t = time.perf_counter()
    assert bpy.ops.motion_matching.import_bvh(directory=folder, files=[{"name": n} for n in names],
                                              global_scale=0.01, add_virtual_root=True) == {"FINISHED"}
    import_s = time.perf_counter() - t
    import_peak = peak_bytes() - base
    t = time.perf_counter()
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    build_s = time.perf_counter() - t
    peak = peak_bytes() - base
    settings = bpy.context.scene.motion_matching
    frames = sum(int(e.action.frame_range[1] - e.action.frame_range[0]) + 1 for e in settings.entries)
    print("RESULT " + json.dumps({
        "clips": len(settings.entries), "frames": frames, "import_s": import_s, "build_s": build_s,
        "import_peak": import_peak, "peak": peak, "summary": settings.database_summary,
        "blender": bpy.app.version_string}))
    sys.stdout.flush()
    addon_session.finish(blender_temp=True)
    os._exit(0)


def run_child(folder, count):
    proc = subprocess.run([sys.executable, "-m", "bench.bench_clips", "--child", folder, str(count)],
                          cwd=addon_session.REPO, capture_output=True, text=True, timeout=3600)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit("run with %d clips failed:\n%s%s" % (count, proc.stdout[-2000:], proc.stderr[-2000:]))
    return json.loads(lines[-1][len("RESULT "):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", type=int, nargs="+", default=[25, 50, 100, 150])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per count (median)")
    ap.add_argument("--child", nargs=2, metavar=("FOLDER", "COUNT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    user = addon_session.prepare_user_dir()
    try:
        # One zip for every run (each run installs it into its own user folder).
        os.environ[addon_session.ZIP_ENV] = addon_session.build_zip(os.path.join(user, "dist"))
        with tempfile.TemporaryDirectory(prefix="mm_clips_") as folder:
            cut_clips(SAMPLE, folder, max(args.counts), min_s=3.0, max_s=10.0, seed=0)
            rows = []
            for count in args.counts:
                runs = [run_child(folder, count) for _ in range(args.runs)]
                rows.append({k: statistics.median(r[k] for r in runs) if isinstance(runs[0][k], (int, float))
                             else runs[0][k] for k in runs[0]})
                _print_row(rows[-1], len(rows) == 1)
            print("database of the largest: %s" % rows[-1]["summary"])
    finally:
        addon_session.finish()


def _print_row(r, header):
    if header:
        print("Blender %s, medians of fresh processes; peak = resident high-water mark above the loaded add-on"
              % r["blender"])
        print("%6s %8s %9s %9s %10s %10s | %11s %13s %11s" % (
            "clips", "frames", "import s", "build s", "import MB", "peak MB",
            "ms per clip", "ms per kframe", "MB per clip"))
    total = r["import_s"] + r["build_s"]
    print("%6d %8d %9.2f %9.2f %10.0f %10.0f | %11.1f %13.1f %11.2f" % (
        r["clips"], r["frames"], r["import_s"], r["build_s"], r["import_peak"] / 1e6, r["peak"] / 1e6,
        1000 * total / r["clips"], 1e6 * total / r["frames"], r["peak"] / 1e6 / r["clips"]))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
