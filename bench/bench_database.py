"""Database build time, and search speed on the real sample database.

Run: .venv-5.0/bin/python bench/bench_database.py

Builds the database of the sample take (5562 frames) with the operator, then of
the take tiled 10x (as one action), reports medians, writes the sample database
to a temporary .npz and runs bench_search on its real features (tiled to
1,000,000 rows there).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench only: find tools/

from tools import addon_session  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")


def setup(path):
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.motion_matching.import_bvh(filepath=path, global_scale=0.01, add_virtual_root=True)
    bpy.ops.motion_matching.database_add_action()


def build_times(path, repeat):
    import bpy

    setup(path)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
        times.append(time.perf_counter() - t)
    return statistics.median(times), bpy.context.scene.motion_matching.database_summary


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--brute-queries-1m", type=int, default=200,
                    help="queries checked against brute force at 1,000,000 rows (each takes ~0.1 s)")
    args = ap.parse_args()
    addon_session.start()
    import bpy
    sys.path.insert(0, HERE)
    from bench_import import tiled

    small, small_summary = build_times(SAMPLE, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        big_path = os.path.join(tmp, "tiled.bvh")
        tiled(SAMPLE, big_path, 10)
        big, big_summary = build_times(big_path, max(1, args.repeat // 2))
        setup(SAMPLE)
        bpy.ops.motion_matching.build_database()
        npz = os.path.join(tmp, "sample_db.npz")
        bpy.ops.motion_matching.export_database(filepath=npz)
        print("Blender %s; medians" % bpy.app.version_string)
        print("%-34s %8.3f s   %s" % ("build, sample take", small, small_summary))
        print("%-34s %8.3f s   %s" % ("build, take tiled 10x", big, big_summary))
        print("%-34s %8.2fx" % ("ratio (10x frames)", big / small))
        addon_session.disable()
        if not args.skip_search:
            sys.stdout.flush()
            code = subprocess.call([sys.executable, os.path.join(HERE, "bench_search.py"), "--npz", npz,
                                    "--brute-queries-1m", str(args.brute_queries_1m)])
            sys.exit(code)


if __name__ == "__main__":
    main()
