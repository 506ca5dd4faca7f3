"""Bake speed: 60 s of path at 60 fps (3,600 frames), foot lock on.

Run: .venv-5.0/bin/python -m bench.bench_bake [--repeat 3] [--compare-to DIR --rounds 3]
The path is the built-in 'circle' scenario repeated to 60 s (walk), then the
'showcase' (run, stop, walk back) for comparison. Prints medians and the
real-time factor (seconds of animation per second of baking), and the
processor time of the bakes (steadier than the wall clock on a shared machine).

``--compare-to DIR``: DIR is another checkout of the repository (the code
before a change, say). This bench is run there and here by turns, one process
each, ``--rounds`` times, with the same Python; the medians of both and their
ratio are printed, measured side by side under the same load.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_bake")

from tools import addon_session  # noqa: E402

SAMPLE = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")


def long_path(path, seconds=60.0):
    """Timed waypoints: a 2 s stand, then a walk round a circle and a run down a
    straight, alternating, for ``seconds``."""
    import math

    pts, t = [{"t": 0.0, "x": 0.0, "y": 0.0}, {"t": 2.0, "x": 0.0, "y": 0.0}], 2.0
    x, y, heading, speed = 0.0, 0.0, 0.0, 0.0
    dt = 0.1
    while t < seconds - 2.0:
        phase = int((t - 2.0) // 10.0) % 2
        target = 1.2 if phase == 0 else 2.8
        speed += max(-0.2, min(0.2, target - speed))
        heading += (0.35 if phase == 0 else 0.05) * dt
        x += math.sin(heading) * speed * dt
        y -= math.cos(heading) * speed * dt
        t += dt
        pts.append({"t": round(t, 3), "x": x, "y": y})
    pts.append({"t": seconds, "x": x, "y": y})
    with open(path, "w") as fh:
        json.dump({"points": pts}, fh)


ROW = re.compile(r"^(60 s path, 60 fps|showcase 14\.5 s, 60 fps)\s+\d+\s")


def bench_once(repo, repeat):
    """{path label: (frames, median seconds, median processor seconds or None)} printed by this bench run in checkout ``repo``."""
    out = subprocess.run([sys.executable, "-m", "bench.bench_bake", "--repeat", str(repeat)], cwd=repo,
                         capture_output=True, text=True, timeout=1800)
    found = {}
    for line in out.stdout.splitlines():
        m = ROW.match(line)
        if m:
            nums = line[len(m.group(1)):].split()
            # frames, seconds, ..., and the processor time when the bench prints it (9 numbers).
            found[m.group(1)] = (int(nums[0]), float(nums[1]), float(nums[8]) if len(nums) > 8 else None)
    if not found:
        sys.exit("The bench in %s printed no figures:\n%s%s" % (repo, out.stdout[-2000:], out.stderr[-2000:]))
    return found


def compare(other, rounds, repeat):
    """Run the bench in ``other`` and here by turns; print both medians and the ratio."""
    here = addon_session.REPO
    times, cpu, frames = {"other": {}, "here": {}}, {"other": {}, "here": {}}, {}
    for r in range(rounds):
        for key, repo in (("other", other), ("here", here)):
            for label, (n, sec, c) in bench_once(repo, repeat).items():
                times[key].setdefault(label, []).append(sec)
                if c is not None:
                    cpu[key].setdefault(label, []).append(c)
                frames[label] = n
            print("round %d/%d: %s done" % (r + 1, rounds, key), flush=True)
    print("%d rounds by turns, each the median of %d bakes; other = %s" % (rounds, repeat, other))
    print("%-26s %10s %10s %8s %14s %12s" % ("path", "other s", "here s", "ratio", "x realtime", "cpu s"))
    for label in times["here"]:
        a, b = statistics.median(times["other"][label]), statistics.median(times["here"][label])
        seconds = (frames[label] - 1) / 60.0
        c = " / ".join("%.3f" % statistics.median(cpu[k][label]) if label in cpu[k] else "-" for k in cpu)
        print("%-26s %10.3f %10.3f %7.2fx %6.1f -> %-5.1f %12s" % (label, a, b, a / b, seconds / a, seconds / b, c))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mirror-takes", type=str.upper, choices=("AUTO", "ON", "OFF"), default=None,
                    help="the database's Mirror Takes (default: the add-on's default)")
    ap.add_argument("--compare-to", metavar="DIR", help="another checkout to measure by turns with this one")
    ap.add_argument("--rounds", type=int, default=3, help="with --compare-to: runs of each checkout")
    args = ap.parse_args()
    if args.compare_to:
        return compare(os.path.abspath(args.compare_to), args.rounds, args.repeat)
    addon_session.start()
    import bpy

    scene = bpy.context.scene
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    bpy.ops.motion_matching.import_bvh(filepath=SAMPLE, global_scale=0.01, add_virtual_root=True)
    obj = bpy.context.active_object
    bpy.ops.motion_matching.database_add_action()
    kw = {} if args.mirror_takes is None else {"mirror_takes": args.mirror_takes}
    t = time.perf_counter()
    bpy.ops.motion_matching.build_database(**kw)
    build_s = time.perf_counter() - t
    from tools import path_measure

    store = path_measure.addon("bridge.database.store")
    size = len(store.raw_bytes(scene))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "long.json")
        long_path(path)
        for label, kw in (("60 s path, 60 fps", dict(scenario="FILE", filepath=path)),
                          ("showcase 14.5 s, 60 fps", dict(scenario="showcase"))):
            bpy.ops.motion_matching.add_scenario_controller(update_scene_range=True, **kw)
            scene.motion_matching.controller = bpy.context.active_object
            scene.motion_matching.bake_armature = obj
            times, cpu, report = [], [], None
            for i in range(args.repeat):
                rp = os.path.join(tmp, "r%d.json" % i)
                t, c = time.perf_counter(), time.process_time()
                bpy.ops.motion_matching.bake(report_path=rp)
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
                with open(rp) as fh:
                    report = json.load(fh)
            med = statistics.median(times)
            seconds = (report["frames"] - 1) / report["fps"]
            rows.append((label, report["frames"], med, seconds / med, report, statistics.median(cpu)))
    print("Blender %s; database: %s, built in %.2f s, %.1f MB stored (Mirror Takes %s)"
          % (bpy.app.version_string, scene.motion_matching.database_summary, build_s, size / 1e6,
             scene.motion_matching.mirror_takes))
    print("median of %d bakes; operator time (simulation, keys, report)" % args.repeat)
    print("%-26s %7s %9s %10s %8s %6s %6s %9s %9s %7s" % ("path", "frames", "seconds", "x realtime", "searches",
                                                           "jumps", "locks", "toe slide", "raw", "cpu s"))
    for label, frames, med, rt, r, cpu in rows:
        print("%-26s %7d %9.3f %10.1f %8d %6d %6d %9.2f %9.2f %7.3f" % (
            label, frames, med, rt, r["searches"], r["jumps"], r["foot_locks"],
            r["foot_sliding_cm_per_foot_per_moving_s"], r["raw_foot_sliding_cm_per_foot_per_moving_s"], cpu))
    addon_session.finish()   # disable, remove the throw-away user folder


if __name__ == "__main__":
    main()
