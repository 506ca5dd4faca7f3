"""Cut a BVH take into clip files (for the many-clips bench and tests).

The clips keep the take's header and its MOTION lines as written, so a clip's
frames are exactly the take's frames: ``python -m tools.clip_files TAKE DIR N``.
"""

import argparse
import os

import numpy as np


def _split(path):
    """(header text up to MOTION, frame time line, list of frame lines) of a BVH file."""
    with open(path, encoding="utf-8", errors="strict") as fh:
        text = fh.read()
    head, _, motion = text.partition("\nMOTION")
    lines = [line for line in motion.splitlines() if line.strip()]
    frame_time = next(line for line in lines[:3] if line.lower().startswith("frame time"))
    start = lines.index(frame_time) + 1
    return head + "\n", frame_time.strip(), lines[start:]


def cut_clips(take, folder, count, min_s=3.0, max_s=10.0, seed=0, names=None):
    """Write ``count`` clips of ``take`` into ``folder``, each ``min_s``-``max_s``
    seconds long from a seeded start; ``names(i)`` gives the i-th file's name
    (default ``clip_001.bvh``...). Returns the paths, in the order written."""
    head, frame_time, frames = _split(take)
    dt = float(frame_time.split(":")[1])
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(count):
        length = int(round(rng.uniform(min_s, max_s) / dt))
        length = min(length, len(frames))
        start = int(rng.integers(0, len(frames) - length + 1))
        name = names(i) if names else "clip_%03d.bvh" % (i + 1)
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(head + "MOTION\nFrames: %d\n%s\n" % (length, frame_time))
            fh.write("\n".join(frames[start:start + length]) + "\n")
        paths.append(path)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(prog="clip_files", description=__doc__.splitlines()[0])
    ap.add_argument("take")
    ap.add_argument("folder")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for path in cut_clips(args.take, args.folder, args.count, seed=args.seed):
        print(path)


if __name__ == "__main__":
    main()
