"""Batch bakes side by side: ``tools.mm_batch --jobs 2`` against ``--jobs 1``
on the same manifest, measured by turns in one run.

Run: .venv-5.3/bin/python -m bench.bench_batch [--entries 8] [--rounds 3] [--jobs 1 2]

The manifest: the sample take's database, built once beforehand and given as
a file (so the rounds time the entries alone), the Mixamo-style character as a
.glb, and ``--entries`` entries on the built-in paths with varied speeds and
starts, each exporting BVH. Every round runs each ``--jobs`` value into a fresh
folder, by turns; printed: the median wall time, entries per minute,
character-seconds baked per second, the processor time of the children, and the
speed-up against the first ``--jobs`` value. Every run's exported BVH files
must be byte-identical to the first run's (the keys do not depend on --jobs);
the bench stops with an error if they are not.
"""

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_batch")

from tools import addon_session, rig_file  # noqa: E402

PATHS = (("showcase", 14.5), ("circle", 16.3), ("straight_walk", 10.0))


def _env():
    # Each mm_batch child makes its own throw-away Blender user folder.
    return {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}


def _batch(manifest, out, *args):
    proc = subprocess.run([sys.executable, "-m", "tools.mm_batch", manifest, "--out", out, *args],
                          cwd=addon_session.REPO, capture_output=True, text=True, timeout=3600, env=_env())
    if proc.returncode != 0:
        sys.exit("mm_batch failed:\n%s%s" % (proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc


def write_manifest(folder, count, database=None):
    """The manifest (entries on the built-in paths, speeds 0.8-1.3x, starts 0-0.7 s) and the seconds of
    animation its entries bake."""
    text = 'fps = 24\nexports = ["bvh"]\n[database]\n'
    if database:
        text += "file = %s\n" % json.dumps(database)
    else:
        text += "takes = [%s]\nscale = 0.01\n" % json.dumps(os.path.join(addon_session.REPO, "samples",
                                                                       "jl_mm_run.bvh"))
    text += '[characters]\nhero = "hero.glb"\n[paths]\n' + "".join(
        '%s = "%s"\n' % (name, name) for name, _s in PATHS)
    seconds = 0.0
    for i in range(count):
        name, length = PATHS[i % len(PATHS)]
        speed = 0.8 + 0.5 * ((i * 7) % 11) / 10.0
        start = 0.1 * ((i * 3) % 8)
        text += ('[[entries]]\nname = "e%02d"\ncharacter = "hero"\npath = "%s"\nspeed_scale = %.2f\n'
                 'start_time = %.1f\n' % (i, name, speed, start))
        seconds += length / speed
    path = os.path.join(folder, "batch.toml")
    with open(path, "w") as fh:
        fh.write(text)
    return path, seconds


def exports_digest(out):
    """SHA-256 of every entry's exported BVH, in entry order."""
    h = hashlib.sha256()
    entries = os.path.join(out, "entries")
    for name in sorted(os.listdir(entries)):
        for f in sorted(os.listdir(os.path.join(entries, name))):
            if f.endswith(".bvh"):
                with open(os.path.join(entries, name, f), "rb") as fh:
                    h.update(name.encode() + b"\0" + fh.read())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm_bench_batch_") as tmp:
        os.replace(rig_file.write("glb", tmp, "Hero"), os.path.join(tmp, "hero.glb"))
        first, _s = write_manifest(tmp, 1)
        _batch(first, os.path.join(tmp, "db"), "--database-only")
        database = os.path.join(tmp, "db", "database", "default.npz")
        manifest, seconds = write_manifest(tmp, args.entries, database)
        walls, cpus, digest = {j: [] for j in args.jobs}, {j: [] for j in args.jobs}, None
        for r in range(args.rounds):
            for jobs in args.jobs:
                out = os.path.join(tmp, "r%d_j%d" % (r, jobs))
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t = time.perf_counter()
                _batch(manifest, out, "--jobs", str(jobs))
                walls[jobs].append(time.perf_counter() - t)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus[jobs].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                d = exports_digest(out)
                if digest is None:
                    digest = d
                elif d != digest:
                    sys.exit("The exports of --jobs %d (round %d) differ from the first run's." % (jobs, r + 1))
            print("round %d/%d done" % (r + 1, args.rounds), flush=True)
    print("%d entries (%.1f s of animation at 24 fps each run), %d rounds by turns, %d processors"
          % (args.entries, seconds, args.rounds, os.cpu_count() or 1))
    print("%-8s %10s %12s %16s %12s %9s" % ("jobs", "median s", "entries/min", "char-s per s", "cpu s", "speed-up"))
    base = statistics.median(walls[args.jobs[0]])
    for jobs in args.jobs:
        wall = statistics.median(walls[jobs])
        print("%-8d %10.2f %12.1f %16.2f %12.1f %8.2fx" % (jobs, wall, 60.0 * args.entries / wall, seconds / wall,
                                                          statistics.median(cpus[jobs]), base / wall))
    print("exports identical across every run: yes (sha256 %s...)" % digest[:12])


if __name__ == "__main__":
    main()
