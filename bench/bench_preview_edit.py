"""Live preview: time from an edit to the updated pose at the current frame.

Run: .venv-4.2/bin/python -m bench.bench_preview_edit [--repeat 3] [--rows showcase 60s character]
The scene is bench_bake's (sample take, 60 fps, default settings); paths: the
showcase (14.5 s) and the 60 s bench path, both keyed scenario controllers,
previewed on the database skeleton, and the showcase previewed on the demo's
character (tools.rigs' "Hero" through Blender's glTF importer, retargeted and
its feet planted again as Bake does it). An
edit moves the controller's keys 0.3 m sideways over the path's last second
("end") or its first second ("start"); the clock runs from the edit through one
frame change (the preview's check) and the timer's slices (called here the way
Blender calls them between events) until the new pose is shown. Also printed:
the longest single timer call (how long the UI is blocked at a time) and what a
frame change costs the preview when nothing changed (the check alone).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_preview_edit")

from bench.bench_bake import SAMPLE, long_path  # noqa: E402
from tools import addon_session, rig_file, rigs  # noqa: E402

ROWS = ("showcase", "60s", "character")


def shift_keys(ctrl, compat, frame_from, frame_to, dy):
    """Move the controller's location keys on frames frame_from..frame_to by ``dy`` m in Y."""
    import numpy as np

    for fc in compat.fcurves(ctrl.animation_data.action, ctrl):
        if fc.data_path == "location" and fc.array_index == 1:
            co = compat.read_curve(fc, ("co",))["co"]
            inside = (co[:, 0] >= frame_from) & (co[:, 0] <= frame_to)
            co[inside, 1] += dy
            fc.keyframe_points.foreach_set("co", co.astype(np.float32).ravel())
            fc.update()


def finish_pending(follow):
    """follow.finish_pending, timing each timer call: (longest on the wall
    clock, longest in the main thread's processor time: what the UI itself
    spends, without the time the system gives other processes)."""
    longest = longest_cpu = 0.0
    while True:
        t0, c0 = time.perf_counter(), time.thread_time()
        again = follow.tick()
        longest, longest_cpu = max(longest, time.perf_counter() - t0), max(longest_cpu, time.thread_time() - c0)
        if again is None:
            return longest, longest_cpu
        time.sleep(again)


def edit_to_pose(scene, follow, edit):
    """Seconds from ``edit()`` to the new pose shown (wall clock, and the
    process's processor time, all threads), and the longest timer call (wall
    clock, main thread's processor time)."""
    t0, c0 = time.perf_counter(), time.process_time()
    edit()
    scene.frame_set(scene.frame_current)       # the frame change that notices the edit
    longest = finish_pending(follow)
    return time.perf_counter() - t0, time.process_time() - c0, longest


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS), help="which paths to time")
    args = ap.parse_args()
    addon_session.start()
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    bpy.ops.motion_matching.import_bvh(filepath=SAMPLE, global_scale=0.01, add_virtual_root=True)
    obj = bpy.context.active_object
    bpy.ops.motion_matching.database_add_action()
    bpy.ops.motion_matching.build_database()
    from tools import path_measure

    follow = path_measure.addon("bridge.preview.follow")
    compat = path_measure.addon("bridge.blender.compat")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "long.json")
        long_path(path)
        cases = {"showcase": ("showcase 14.5 s", dict(scenario="showcase"), obj),
                 "60s": ("60 s path", dict(scenario="FILE", filepath=path), obj)}
        if "character" in args.rows:
            hero = rigs.import_gltf(rig_file.write("glb", tmp, "Hero"))[0]
            cases["character"] = ("showcase on Hero", dict(scenario="showcase"), hero)
        for label, kw, armature in (cases[r] for r in ROWS if r in args.rows):
            bpy.ops.motion_matching.add_scenario_controller(update_scene_range=True, **kw)
            ctrl = bpy.context.active_object
            scene.motion_matching.controller = ctrl
            scene.motion_matching.bake_armature = armature
            t = time.perf_counter()
            bpy.ops.motion_matching.toggle_preview()
            start_s = time.perf_counter() - t
            fs, fe = scene.frame_start, scene.frame_end
            scene.frame_set((fs + fe) // 2)
            checks = []
            for _ in range(20):
                t = time.perf_counter()
                scene.frame_set(scene.frame_current + 1)
                checks.append(time.perf_counter() - t)
            for where, (a, b) in (("end", (fe - 60, fe)), ("start", (fs, fs + 60))):
                times, cpu, longest = [], [], []
                for i in range(args.repeat):
                    dy = 0.3 if i % 2 == 0 else -0.3
                    s, c, worst = edit_to_pose(scene, follow, lambda: shift_keys(ctrl, compat, a, b, dy))
                    times.append(s)
                    cpu.append(c)
                    longest.append(worst)
                rows.append((label, where, fe - fs + 1, start_s, statistics.median(checks),
                             statistics.median(times), statistics.median(cpu), max(w for w, _ in longest),
                             max(c for _, c in longest)))
            bpy.ops.motion_matching.toggle_preview()
    print("Blender %s; database: %s" % (bpy.app.version_string, scene.motion_matching.database_summary))
    print("median of %d edits; seconds" % args.repeat)
    print("%-16s %6s %7s %14s %16s %15s %18s %14s %18s" % ("path", "edit", "frames", "start preview",
                                                            "frame change", "edit to pose", "(processor time)",
                                                            "longest call", "(processor time)"))
    for label, where, frames, start_s, check, med, cpu, worst, worst_cpu in rows:
        print("%-16s %6s %7d %14.3f %16.4f %15.3f %18.3f %14.3f %18.3f" % (label, where, frames, start_s, check, med,
                                                                          cpu, worst, worst_cpu))
    addon_session.finish()


if __name__ == "__main__":
    main()
