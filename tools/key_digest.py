"""The keys of the path suite's bakes, as digests: one SHA-256 per row of every
baked F-Curve's keyframes, so two runs (two Blender versions, two machines, the
code before and after a change) can be compared key for key.

    .venv-4.5/bin/python -m tools.key_digest --out out/keys-4.5.json [--fps 24 30 60] [--keys out/keys-4.5.npz]
    .venv-5.3/bin/python -m tools.key_digest --compare out/keys-4.5.json out/keys-5.3.json

Each row is set up as a user would (the sample take imported at scale 0.01 with
its virtual root, tags from the shipped dance card, the database built with the
defaults), then one controller per path of ``samples/paths`` (and the built-in
showcase) is baked with ``motion_matching.bake``'s defaults at each frame rate;
the walking paths are baked again with the tag query ``walk``. ``--keys`` also
writes every key (for a diff when digests differ). Only operators and Blender's
own data are used, so the digests do not depend on the add-on's module layout.
"""

import argparse
import hashlib
import json
import os
import sys

if not __package__:
    sys.exit("Run from the repository root as: python -m tools.key_digest")

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")
SUITE = ("showcase", "figure8", "zigzag", "walk_stand_walk", "slow_circle", "run_reversal", "strafe")
WALK_PATHS = ("walk_stand_walk", "slow_circle", "figure8")


def action_fcurves(action):
    """Every F-Curve of ``action``: legacy list before 4.4, channelbags after."""
    fcurves = []
    layers = getattr(action, "layers", None)
    if layers:
        for layer in layers:
            for strip in layer.strips:
                for bag in strip.channelbags:
                    fcurves.extend(bag.fcurves)
        return fcurves
    return list(getattr(action, "fcurves", ()))


def action_keys(action):
    """{'data_path[index]': (N, 2) float32 keyframe co}, in bulk."""
    import numpy as np

    out = {}
    for fc in action_fcurves(action):
        co = np.zeros(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        out["%s[%d]" % (fc.data_path, fc.array_index)] = co.reshape(-1, 2)
    return out


def digest(keys):
    h = hashlib.sha256()
    for name in sorted(keys):
        h.update(name.encode("utf-8"))
        h.update(keys[name].astype("<f4").tobytes())
    return h.hexdigest()


def setup():
    import bpy

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    ops.import_dance_card(filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml"))
    ops.import_bvh(filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01, add_virtual_root=True)
    obj = bpy.context.active_object
    ops.auto_tag()
    ops.database_add_action()
    if ops.build_database() != {"FINISHED"}:
        raise RuntimeError("the database did not build")
    return obj


def bake_row(obj, name, fps, tag_query):
    """Bake one path at ``fps``; returns its keys and restores the take's action."""
    import bpy

    scene = bpy.context.scene
    ops = bpy.ops.motion_matching
    raw_action = obj.animation_data.action
    scene.render.fps, scene.render.fps_base = int(fps), 1.0
    before = set(bpy.data.objects.keys())
    path = os.path.join(SAMPLES, "paths", name + ".json")
    if os.path.isfile(path):
        ops.add_scenario_controller(scenario="FILE", filepath=path, frame_start=1, update_scene_range=True)
        with open(path) as fh:
            has_facing = any("facing" in w for w in json.load(fh).get("points", []))
    else:
        ops.add_scenario_controller(scenario=name, frame_start=1, update_scene_range=True)
        has_facing = False
    ctrl = [bpy.data.objects[n] for n in bpy.data.objects.keys() if n not in before][0]
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = obj
    result = ops.bake(controller=ctrl.name, armature=obj.name, use_strafe=has_facing, tag_query=tag_query)
    if result != {"FINISHED"}:
        raise RuntimeError("bake of %s at %s fps did not finish" % (name, fps))
    baked = obj.animation_data.action
    keys = action_keys(baked)
    obj.animation_data.action = raw_action
    bpy.data.actions.remove(baked)
    ctrl_action = ctrl.animation_data.action if ctrl.animation_data else None
    bpy.data.objects.remove(ctrl)
    if ctrl_action is not None and ctrl_action.users == 0:
        bpy.data.actions.remove(ctrl_action)
    return keys


def rows(fps_list):
    for fps in fps_list:
        for name in SUITE:
            yield name, fps, ""
        for name in WALK_PATHS:
            yield name, fps, "walk"


def run(fps_list, keys_path=None):
    import bpy
    import numpy as np

    obj = setup()
    out = {"blender": bpy.app.version_string, "numpy": np.__version__, "rows": {},
           "cpu_features_off": os.environ.get("NPY_DISABLE_CPU_FEATURES", ""),
           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "")}
    every = {}
    for name, fps, query in rows(fps_list):
        label = "%s/%s/%d" % (name, query or "all", fps)
        keys = bake_row(obj, name, fps, query)
        out["rows"][label] = digest(keys)
        if keys_path:
            for k, v in keys.items():
                every[label + "/" + k] = v
        print("%-28s %s" % (label, out["rows"][label][:16]), flush=True)
    if keys_path:
        np.savez_compressed(keys_path, **every)
    return out


def blend_digests(path):
    """Print a digest per action of a saved .blend (a demo's or the command line's output)."""
    from . import addon_session

    addon_session.prepare_user_dir()
    try:
        import bpy

        bpy.ops.wm.open_mainfile(filepath=path)
        for action in sorted(bpy.data.actions, key=lambda a: a.name):
            print("%-40s %s" % (action.name, digest(action_keys(action))))
    finally:
        addon_session.finish()
    return 0


def compare(paths):
    """0 when every file holds the same rows with the same digests."""
    runs = []
    for p in paths:
        with open(p) as fh:
            runs.append(json.load(fh))
    first = runs[0]
    bad = 0
    for p, r in zip(paths[1:], runs[1:]):
        for label in sorted(set(first["rows"]) | set(r["rows"])):
            a, b = first["rows"].get(label), r["rows"].get(label)
            if a != b:
                bad += 1
                print("differs: %s (%s %s vs %s %s)" % (label, paths[0], (a or "missing")[:12], p,
                                                        (b or "missing")[:12]))
    versions = ", ".join("Blender %s numpy %s%s%s" % (
        r["blender"], r["numpy"], " without AVX-512" if r.get("cpu_features_off") else "",
        (" OpenBLAS %s" % r["openblas_coretype"]) if r.get("openblas_coretype") else "") for r in runs)
    n = len(first["rows"])
    print("%d rows compared across %s: %s" % (n, versions, "identical" if not bad else "%d differ" % bad))
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", metavar="FILE", help="write the digests to this JSON file")
    ap.add_argument("--keys", metavar="FILE", help="also write every key to this .npz")
    ap.add_argument("--fps", type=float, nargs="+", default=[24, 30, 60])
    ap.add_argument("--compare", nargs="+", metavar="FILE", help="compare digest files; exit 1 if any differ")
    ap.add_argument("--blend", metavar="FILE", help="print one digest per action of this .blend instead")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(args.compare)
    if args.blend:
        return blend_digests(args.blend)
    if not args.out:
        ap.error("--out or --compare is needed")
    from . import addon_session

    addon_session.prepare_user_dir()
    try:
        addon_session.start()
        result = run(args.fps, args.keys)
    finally:
        addon_session.finish()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
