"""A crowd on one curve, baked in Blender: 50 characters of three rigs (the
Mixamo-style character as Blender's glTF and FBX importers give it, and Rigify's
human meta-rig) spread in lanes from one 60 m curve by Add Crowd and baked by
Bake All. Prints the time, the closest two characters' hips on any frame, and
each rig's contact-aware sliding against the take's own; renders a top view of
every path with its footprints.

Run: .venv-4.5/bin/python -m bench.bench_crowd [--count 50] [--lanes 5] [--out out/crowd]

Sliding here: the target rig's world ankles on the frames both ends of a step
are keyed in contact (``mm_contact_*``), low (within 3 cm of the rig's own
planted height) and slower than 1 m/s, in cm per foot per moving second,
against the same figure of the take (the report's raw contact sliding).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_crowd")

from tools import addon_session, path_measure, rig_trial, rigs, scene_curves  # noqa: E402

CURVE = ((0.0, 0.0, 0.0), (15.0, 0.0, 0.0), (25.0, 8.0, 0.0), (30.0, 22.0, 0.0), (42.0, 30.0, 0.0), (55.0, 30.0, 0.0))


def _curve():
    return scene_curves.bezier_curve("CrowdPath", CURVE)


def _rigs(folder):
    """The three characters, mapped (and the meta-rig given its T-pose)."""
    import addon_utils
    import bpy

    out = []
    for setup, name in (("glTF default", "GltfRig"), ("FBX", "FbxRig")):
        rig, _mesh = rigs.make(setup, folder, name)
        rig_trial.auto_map(rig)
        out.append(rig)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.active_object
    meta.name = "MetaRig"
    rig_trial.auto_map(meta)
    rig_trial.call(bpy.ops.motion_matching.make_tpose)
    out.append(meta)
    return out


def _contact_flags(armature, frames):
    compat = path_measure.addon("bridge.blender.compat")
    out = {}
    for fc in compat.fcurves(armature.animation_data.action, armature):
        for side, key in enumerate(('["mm_contact_left"]', '["mm_contact_right"]')):
            if fc.data_path == key:
                co = compat.read_curve(fc, ("co",))["co"]
                out[side] = np.interp(frames, co[:, 0], co[:, 1]) > 0.5
    return np.stack([out[0], out[1]], axis=1)


def _measure(pairs, reports, fps):
    import bpy

    pm = path_measure.addon("core.measure.path_metrics")
    scene = bpy.context.scene
    facts, rows = [], []
    for (ctrl, arm), (_name, report) in zip(pairs, reports):
        f = addon_session.addon_module("cli.top_view").gather(arm, ctrl, scene)
        contacts = _contact_flags(arm, f["frames"])
        floor = pm.contact_height(f["ankles"][..., 2], contacts)
        slide = pm.ankle_sliding(f["ankles"], f["hips"], fps, floor, contacts=contacts)
        raw = report.raw_contact_sliding_cm_per_foot_per_moving_s
        rows.append((arm.name, arm.data.name, slide["cm_per_foot_per_moving_s"], raw, report.jumps,
                     report.tracking_error_max_m))
        facts.append(f)
    hips = np.stack([f["hips"][:, :2] for f in facts], axis=1)          # (F, N, 2)
    d = np.linalg.norm(hips[:, :, None] - hips[:, None], axis=-1)
    n = hips.shape[1]
    d[:, range(n), range(n)] = np.inf
    frame, a, b = np.unravel_index(np.argmin(d), d.shape)
    return facts, rows, (float(d.min()), int(facts[0]["frames"][frame]), pairs[a][1].name, pairs[b][1].name)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--lanes", type=int, default=5)
    ap.add_argument("--out", default="out/crowd")
    args = ap.parse_args()
    addon_session.start()
    import bpy

    folder = tempfile.mkdtemp(prefix="mm_crowd_")
    try:
        take, _ctrl = rig_trial.sample_scene(fps=24)
        characters = _rigs(folder)
        curve = _curve()
        for o in bpy.context.view_layer.objects:
            o.select_set(o in characters)
        curve.select_set(True)
        bpy.context.view_layer.objects.active = curve
        rig_trial.call(bpy.ops.motion_matching.add_crowd, count=args.count, lanes=args.lanes)
        scene = bpy.context.scene
        crowd = path_measure.addon("bridge.bake.crowd")
        pairs = crowd.pairs_to_bake(scene)
        settings = path_measure.addon("bridge.blender.bake_settings").to_core(scene.motion_matching.bake_settings)
        results = []
        t = time.perf_counter()
        path_measure.addon("core.bake.pipeline").run_to_end(crowd.bake_pairs(bpy.context, pairs, settings, results))
        seconds = time.perf_counter() - t
        fps = scene.render.fps / scene.render.fps_base
        facts, rows, closest = _measure(pairs, results, fps)
        os.makedirs(args.out, exist_ok=True)
        picture = os.path.join(args.out, "crowd_top_view.png")
        addon_session.addon_module("cli.top_view").render_many(picture, facts, size=(1200, 900))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    animated = (scene.frame_end - scene.frame_start) / fps
    print("Blender %s: %d characters in %d lanes, %.1f s of animation each, baked in %.1f s (%.1f character-s/s)"
          % (bpy.app.version_string, len(pairs), args.lanes, animated, seconds, len(pairs) * animated / seconds))
    print("closest hips: %.2f m (frame %d, %s and %s)" % closest)
    print("%-28s %-16s %10s %8s %6s %6s %9s" % ("character", "rig", "sliding", "take", "ratio", "jumps", "track max"))
    for name, rig, ours, raw, jumps, track in rows:
        print("%-28s %-16s %10.2f %8.2f %6.2f %6d %7.1f cm" % (name[:28], rig[:16], ours, raw, ours / raw, jumps,
                                                              100 * track))
    worst = max(rows, key=lambda r: r[2] / r[3])
    print("worst sliding ratio: %.2f (%s); top view: %s" % (worst[2] / worst[3], worst[0], picture))
    addon_session.finish(blender_temp=True)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
