"""Retarget speed: the whole sample take (5562 frames) onto Rigify's human meta-rig.

Run: .venv-4.5/bin/python -m bench.bench_retarget [--repeat 5]
Prints the median of ``--repeat`` runs of the operator (read the take, solve,
write the new action) and of the array-level core.retarget.frames.retarget_frames
alone (what the bake calls per frame batch).
"""

import argparse
import os
import statistics
import sys
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_retarget")

from tools import addon_session  # noqa: E402

SAMPLES = os.path.join(addon_session.REPO, "samples")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    addon_session.start()
    import bpy
    import importlib

    bpy.ops.preferences.addon_enable(module="rigify")
    try:
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.motion_matching.import_bvh(filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01,
                                           add_virtual_root=True)
        source = bpy.context.active_object
        bpy.ops.motion_matching.load_tpose(filepath=os.path.join(SAMPLES, "jl_mm_tpose.bvh"), global_scale=0.01)
        bpy.ops.object.armature_human_metarig_add()
        rig = bpy.context.active_object
        bpy.ops.motion_matching.auto_map_bones()
        bpy.ops.motion_matching.make_tpose()
        source.select_set(True)
        rig.select_set(True)
        bpy.context.view_layer.objects.active = rig

        times = []
        for _ in range(args.repeat + 1):            # the first run warms up and is not counted
            t = time.perf_counter()
            result = bpy.ops.motion_matching.retarget()
            times.append(time.perf_counter() - t)
            assert result == {"FINISHED"}
            action = rig.animation_data.action
            keys = sum(len(fc.keyframe_points) for fc in
                       importlib.import_module(addon_session.MODULE + ".bridge.blender.compat")
                       .fcurves(action, rig))
            rig.animation_data.action = None
            bpy.data.actions.remove(action)
        op_median = statistics.median(times[1:])

        # The array-level function alone, on the same data.
        bridge = importlib.import_module(addon_session.MODULE + ".bridge.retarget.retarget")
        retarget_plan = importlib.import_module(addon_session.MODULE + ".bridge.retarget.plan")
        rt_frames = importlib.import_module(addon_session.MODULE + ".core.retarget.frames")
        tf = importlib.import_module(addon_session.MODULE + ".core.maths.transforms")
        setup = retarget_plan.plan_for(bpy.context, source, rig)
        plan = setup.plan
        _action, frames, _names, pose = bridge.source_motion(source)
        rotations = tf.matrix_to_quat(pose[..., :3, :3])
        hips = pose[:, plan.source_hips, :3, 3]
        core_times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            rt_frames.retarget_frames(plan, rotations, hips)
            core_times.append(time.perf_counter() - t)
        core_median = statistics.median(core_times)

        print("Blender %s, sample take %d frames onto the Rigify human meta-rig (%d bones, %d keyed), "
              "median of %d runs" % (bpy.app.version_string, len(frames), len(rig.data.bones),
                                     len(plan.keyed), args.repeat))
        print("%-46s %10s" % ("step", "seconds"))
        print("%-46s %10.3f  (%d keys written, %.1f us per frame)"
              % ("motion_matching.retarget (read, solve, write)", op_median, keys, 1e6 * op_median / len(frames)))
        print("%-46s %10.3f  (%.1f us per frame)"
              % ("core.retarget.frames.retarget_frames alone", core_median, 1e6 * core_median / len(frames)))
        print("runs: %s" % ", ".join("%.3f" % x for x in times[1:]))
    finally:
        bpy.ops.preferences.addon_disable(module="rigify")
        addon_session.finish()   # disable, remove the throw-away user folder


if __name__ == "__main__":
    main()
