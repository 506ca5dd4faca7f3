"""Import speed: ours against Blender's own BVH importer, same process, same file.

Run: .venv-5.0/bin/python bench/bench_import.py [--repeat 5]
Prints medians (seconds), the ratio, and ours on the take tiled 10x to show
that the time grows linearly with the number of frames.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench only: find tools/

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


def tiled(src, dst, copies):
    """The take with its MOTION block repeated ``copies`` times."""
    with open(src) as fh:
        text = fh.read()
    head, _, rest = text.partition("MOTION")
    lines = rest.strip().splitlines()
    frames = int(lines[0].split()[1])
    body = lines[2:]
    with open(dst, "w") as fh:
        fh.write(head + "MOTION\nFrames: %d\n%s\n" % (frames * copies, lines[1]))
        for _ in range(copies):
            fh.write("\n".join(body) + "\n")
    return frames * copies


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
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "tiled.bvh")
        frames = tiled(SAMPLE, big, 10)
        m_big, _ = timed(lambda: ours(big), max(1, args.repeat // 2))
    print("Blender %s, sample take 5562 frames x 23 joints, median of %d runs" % (bpy.app.version_string, args.repeat))
    print("%-40s %10s" % ("importer", "seconds"))
    print("%-40s %10.3f" % ("Blender import_anim.bvh (quaternion)", m_blender))
    print("%-40s %10.3f" % ("motion_matching.import_bvh", m_ours))
    print("%-40s %10.1fx" % ("ratio (Blender / ours)", m_blender / m_ours))
    print("%-40s %10.3f  (%d frames; %.2fx the time for 10x the frames)"
          % ("ours, take tiled 10x", m_big, frames, m_big / m_ours))
    addon_session.disable()


if __name__ == "__main__":
    main()
