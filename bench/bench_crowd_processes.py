"""Bake All on one processor against Bake All on every processor: the same
crowd (bench_crowd_speed's scene: linked copies of the sample's armature, each
on its own timed path) baked with Processes 1 and with Processes 0 (one per
processor), by turns in one run, each side in a fresh Blender process.

Run: .venv-5.3/bin/python -m bench.bench_crowd_processes [--count 10] [--seconds 25] [--fps 30] [--rounds 3] [--ceiling]

Printed per side: the median wall time of Bake All (the copy saved, the other
processes' start-up and their bakes keyed here included), character-seconds baked
per second, processor seconds of every process taking part (this one and the
background ones) and the machine's load average (1 minute) as Bake All began;
then the ratio, and what one background process costs before it
bakes anything (Python, bpy, the extension, the copy opened: a crowd-pairs run
with no pairs), and the machine's ceiling: plain Python work in as many
processes side by side against one (two logical processors that share one core
give far less than 2x); with ``--ceiling``, the whole crowd baked with Processes 1
in as many independent Blender processes at once, against one alone: what the
bakes themselves gain side by side on this machine, with nothing shared. Both sides must give every character the same keys (a digest
per character over keys and handles); the bench stops with an error if not.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_crowd_processes")

from bench.bench_crowd_speed import _digest, _setup  # noqa: E402
from tools import addon_session, path_measure  # noqa: E402


def _start_up(scene_file):
    """Seconds a background process takes to open the copy and bake nothing."""
    import bpy

    child_process = path_measure.addon("bridge.child_process")
    bpy.ops.wm.save_as_mainfile(filepath=scene_file, copy=True)
    argv = ["crowd-pairs", "--blend", scene_file, "--pairs", "", "--keys", os.path.dirname(scene_file)]
    t = time.perf_counter()
    proc = subprocess.run(child_process.command(argv), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode:
        sys.exit("The empty crowd-pairs run failed:\n%s%s" % (proc.stdout[-2000:], proc.stderr[-2000:]))
    return time.perf_counter() - t


_SPIN = "x = 0\nfor i in range(20_000_000):\n    x += i\n"


def ceiling(processes):
    """What ``processes`` processes of plain work side by side give against one on
    this machine (the most any number of processes could gain here): N times the
    wall time of one alone over the wall time of N together."""
    def wall(n):
        t = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - t

    alone = min(wall(1) for _ in range(2))
    return processes * alone / min(wall(processes) for _ in range(2))


def child(processes, count, seconds, fps):
    """Set the scene up, Bake All with ``processes``, print one JSON line of figures."""
    addon_session.start()
    import bpy

    folder = tempfile.mkdtemp(prefix="mm_crowd_processes_")
    pairs = _setup(count, seconds, fps, folder)
    scene = bpy.context.scene
    for ctrl, arm in pairs:
        item = scene.motion_matching.crowd.add()
        item.controller, item.armature = ctrl, arm
    scene.motion_matching.crowd_processes = processes
    bpy.ops.motion_matching.build_database()            # not stale: neither side rebuilds it
    start_up = _start_up(os.path.join(folder, "start_up.blend")) if processes != 1 else None
    used = path_measure.addon("bridge.bake.crowd_processes").process_count(processes, len(pairs))
    def cpu():
        return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                   for f in ("ru_utime", "ru_stime"))

    load = os.getloadavg()[0]
    t, c = time.perf_counter(), cpu()
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    wall, cpu_s = time.perf_counter() - t, cpu() - c
    frames = scene.frame_end - scene.frame_start
    out = {"processes": used, "wall": wall, "cpu": cpu_s, "load": load, "character_seconds": len(pairs) * frames / fps, "start_up": start_up,
           "digests": [_digest(arm) for _c, arm in pairs]}
    print("RESULT " + json.dumps(out), flush=True)
    shutil.rmtree(folder, ignore_errors=True)     # the paths and the start-up's copy
    addon_session.finish(blender_temp=True)
    sys.stdout.flush()
    os._exit(0)


def _run(processes, args):
    proc = subprocess.run([sys.executable, "-m", "bench.bench_crowd_processes", "--child", str(processes),
                           "--count", str(args.count), "--seconds", str(args.seconds), "--fps", str(args.fps)],
                          cwd=addon_session.REPO, capture_output=True, text=True, timeout=7200)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    sys.exit("The Processes %d run printed no figures:\n%s%s" % (processes, proc.stdout[-3000:], proc.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=10, help="characters (each on its own path)")
    ap.add_argument("--seconds", type=float, default=25.0, help="seconds of path per character")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ceiling", action="store_true",
                    help="also run Processes 1 in as many Blender processes at once as Processes 0 uses, against one")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        return child(args.child, args.count, args.seconds, args.fps)
    runs = {1: [], 0: []}
    for r in range(args.rounds):
        for processes in runs:
            runs[processes].append(_run(processes, args))
            print("round %d/%d: Processes %d: %.1f s" % (r + 1, args.rounds, processes, runs[processes][-1]["wall"]),
                  flush=True)
    if len({tuple(run["digests"]) for side in runs.values() for run in side}) != 1:
        sys.exit("The keys differ between the runs: every processor count must give every character the same keys.")
    used = runs[0][0]["processes"]
    print("%d characters, %.0f s of path each at %d fps; median of %d run(s) per side, by turns; every character's "
          "keys identical on both sides" % (args.count, args.seconds, args.fps, args.rounds))
    print("%-40s %9s %9s %11s %6s" % ("side", "wall s", "cpu s", "char-s / s", "load"))
    tput = {}
    for processes, label in ((1, "Bake All, Processes 1 (this process)"),
                             (0, "Bake All, Processes 0 (%d processes)" % used)):
        wall = statistics.median(r["wall"] for r in runs[processes])
        tput[processes] = runs[processes][0]["character_seconds"] / wall
        print("%-40s %9.1f %9.1f %11.1f %6.1f" % (label, wall, statistics.median(r["cpu"] for r in runs[processes]),
                                                  tput[processes], statistics.median(r["load"] for r in runs[processes])))
    print("every processor / one: %.2fx on %d processes" % (tput[0] / tput[1], used))
    print("one background process's start-up (open the copy, bake nothing): %.1f s"
          % statistics.median(r["start_up"] for r in runs[0]))
    print("this machine's ceiling: %d processes of plain Python work side by side do %.2fx the work of one"
          % (used, ceiling(used)))
    if args.ceiling:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(used) as pool:
            side = list(pool.map(lambda _k: _run(1, args), range(used)))
        alone = statistics.median(r["wall"] for r in runs[1])
        print("the same crowd baked with Processes 1 in %d Blender processes at once: %s s each (alone: %.1f s), "
              "%.2fx the work of one" % (used, ", ".join("%.1f" % r["wall"] for r in side), alone,
                                         used * alone / max(r["wall"] for r in side)))


if __name__ == "__main__":
    main()
