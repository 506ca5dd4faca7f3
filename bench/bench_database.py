"""Database build time, and search speed on the real sample database.

Run: .venv-5.0/bin/python -m bench.bench_database

First times the Blender-free parts (F-Curve evaluation, core build_database).
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

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_database")

from tools import addon_session  # noqa: E402

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


def core_times(repeat):
    """Blender-free parts, timed here instead of in the tests: F-Curve evaluation
    (100 sparse curves of 700 keys over 5000 frames) and core.build_database on
    a random take-sized clip (5562 frames, 23 joints)."""
    import numpy as np

    from core.database.clip_features import Clip
    from core.database.feature_database import build_database
    from core.database.feature_spec import default_spec
    from core.io.fcurve_eval import evaluate_curves
    from core.io.fcurve_keys import BEZIER, LINEAR
    from core.maths.transforms import quat_from_axis_angle

    rng = np.random.default_rng(0)
    curves = []
    for _ in range(100):
        x = np.cumsum(rng.integers(1, 13, 700)).astype(float)
        y = rng.uniform(-5, 5, 700)
        co = np.column_stack([x, y])
        hl, hr = co.copy(), co.copy()
        hl[:, 0] -= rng.uniform(0.5, 2, 700)
        hr[:, 0] += rng.uniform(0.5, 2, 700)
        hl[:, 1] += rng.normal(0, 2, 700)
        hr[:, 1] += rng.normal(0, 2, 700)
        curves.append({"co": co, "handle_left": hl, "handle_right": hr,
                       "interpolation": np.where(rng.random(700) < 0.9, BEZIER, LINEAR)})
    frames = np.arange(5000.0)
    n, j = 5562, 23
    pos = np.cumsum(rng.normal(0, 0.01, size=(n, j, 3)), axis=0)
    yaw = np.cumsum(rng.normal(0, 0.01, size=n))
    root = np.cumsum(rng.normal(0, 0.01, size=(n, 3)), axis=0)
    root[:, 2] = 0.0
    quats = quat_from_axis_angle(np.broadcast_to([0.0, 0.0, 1.0], (n, 3)), yaw)
    clip = Clip("take", 60.0, ["J%d" % k for k in range(j)], pos, root, quats)
    spec = default_spec("J3", "J7", "J0")
    rows = []
    for label, fn in (("F-Curves: 100 x 700 keys, 5000 frames", lambda: evaluate_curves(curves, frames, "LINEAR")),
                      ("core build_database, 5562 x 23", lambda: build_database(spec, [clip], contact_joints=("J4", "J8")))):
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        rows.append((label, statistics.median(times)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--brute-queries-1m", type=int, default=200,
                    help="queries checked against brute force at 1,000,000 rows (each takes ~0.1 s)")
    args = ap.parse_args()
    for label, seconds in core_times(args.repeat):
        print("%-34s %8.3f s   (median of %d, no Blender)" % (label, seconds, args.repeat))
    addon_session.start()
    import bpy
    from bench.bench_import import tiled

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
        addon_session.finish()   # disable, remove the throw-away user folder
        if not args.skip_search:
            sys.stdout.flush()
            code = subprocess.call([sys.executable, "-m", "bench.bench_search", "--npz", npz,
                                    "--brute-queries-1m", str(args.brute_queries_1m)],
                                   cwd=addon_session.REPO)
            sys.exit(code)


if __name__ == "__main__":
    main()
