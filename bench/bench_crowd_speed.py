"""Crowd throughput: many characters on many different paths baked in one
process by Bake All, against the same bakes one after another by the Bake
operator, measured by turns in one run, each side in a fresh Blender process.

Run: .venv-5.3/bin/python -m bench.bench_crowd_speed [--count 100] [--seconds 60] [--fps 60] [--rounds 1]

The scene: the sample take at ``--fps`` with its virtual root and its database
(the defaults); ``--count`` linked copies of its armature, and as many
controllers, each on its own timed path of ``--seconds`` (walks and runs round
curves of different radii, speeds and starting headings, made from the
character's number, the same on every run). Printed per side: the median
wall time, character-seconds baked per second, peak resident memory of the
process and its rise during the bakes; then the ratio, and the time per
character spent writing keys into Blender and in forward kinematics' products
(work over the frames that a crowd cannot share). Both sides must give
every character the same keys (a digest per character); the bench stops with
an error if they do not.
"""

import argparse
import hashlib
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_crowd_speed")

from tools import addon_session, path_measure  # noqa: E402


def path_points(index, seconds):
    """Timed waypoints of character ``index``: a short stand, then walks and runs
    alternating in phases of 6-12 s, turning at 0.05-0.4 rad/s."""
    rnd = random.Random(index)
    x, y = rnd.uniform(-20.0, 20.0), rnd.uniform(-20.0, 20.0)
    heading, speed, t, dt = rnd.uniform(-math.pi, math.pi), 0.0, 1.0, 0.1
    pts = [{"t": 0.0, "x": x, "y": y}, {"t": 1.0, "x": x, "y": y}]
    target, turn, phase_end = 0.0, 0.0, 1.0
    while t < seconds - 1e-9:
        if t >= phase_end:
            target = rnd.choice((1.1, 1.4, 2.5, 3.0))
            turn = rnd.uniform(0.05, 0.4) * rnd.choice((-1.0, 1.0))
            phase_end = t + rnd.uniform(6.0, 12.0)
        speed += max(-0.2, min(0.2, target - speed))
        heading += turn * dt
        x += math.sin(heading) * speed * dt
        y -= math.cos(heading) * speed * dt
        t = min(seconds, t + dt)
        pts.append({"t": round(t, 3), "x": x, "y": y})
    return pts


def _setup(count, seconds, fps, folder):
    """The scene: take, database, ``count`` (controller, character) pairs."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    sample = os.path.join(addon_session.REPO, "samples", "jl_mm_run.bvh")
    bpy.ops.motion_matching.import_bvh(filepath=sample, global_scale=0.01, add_virtual_root=True)
    take = bpy.context.active_object
    bpy.ops.motion_matching.database_add_action()
    bpy.ops.motion_matching.build_database()
    crowd = path_measure.addon("bridge.bake.crowd")
    pairs = []
    for i in range(count):
        path = os.path.join(folder, "path%03d.json" % i)
        with open(path, "w") as fh:
            json.dump({"points": path_points(i, seconds)}, fh)
        bpy.ops.motion_matching.add_scenario_controller(scenario="FILE", filepath=path, frame_start=1,
                                                        update_scene_range=(i == 0))
        ctrl = bpy.context.active_object
        ctrl.name = "Ctrl%03d" % i
        pairs.append((ctrl, crowd.copy_character(take, scene.collection, "Walker%03d" % i)))
    scene.motion_matching.controller = pairs[0][0]     # the Bake operator's poll asks for one
    return pairs


def _digest(armature):
    """One digest of every key of the armature's action (curves in path order)."""
    compat = path_measure.addon("bridge.blender.compat")
    h = hashlib.sha256()
    curves = sorted(compat.fcurves(armature.animation_data.action, armature), key=lambda f: (f.data_path, f.array_index))
    for fc in curves:
        h.update(("%s[%d]" % (fc.data_path, fc.array_index)).encode())
        keys = compat.read_curve(fc, ("co", "handle_left", "handle_right"))
        for k in ("co", "handle_left", "handle_right"):
            h.update(keys[k].tobytes())
    return h.hexdigest()[:16]


