"""Scale: many joints, many frames; time and peak memory of import and build.

Run: .venv-4.5/bin/python -m bench.bench_scale [--joints 10000] [--frames 200000]

1. Joints: made-up skeletons of 1,000 to ``--joints`` joints (a bushy tree, 30
   frames), imported with ``motion_matching.import_bvh``: seconds in total and
   per joint, and the steps apart (parse, convert, armature, keys), so that
   growth with the joint count shows.
2. Frames: the sample take tiled to about ``--frames`` frames (23 joints),
   imported with the virtual root and built into a database. For each stage
   the peak resident memory above what the process held before the import
   (Linux: VmHWM, reset between stages through /proc/self/clear_refs;
   elsewhere: ru_maxrss, which cannot be reset) is printed next to the size of
   the keyed data (keys x 72 bytes, Blender's BezTriple: what Blender itself
   keeps for them) and their ratio.
"""

import argparse
import gc
import os
import resource
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_scale")

from bench.bench_import import tiled  # noqa: E402
from tools import addon_session  # noqa: E402

SAMPLE = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")
BEZTRIPLE_BYTES = 72  # sizeof(BezTriple): 9 floats of key and handles, tilt, weight, radius, flags


# ----------------------------------------------------------------------------
# Memory


def _status_kb(field):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak():
    """Start a new peak measurement; False where the peak cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def current_bytes():
    kb = _status_kb("VmRSS")
    return kb * 1024 if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_bytes():
    kb = _status_kb("VmHWM")
    return kb * 1024 if kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def mb(n):
    return n / 1e6


# ----------------------------------------------------------------------------
# Joints


def joint_steps(path):
    """Seconds of parse, convert, armature (edit bones) and keys of one import."""
    import importlib

    import bpy
    import numpy as np

    bvh_parse = importlib.import_module(addon_session.MODULE + ".core.io.bvh_parse")
    bvh_convert = importlib.import_module(addon_session.MODULE + ".core.io.bvh_convert")
    build = importlib.import_module(addon_session.MODULE + ".bridge.files.import_bvh")
    bpy.ops.wm.read_homefile(use_empty=True)
    marks = {}
    t = time.perf_counter()
    data = bvh_parse.read_bvh(path)
    marks["parse"] = time.perf_counter() - t
    t = time.perf_counter()
    motion = bvh_convert.to_blender(data, 0.01)
    marks["convert"] = time.perf_counter() - t
    t = time.perf_counter()
    build.build(bpy.context, "take", motion, np.arange(data.frame_count) + 1.0,
                timings=marks)
    marks["total build"] = time.perf_counter() - t
    return marks


def bench_joints(max_joints, frames):
    import bpy
    from tools.bvh_writer import synthetic_bvh

    sizes = sorted({n for n in (1000, 2000, 5000, max_joints) if n <= max_joints})
    print("\n1. Joints (made-up skeleton, %d frames): motion_matching.import_bvh" % frames)
    print("%8s %8s %10s %12s   %s" % ("joints", "curves", "seconds", "ms per joint", "steps (s)"))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, "j%d.bvh" % n)
            with open(path, "w") as fh:
                fh.write(synthetic_bvh(n, frames, seed=n))
            bpy.ops.wm.read_homefile(use_empty=True)
            t = time.perf_counter()
            assert bpy.ops.motion_matching.import_bvh(filepath=path, global_scale=0.01) == {"FINISHED"}
            sec = time.perf_counter() - t
            obj = bpy.context.active_object
            import importlib

            compat = importlib.import_module(addon_session.MODULE + ".bridge.blender.compat")
            curves = len(compat.fcurves(obj.animation_data.action, obj))
            steps = joint_steps(path)
            print("%8d %8d %10.2f %12.3f   %s" % (
                n, curves, sec, 1e3 * sec / n, ", ".join("%s %.2f" % kv for kv in steps.items())))


# ----------------------------------------------------------------------------
# Frames


def key_count():
    import importlib

    import bpy

    compat = importlib.import_module(addon_session.MODULE + ".bridge.blender.compat")
    obj = bpy.context.active_object
    curves = compat.fcurves(obj.animation_data.action, obj)
    return len(curves), sum(len(fc.keyframe_points) for fc in curves)


def bench_frames(frames_wanted):
    import bpy

    print("\n2. Frames (the sample take tiled, 23 joints)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiled.bvh")
        frames = tiled(SAMPLE, path, at_least=frames_wanted)
        size = os.path.getsize(path)
        bpy.ops.wm.read_homefile(use_empty=True)
        gc.collect()
        base = current_bytes()
        resettable = reset_peak()
        t = time.perf_counter()
        result = bpy.ops.motion_matching.import_bvh(filepath=path, global_scale=0.01, add_virtual_root=True)
        import_s = time.perf_counter() - t
        assert result == {"FINISHED"}
        import_peak = peak_bytes() - base
        curves, keys = key_count()
        keyed = keys * BEZTRIPLE_BYTES
        after_import = current_bytes() - base
        gc.collect()
        reset_peak()
        assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
        t = time.perf_counter()
        assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
        build_s = time.perf_counter() - t
        build_peak = peak_bytes() - base
        stored = len(bytes(bpy.context.scene["motion_matching_database"]))
    print("file %.1f MB, %d frames; %d curves, %d keys; keyed data %.1f MB (%d B per key)"
          % (mb(size), frames, curves, keys, mb(keyed), BEZTRIPLE_BYTES))
    if not resettable:
        print("(peak memory cannot be reset on this system: the build's peak includes the import's)")
    print("%-34s %9s %14s %10s" % ("stage", "seconds", "peak MB above", "peak / keyed"))
    print("%-34s %9.2f %14.0f %10.2f" % ("import (with virtual root)", import_s, mb(import_peak), import_peak / keyed))
    print("%-34s %9s %14.0f %10.2f" % ("  held after the import", "", mb(after_import), after_import / keyed))
    print("%-34s %9.2f %14.0f %10.2f" % ("build database", build_s, mb(build_peak), build_peak / keyed))
    print("database %.1f MB" % mb(stored))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--joints", type=int, default=10000)
    ap.add_argument("--joint-frames", type=int, default=30)
    ap.add_argument("--frames", type=int, default=200000)
    ap.add_argument("--skip-joints", action="store_true")
    ap.add_argument("--skip-frames", action="store_true")
    args = ap.parse_args()
    addon_session.start()
    import bpy

    print("Blender %s" % bpy.app.version_string)
    if not args.skip_frames:
        bench_frames(args.frames)
    if not args.skip_joints:
        bench_joints(args.joints, args.joint_frames)
    addon_session.disable()


if __name__ == "__main__":
    main()
