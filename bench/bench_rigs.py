"""Retarget and bake onto Mixamo-style characters in the setups real files come
in, measured in world space.

Run: .venv-4.5/bin/python -m bench.bench_rigs [--setup NAME ...] [--json FILE]

For each setup of tools/rigs.py (the character as built: bones Y-up in
centimetres, object turned +90 degrees about X and scaled 0.01; the same with
its transforms applied; after Blender's glTF export and import with each
bone-direction option; after FBX export and import with automatic bone
orientation on and off, leaf bones kept or dropped, joints written with Y or
X along the bone; the A-pose character with Make T-Pose), in a fresh scene with the sample take and its database:
Auto-Map, retarget of the whole take, bake of the built-in showcase. Prints
per setup: joints mapped (of 22), the limbs' mean angle from the source's
beyond what the rest poses differ, the mesh's lowest point after the
retarget, the hips' travel against the controller's path, the hips-to-
controller distance, the mesh's lowest point during the bake and its soles
while standing, the bake report's tracking figure next to the measured one,
and how far the world heads of the same character with its transforms
applied are from those without (after retarget and after bake).
"""

import argparse
import json
import os
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_rigs")

from tools import addon_session  # noqa: E402

CASES = [(name, "T") for name in (
    "built", "glTF default", "glTF TEMPERANCE", "glTF FORTUNE", "FBX", "FBX auto-orient", "FBX no leaves",
    "FBX auto-orient, no leaves", "FBX X-axis bones", "FBX X-axis bones, auto-orient")] + [("built", "A")]
FPS = 24


def _max_diff_mm(a, names_a, b, names_b):
    common = [n for n in names_a if n in names_b]
    return 1000 * float(abs(a[:, [names_a.index(n) for n in common]]
                            - b[:, [names_b.index(n) for n in common]]).max())


def run_case(setup, pose, folder):
    """Two rows: the character of ``setup`` as imported, and the same with its
    transforms applied (Ctrl-A); the first also holds how far apart their
    world heads are after the retarget and after the bake."""
    import bpy

    from tools import rig_trial, rigs

    label = setup + (" (A-pose)" if pose == "A" else "")
    rows = [{"setup": label, "error": ""}, {"setup": label + " + applied", "error": ""}]
    take, controller = rig_trial.sample_scene(FPS)
    pairs = [rigs.make(setup, folder, "Character", pose), rigs.make(setup, folder, "Applied", pose)]
    rigs.apply_object_transforms(*pairs[1])
    heads = {}
    for row, (rig, mesh) in zip(rows, pairs):
        try:
            row["mapped"] = rig_trial.auto_map(rig)
            if pose == "A":
                bpy.context.view_layer.objects.active = rig
                rig_trial.call(bpy.ops.motion_matching.make_tpose)
            rig_trial.retarget(take, rig)
            fig, h, names = rig_trial.retarget_figures(take, rig, mesh)
            heads[rig.name, "retarget"] = (h, names)
            row.update({"retarget_" + k: v for k, v in fig.items()})
            report = rig_trial.bake(rig, folder)
            fig, h, names = rig_trial.bake_figures(rig, mesh, controller, report, FPS)
            heads[rig.name, "bake"] = (h, names)
            row.update({"bake_" + k: v for k, v in fig.items()})
        except rig_trial.Failed as ex:
            row["error"] = str(ex)
    for stage in ("retarget", "bake"):
        if ("Character", stage) in heads and ("Applied", stage) in heads:
            rows[0]["applied_%s_mm" % stage] = _max_diff_mm(*heads["Character", stage], *heads["Applied", stage])
    return rows


def _f(v, fmt, scale=1.0):
    return "-" if v is None else fmt % (v * scale)


def print_table(rows):
    head = ("setup", "map", "angle+", "ret.low", "travel", "hips-ctrl", "bake.low", "soles",
            "track rep/meas", "applied")
    units = ("", "of 22", "deg", "cm", "%", "mean/max cm", "cm", "cm", "max cm", "ret/bake mm")
    widths = (42, 6, 7, 8, 7, 12, 9, 7, 15, 16)
    fmt = " ".join("%%-%ds" % w for w in widths)
    print(fmt % head)
    print(fmt % units)
    for r in rows:
        g = r.get
        cells = (
            r["setup"], _f(g("mapped"), "%d"), _f(g("retarget_angle_excess_deg"), "%.1f"),
            _f(g("retarget_lowest_m"), "%.1f", 100), _f(g("bake_percent"), "%.1f"),
            "%s/%s" % (_f(g("bake_distance_mean_m"), "%.1f", 100), _f(g("bake_distance_max_m"), "%.1f", 100)),
            _f(g("bake_lowest_m"), "%.1f", 100), _f(g("bake_soles_m"), "%.1f", 100),
            "%s/%s" % (_f(g("bake_report_tracking_max_m"), "%.1f", 100), _f(g("bake_distance_max_m"), "%.1f", 100)),
            "%s/%s" % (_f(g("applied_retarget_mm"), "%.2g"), _f(g("applied_bake_mm"), "%.2g")),
        )
        print(fmt % cells + ("  ERROR: " + r["error"] if r["error"] else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setup", action="append", help="only these setups (names as printed; repeatable)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    addon_session.start()
    import bpy

    folder = tempfile.mkdtemp(prefix="mm_bench_rigs_")
    rows = []
    t0 = time.perf_counter()
    try:
        for setup, pose in CASES:
            label = setup + (" (A-pose)" if pose == "A" else "")
            if args.setup and label not in args.setup:
                continue
            rows += run_case(setup, pose, folder)
            print("done: %s (%.0f s)" % (label, time.perf_counter() - t0), file=sys.stderr)
    finally:
        addon_session.disable()
    scene = bpy.context.scene
    print("Blender %s; the sample take (5562 frames) retargeted, the showcase (%d frames at %d fps) baked; "
          "measured in world space" % (bpy.app.version_string, scene.frame_end - scene.frame_start + 1, FPS))
    print_table(rows)
    print("angle+: limbs' mean angle from the source beyond the rest poses' difference; ret.low/bake.low: the "
          "mesh's lowest point after retarget (40 frames) / during the bake; travel: hips path / controller "
          "path; soles: lowest point while standing; applied: max world-head difference from the same rig "
          "with transforms applied")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)   # Blender 4.2's bpy module may crash at exit after the glTF exporter ran
