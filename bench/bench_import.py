"""Import speed: ours against Blender's own BVH importer, same process, same file.

Run: .venv-5.0/bin/python -m bench.bench_import [--repeat 5]
Prints medians (seconds), the ratio, and ours on the take tiled 2x, 5x and 10x
with the time per frame, to show how the time grows with the number of frames.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_import")

from tools import addon_session  # noqa: E402

SAMPLE = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")


def timed(fn, repeat):
    import bpy

    times = []
    for _ in range(repeat):
        bpy.ops.wm.read_homefile(use_empty=True)
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def tiled(src, dst, copies=1, at_least=None):
    """The take with its MOTION block repeated ``copies`` times (or as often as
    it takes to reach ``at_least`` frames); returns the frame count."""
    with open(src) as fh:
        text = fh.read()
    head, _, rest = text.partition("MOTION")
    lines = rest.strip().splitlines()
    frames = int(lines[0].split()[1])
    if at_least is not None:
        copies = -(-at_least // frames)
    body = "\n".join(lines[2:]) + "\n"
    with open(dst, "w") as fh:
        fh.write(head + "MOTION\nFrames: %d\n%s\n" % (frames * copies, lines[1]))
        for _ in range(copies):
            fh.write(body)
    return frames * copies


def phases(path):
    """Seconds of each step of an import of ``path``, with Blender's own
    dependency-graph update (which copies the new action for evaluation) apart."""
    import importlib

    import bpy
    import numpy as np

    bvh_parse = importlib.import_module(addon_session.MODULE + ".core.io.bvh_parse")
    bvh_convert = importlib.import_module(addon_session.MODULE + ".core.io.bvh_convert")
    build = importlib.import_module(addon_session.MODULE + ".bridge.files.import_bvh")
    bpy.ops.wm.read_homefile(use_empty=True)
    marks = [time.perf_counter()]
    data = bvh_parse.read_bvh(path)
    marks.append(time.perf_counter())
    motion = bvh_convert.to_blender(data, 0.01)
    marks.append(time.perf_counter())
    build.build(bpy.context, "take", motion, np.arange(data.frame_count) + 1.0)
    marks.append(time.perf_counter())
    bpy.context.view_layer.update()
    marks.append(time.perf_counter())
    return np.diff(marks)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    addon_session.start()
    import bpy

    ours = lambda path: bpy.ops.motion_matching.import_bvh(filepath=path, global_scale=0.01)  # noqa: E731
    blender = lambda path: bpy.ops.import_anim.bvh(filepath=path, global_scale=0.01,  # noqa: E731
                                                   rotate_mode="QUATERNION")
    ours(SAMPLE)  # warm up imports and caches once
    m_ours, _ = timed(lambda: ours(SAMPLE), args.repeat)
    m_blender, _ = timed(lambda: blender(SAMPLE), args.repeat)
    tiles = {}
    with tempfile.TemporaryDirectory() as tmp:
        for copies in (2, 5, 10):
            big = os.path.join(tmp, "tiled%d.bvh" % copies)
            frames = tiled(SAMPLE, big, copies)
            tiles[copies] = (frames, timed(lambda: ours(big), max(1, args.repeat // 2))[0])
    print("Blender %s, sample take 5562 frames x 23 joints, median of %d runs" % (bpy.app.version_string, args.repeat))
    print("%-40s %10s" % ("importer", "seconds"))
    print("%-40s %10.3f" % ("Blender import_anim.bvh (quaternion)", m_blender))
    print("%-40s %10.3f" % ("motion_matching.import_bvh", m_ours))
    print("%-40s %10.1fx" % ("ratio (Blender / ours)", m_blender / m_ours))
    print("growth with frames (ours; the take tiled):")
    print("%-10s %8s %9s %14s" % ("copies", "frames", "seconds", "us per frame"))
    print("%-10d %8d %9.3f %14.1f" % (1, 5562, m_ours, 1e6 * m_ours / 5562))
    for copies, (frames, sec) in tiles.items():
        print("%-10d %8d %9.3f %14.1f" % (copies, frames, sec, 1e6 * sec / frames))
    print("steps of one import (seconds): parse, convert, armature+keys | Blender's depsgraph update")
    with tempfile.TemporaryDirectory() as tmp:
        for copies in (1, 5, 10):
            path = SAMPLE if copies == 1 else os.path.join(tmp, "t%d.bvh" % copies)
            if copies > 1:
                tiled(SAMPLE, path, copies)
            p = phases(path)
            print("%-10d %6.3f %8.3f %8.3f | %6.3f" % (copies, *p))
    addon_session.finish()   # disable, remove the throw-away user folder


if __name__ == "__main__":
    main()