def _timed(module, name):
    """Wrap ``module.name`` to add the seconds spent in it to the returned list's one item."""
    spent, fn = [0.0], getattr(module, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t
    setattr(module, name, timed)
    return spent


def child(mode, count, seconds, fps):
    """Set the scene up, bake it one way, print one JSON line of figures."""
    addon_session.start()
    import bpy

    folder = tempfile.mkdtemp(prefix="mm_crowd_speed_")
    pairs = _setup(count, seconds, fps, folder)
    scene = bpy.context.scene
    keying = _timed(path_measure.addon("bridge.blender.compat"), "write_curves")
    chains = _timed(path_measure.addon("core.maths.transforms"), "pose_fk_chain")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), time.process_time()
    if mode == "single":
        for ctrl, arm in pairs:
            bpy.ops.motion_matching.bake(controller=ctrl.name, armature=arm.name)
    else:
        for ctrl, arm in pairs:
            item = scene.motion_matching.crowd.add()
            item.controller, item.armature = ctrl, arm
        scene.motion_matching.crowd_processes = 1    # one process (bench_crowd_processes: on every processor)
        bpy.ops.motion_matching.bake_all()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    frames = scene.frame_end - scene.frame_start
    out = {"mode": mode, "wall": wall, "cpu": cpu, "peak_mb": peak / 1024.0, "rise_mb": (peak - before) / 1024.0,
           "character_seconds": len(pairs) * frames / fps, "keying": keying[0], "fk": chains[0], "digests": [_digest(arm) for _c, arm in pairs]}
    print("RESULT " + json.dumps(out), flush=True)
    addon_session.finish(blender_temp=True)
    sys.stdout.flush()
    os._exit(0)


def _run(mode, args):
    proc = subprocess.run([sys.executable, "-m", "bench.bench_crowd_speed", "--child", mode, "--count", str(args.count),
                           "--seconds", str(args.seconds), "--fps", str(args.fps)],
                          cwd=addon_session.REPO, capture_output=True, text=True, timeout=7200)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    sys.exit("The %s run printed no figures:\n%s%s" % (mode, proc.stdout[-3000:], proc.stderr[-3000:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=100, help="characters (each on its own path)")
    ap.add_argument("--seconds", type=float, default=60.0, help="seconds of path per character")
    ap.add_argument("--fps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--child", choices=("single", "crowd"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.count, args.seconds, args.fps)
    runs = {"single": [], "crowd": []}
    for r in range(args.rounds):
        for mode in runs:
            runs[mode].append(_run(mode, args))
            print("round %d/%d: %s %.1f s" % (r + 1, args.rounds, mode, runs[mode][-1]["wall"]), flush=True)
    digests = {tuple(run["digests"]) for side in runs.values() for run in side}
    if len(digests) != 1:
        sys.exit("The keys differ between the runs: a character baked alone and in the crowd must get the same keys.")
    print("%d characters, %.0f s of path each at %d fps; median of %d run(s) per side, by turns; every character's "
          "keys identical on both sides" % (args.count, args.seconds, args.fps, args.rounds))
    print("%-34s %9s %9s %11s %9s %9s" % ("side", "wall s", "cpu s", "char-s / s", "peak MB", "rise MB"))
    tput = {}
    for mode, label in (("single", "%d single bakes, one after another" % args.count),
                        ("crowd", "Bake All, %d pairs in one process" % args.count)):
        side = runs[mode]
        wall = statistics.median(r["wall"] for r in side)
        tput[mode] = side[0]["character_seconds"] / wall
        print("%-34s %9.1f %9.1f %11.1f %9.0f %9.0f" % (label, wall, statistics.median(r["cpu"] for r in side),
                                                      tput[mode], max(r["peak_mb"] for r in side),
                                                      max(r["rise_mb"] for r in side)))
    print("crowd throughput / single bakes: %.2fx (goal 10x)" % (tput["crowd"] / tput["single"]))
    # Writing each character's keys into Blender is paid per character however the
    # rest is done: the crowd can be no faster than that alone.
    # Two parts are paid per character however the rest is arranged: writing its keys
    # into Blender, and array work over its frames such as forward kinematics'
    # products (already whole-array operations: batching characters adds rows, not speed).
    keying = statistics.median(r["keying"] for r in runs["crowd"]) / args.count
    fk = statistics.median(r["fk"] for r in runs["crowd"]) / args.count
    single = statistics.median(r["wall"] for r in runs["single"]) / args.count
    print("per character, of a %.3f s single bake: keying (Blender's F-Curves) %.3f s, forward kinematics' "
          "products %.3f s; a crowd that did only these would reach %.1fx" % (single, keying, fk, single / (keying + fk)))


if __name__ == "__main__":
    main()
