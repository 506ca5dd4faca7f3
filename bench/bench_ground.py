"""The bake on uneven ground against the same path's flat bake: rolling hills
(slopes up to 14.7 degrees) and a flight of stairs (16 cm risers, 30 cm treads),
made with bpy (tools/ground_scenes.py), measured with Blender's ray casts.

Run: .venv-5.3/bin/python -m bench.bench_ground [--out DIR]

The sample take (its database built with the defaults) baked along the built-in
Straight Walk at 30 fps, first on the flat floor, then on each ground. Prints
per ground: the deepest foot point (ankles, toe heads, toe tips) under the
surface beneath it, the planted toes' and ankles' median height over it, the
hips' median height over it, the planted toes' sliding (ground travel while the
data says contact, per planted second), each against the flat bake; and writes
a side-view picture per ground (green: ground under the path; black: hips;
blue: planted ankles, toes, tips; grey: swinging; red: toe tips) into ``--out``
(default: the system's temporary folder).
"""

import argparse
import os
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_ground")

import numpy as np  # noqa: E402

from tools import addon_session  # noqa: E402

FPS = 30


def scene():
    """The sample take, its database and a Straight Walk controller; returns the armature."""
    import bpy

    from tools.rig_trial import SAMPLES, call

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = FPS, 1.0
    call(ops.import_bvh, filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01, add_virtual_root=True)
    take = bpy.context.active_object
    call(ops.database_add_action)
    call(ops.build_database)
    call(ops.add_scenario_controller, scenario="straight_walk", frame_start=1, update_scene_range=True)
    bpy.context.scene.motion_matching.controller = bpy.context.active_object
    bpy.context.scene.motion_matching.bake_armature = take
    return take


def profile(kind):
    from tools import ground_scenes as gs

    if kind == "stairs":
        return np.array(gs.stairs_profile())
    y = np.linspace(3.0, -12.0, 600)
    return np.column_stack([y, gs.hills_height(0.0, y)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=tempfile.gettempdir(), help="folder for the side-view pictures")
    args = ap.parse_args()
    addon_session.start()
    import bpy

    from tools import ground_scenes as gs
    from tools import path_measure

    t0 = time.perf_counter()
    rows = []
    try:
        take = scene()
        assert bpy.ops.motion_matching.bake() == {"FINISHED"}
        flat = gs.measure(take, None, path_measure)
        rows.append(("flat", flat, None))
        for kind, make in (("hills", gs.make_hills), ("stairs", gs.make_stairs)):
            ground = make()
            bpy.context.scene.motion_matching.ground = ground
            t = time.perf_counter()
            assert bpy.ops.motion_matching.bake() == {"FINISHED"}
            took = time.perf_counter() - t
            on = gs.measure(take, ground, path_measure)
            picture = gs.side_view(os.path.join(os.path.abspath(args.out), "ground_%s.png" % kind), on, profile(kind))
            rows.append((kind, on, (took, picture)))
            bpy.context.scene.motion_matching.ground = None
    finally:
        addon_session.disable()
    frames = bpy.context.scene.frame_end - bpy.context.scene.frame_start + 1
    print("Blender %s; the sample take along Straight Walk (%d frames at %d fps); flat bake, then each ground"
          % (bpy.app.version_string, frames, FPS))
    print("%-7s %9s %10s %11s %7s %9s %9s %6s" % ("ground", "under cm", "toe cm", "ankle cm", "hips m", "hips/flat",
                                                 "slide cm/s", "x flat"))
    for kind, m, extra in rows:
        print("%-7s %9.2f %10.2f %11.2f %7.3f %9.3f %9.2f %6.2f" % (
            kind, m["under_cm"], m["planted_toe_cm"], m["planted_ankle_cm"], m["hips_m"], m["hips_m"] / flat["hips_m"],
            m["slide_cm_s"], m["slide_cm_s"] / max(flat["slide_cm_s"], 1e-9)))
    for kind, _m, extra in rows:
        if extra:
            print("%s: bake %.1f s (ground sampling included); picture %s" % (kind, extra[0], extra[1]))
    print("under: the deepest foot point under the surface beneath it (flat: under height 0); toe/ankle: planted "
          "medians over the surface; hips: median height over it; slide: planted toes' ground travel per planted "
          "second (%.0f s in all)" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
