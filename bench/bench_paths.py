"""The path suite: bake every path of samples/paths (and the built-in showcase)
on the sample take and measure the result from the baked keys.

Run from the repository root (tools/ and core/ are imported as packages):

    .venv-4.5/bin/python -m bench.bench_paths [--fps 24 30 60] [--paths figure8 zigzag ...]
                                             [--walk-query walk] [--json out/paths.json] [--no-before]

Set-up as a user would: the sample take imported with scale 0.01 and a virtual
root, tags suggested from the shipped dance card, the database built, a
controller from each scenario file (``motion_matching.add_scenario_controller``)
and ``motion_matching.bake`` with its defaults (``use_strafe`` on where the file
asks for a facing). The walking-only rows bake the walk paths again with the
tag query ``walk`` (the dance card's walking).

Every figure is measured from the keys (tools/path_measure, core/path_metrics):
world positions by the add-on's forward kinematics, checked against Blender's
pose after ``frame_set`` on a few frames of every bake. The raw take is
measured the same way at the same frame rate (its action evaluated on
fractional frames). Beside them, the bake report's own figures and the
difference. One bake per row and variant (bakes are deterministic); the
real-time factor is the report's, so it moves with the machine's load.

Every row is baked twice: "before", with the core settings of :data:`BEFORE`
(the last round's behaviour turned off: the greedy bake without warping), baked
through bridge.bake.bake_job as the operator bakes, and "after", with
``motion_matching.bake``'s defaults; both tables are printed, then the "Done
when" checks of every row (bench/done_when.py).
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m bench.bench_paths")

from bench import done_when  # noqa: E402
from tools import addon_session  # noqa: E402

SAMPLES = os.path.join(addon_session.REPO, "samples")
SUITE_DIR = os.path.join(SAMPLES, "paths")
SUITE = ("showcase", "figure8", "zigzag", "walk_stand_walk", "slow_circle", "run_reversal", "strafe")
WALK_PATHS = ("walk_stand_walk", "slow_circle", "figure8")
CHECK_FRAMES = 4          # frames per bake compared with frame_set

# The bake before the last round: core settings (flat names of core.bake.settings,
# most of them core-only, not operator options) that turn its behaviour off.
BEFORE = {
    "lock_on_contact": False,      # feet planted from the data
    "lock_on_touchdown": False,    # a toe already down just before the data's contact locks then
    "unlock_distance": 0.2,        # its default before
    "planted_adjustment": 1.0,     # no change of the pull while a foot is planted
    "strafe_warp": 0.0,            # orientation warping of the strafe
    "strict_tag_query": True,      # a tag query offers only rows whose whole future it selects
    "use_stride_warp": False,      # steps scaled along travel by the leg IK
    "release_in_joints": False,    # a released foot blends back by a toe offset
    "toe_floor_rate": 0.0,         # a dipping toe lifted by its whole depth at once
    "knee_min_bend": 0.0,          # leg IK may straighten a knee fully
    "strafe_warp_rate": 0.0,       # no limit on the strafe warp's turn (it was off anyway)
    "look_ahead": 0.0,             # greedy search
    "time_warp": 0.0,              # rows played at the data's own speed
    "turn_like_data": False,       # corrections may turn the root faster than the data's fastest turn
    "stride_warp_rate": 0.0,       # no limit on the stride warp's change (it was off anyway)
}
# ... and the database as it was built before the last round (options of motion_matching.build_database).
BEFORE_BUILD = {
    "mirror_takes": "OFF",         # no mirror images of the takes
}
CHECK_TOLERANCE = 1e-4    # m


def scenario_of(name):
    from core.paths import scenario as sc, scenario_builtins

    if name in scenario_builtins.BUILTINS:
        return scenario_builtins.builtin(name), None
    path = os.path.join(SUITE_DIR, name + ".json")
    return sc.load_scenario(path), path


def setup(walk_query, mirror_takes=None):
    """Import, tag, build (``mirror_takes``: None for the add-on's default);
    returns (armature, raw action, database, seconds of rows the walking query
    leaves searchable: by default, and strict)."""
    import bpy

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    ops.import_dance_card(filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml"))
    ops.import_bvh(filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01, add_virtual_root=True)
    obj = bpy.context.active_object
    ops.auto_tag()
    ops.database_add_action()
    ops.build_database(**({} if mirror_takes is None else {"mirror_takes": mirror_takes}))
    from tools import path_measure

    database = path_measure.addon("bridge.database.store").load(bpy.context.scene)
    db = database.matching
    search = path_measure.addon("core.database.selection")
    settings = path_measure.addon("bridge.blender.bake_settings").to_core(
        bpy.context.scene.motion_matching.bake_settings)
    walk_s = [float(search.bake_rows(database, walk_query, settings)[k].sum() / db.clip_fps[0]) for k in (0, 1)]
    walk_s.append(float(search.allowed_rows(database, walk_query, strict=True).sum() / db.clip_fps[0]))
    return obj, obj.animation_data.action, db, walk_s


def check_settings(settings):
    """Refuse core settings the bake does not have (a setting renamed or gone)."""
    from tools import path_measure

    known = path_measure.addon("core.bake.settings").flat_names()
    unknown = sorted(set(settings) - set(known))
    if unknown:
        sys.exit("BEFORE names settings core.bake.settings does not have: %s" % ", ".join(unknown))


def raw_motion(obj, action, db, fps):
    """The raw take sampled ``fps`` times a second (fractional frames of its own
    rate), with the contacts of its clip in the database (the action's own clip
    when the database holds several)."""
    import numpy as np

    from tools import path_measure

    clip = db.clip_names.index(action.name) if action.name in db.clip_names else 0
    lo, hi = int(db.clip_offsets[clip]), int(db.clip_offsets[clip + 1]) - 1
    take_fps = float(db.clip_fps[clip])
    first, last = (float(v) for v in action.frame_range)
    step = take_fps / fps
    frames = first + np.arange(int(math.floor((last - first) / step + 1e-9)) + 1) * step
    rows = np.clip(lo + np.rint(frames - first).astype(np.int64), lo, hi)
    contacts = db.contacts[rows] if db.contacts is not None else None
    return path_measure.read_motion(obj, action, frames, fps, contacts=contacts)


def bake_path(obj, raw_action, name, fps, tag_query, raw, floor, tmp, variant="after", options=None):
    """Bake one path at one rate on the scene's database: with ``options`` (core
    settings over the scene's) through bridge.bake.bake_job, or with none by the
    operator, as a user bakes; returns the measured row."""
    import bpy
    import numpy as np

    from core.skeleton import mirror
    from core.paths import scenario as sc
    from tools import path_measure

    scene = bpy.context.scene
    ops = bpy.ops.motion_matching
    scene.render.fps, scene.render.fps_base = int(fps), 1.0
    scenario, path = scenario_of(name)
    before = set(bpy.data.objects.keys())
    if path:
        ops.add_scenario_controller(scenario="FILE", filepath=path, frame_start=1, update_scene_range=True)
    else:
        ops.add_scenario_controller(scenario=name, frame_start=1, update_scene_range=True)
    ctrl = [bpy.data.objects[n] for n in bpy.data.objects.keys() if n not in before][0]
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = obj
    report_path = os.path.join(tmp, "report.json")
    t0 = time.perf_counter()
    options = dict(options or {})
    if options:
        settings = path_measure.addon("bridge.blender.bake_settings").to_core(scene.motion_matching.bake_settings).replaced(
            use_strafe=scenario.has_facing, **options)
        path_measure.addon("bridge.bake.bake_job").bake(bpy.context, settings, report_path=report_path,
                                                   controller=ctrl.name, armature=obj.name, tag_query=tag_query)
    elif ops.bake(controller=ctrl.name, armature=obj.name, use_strafe=scenario.has_facing, tag_query=tag_query,
                  report_path=report_path) != {"FINISHED"}:
        raise RuntimeError("bake of %s did not finish" % name)
    wall = time.perf_counter() - t0
    with open(report_path) as fh:
        report = json.load(fh)
    action = obj.animation_data.action
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    bake = path_measure.read_motion(obj, action, frames, fps,
                                    contacts=path_measure.baked_contacts(obj, action, frames))
    picks = np.unique(np.linspace(0, len(frames) - 1, CHECK_FRAMES).astype(int))
    check = path_measure.bulk_vs_frame_set(scene, obj, bake, picks)
    times = (frames - 1.0) / fps
    target, asked = sc.sample(scenario, times)
    # With Mirror Takes each joint also plays its counterpart's motion: the raw
    # rotation steps it is held to are both sides'.
    mirrored = scene.motion_matching.mirror_takes != "OFF" and not scene.motion_matching.database_note
    pairs = mirror.pair_bones(bake.names, path_measure.addon("bridge.blender.armature_data")
                              .bone_order(obj.data)[1]) if mirrored else None
    row = path_measure.measure(bake, raw, floor, path=target, asked_facing=asked, raw_pairs=pairs)
    row.update(path=name, query=tag_query or "", report=report, operator_s=wall, frame_set_check_m=check,
               variant=variant, options=options, mirror_takes=mirrored,
               clamp_m=options.get("clamp_distance", scene.motion_matching.bake_settings.clamp_distance))
    row["glides_warned"] = done_when.warned_glides(row["glides"], report.get("warnings", []))
    # Leave the scene as it was: the take plays its own action again.
    path_measure.addon("bridge.blender.compat").assign_action(obj, raw_action)
    bpy.data.actions.remove(action)
    ctrl_action = ctrl.animation_data.action if ctrl.animation_data else None
    bpy.data.objects.remove(ctrl)
    if ctrl_action is not None and ctrl_action.users == 0:
        bpy.data.actions.remove(ctrl_action)
    return row


COLUMNS = (
    ("path", 16), ("db", 7), ("fps", 3), ("slide", 6), ("raw", 5), ("ratio", 5), ("c ratio", 7), ("rep", 6),
    ("rep r", 5),
    ("seed m", 6), ("face trv", 8), ("face ask", 8), ("ask hips", 8), ("hips mean/max", 13), ("rep max", 7),
    ("glides", 12), ("warned", 6), ("rot x", 5), ("toe cm", 6), ("rt x", 5),
)


def _db(row):
    return (row["query"] or "all")[:7]


def _f(v, fmt):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


def table(rows):
    """The table as text lines (see README, 'Path suite')."""
    lines = ["  ".join("%-*s" % (w, h) for h, w in COLUMNS)]
    for r in rows:
        rep = r["report"]
        track = r["tracking"]
        cells = (
            r["path"], _db(r), "%d" % r["fps"],
            _f(r["sliding"]["cm_per_foot_per_moving_s"], "%.1f"), _f(r["raw_sliding"]["cm_per_foot_per_moving_s"], "%.1f"),
            _f(r["sliding_ratio"], "%.2f"), _f(r.get("sliding_contact_ratio"), "%.2f"),
            _f(rep.get("contact_sliding_cm_per_foot_per_moving_s"), "%.1f"),
            _f(rep.get("contact_sliding_ratio"), "%.2f"),
            _f(r["seed"]["m_per_seconds"], "%.2f"),
            _f(r["facing_travel"]["mean_deg"], "%.1f"),
            _f(r["facing_asked"]["mean_deg"] if r["facing_asked"] else None, "%.1f"),
            _f(r["hips_facing_asked"]["mean_deg"] if r.get("hips_facing_asked") else None, "%.1f"),
            "%.1f/%.1f" % (100 * track["mean_m"], 100 * track["max_m"]),
            "%.1f" % (100 * rep.get("hips_tracking_max_m", rep["tracking_error_max_m"])),
            "%d/%d/%.1f" % (len(r["glides"]), r["glide_frames"], r["glide_longest_m"]),
            "%d/%d" % (r["glides_warned"], len(r["glides"])),
            _f(r["rotation"]["ratio"], "%.2f"), "%+.1f" % (100 * r["toe_margin_m"]),
            "%.0f" % rep["real_time_factor"],
        )
        lines.append("  ".join("%-*s" % (w, c) for (h, w), c in zip(COLUMNS, cells)))
    return lines


LEGEND = """\
slide / raw / ratio: planted ankle sliding, cm per foot per moving second (ankle under the take's planted
  height + 3 cm and slower than 1 m/s; moving: hips over 0.2 m/s), bake / raw take at the same fps / ratio
c ratio: the same ratio counting only steps where the played data also says contact (bake: keyed mm_contact_*)
rep, rep r: the bake report's planted sliding (contact-aware, as c ratio) and its ratio to the raw take
seed m: ankles under 13 cm, both feet, metres per 14.5 s (the seed write-up's 3.72 m)
face trv: mean degrees between the body (hip joints) and the travel direction (hips over 0.5 s) where hips > 0.5 m/s
  (the raw take scores %.1f: it walks backwards and sideways in places; its median is %.1f)
face ask: mean degrees from the asked facing (strafe), upper body (upper-arm heads), as the report measures it;
  ask hips: the same for the hip joints: with the strafe warp the legs turn toward travel on purpose
hips mean/max: hips to the path, cm; rep max: the report's hips tracking maximum, cm
glides: frozen glides (hips > 0.5 m/s and for > 0.5 s no foot becomes planted or stops being planted):
  count/frames/metres the hips travel in the longest. Either a frozen pose or feet that never plant because
  they skate faster than 1 m/s; neither adds to the sliding columns, so read those with this one. A short
  glide (about 0.6 s, under 1 m) is a stance held too long for the speed; warned: how many of them lie in
  frames the report's warnings name (feet that do not step, most searches jump)
rot x: largest per-frame joint rotation change / the raw take's 99.9th percentile (worst joint)
toe cm: lowest toe minus the raw take's lowest toe; rt x: the report's real-time factor"""


def agreement(rows):
    """The report's figures (core/bake_quality) against the bench's measurement of the keys."""
    out = ["report / measured: contact sliding cm/foot/s, its ratio, seed m/14.5 s, facing deg, hips max cm",
           "%-16s %-7s %3s  %-13s %-11s %-11s %-11s %-11s" % ("path", "db", "fps", "c sliding", "c ratio", "seed",
                                                              "facing", "hips max")]
    for r in rows:
        rep = r["report"]
        if "contact_sliding_ratio" not in rep:
            continue
        face = r["facing_asked"]["mean_deg"] if r["facing_asked"] else r["facing_travel"]["mean_deg"]
        rface = rep["facing_error_asked_mean_deg"] if r["facing_asked"] else rep["facing_error_travel_mean_deg"]
        out.append("%-16s %-7s %3d  %-13s %-11s %-11s %-11s %-11s" % (
            r["path"], _db(r), r["fps"],
            "%.2f / %.2f" % (rep["contact_sliding_cm_per_foot_per_moving_s"],
                             r["sliding_contact"]["cm_per_foot_per_moving_s"]),
            "%.2f / %.2f" % (rep["contact_sliding_ratio"], r["sliding_contact_ratio"]),
            "%.2f / %.2f" % (rep["seed_ankle_sliding_m_per_14_5_s"], r["seed"]["m_per_seconds"]),
            "%.1f / %.1f" % (rface, face),
            "%.1f / %.1f" % (100 * rep["hips_tracking_max_m"], 100 * r["tracking"]["max_m"])))
    return out


def comparison(rows):
    """Where the report and the measurement disagree."""
    out = ["report vs measured (same bake): report / measured (difference)",
           "%-16s %-7s %3s  %-22s %-12s %-20s %-11s %-9s %-9s %s" % (
               "path", "db", "fps", "ankle cm/foot/s", "ratio", "tracking max cm", "mean cm", "toe ratio",
               "srch/jump", "worst rotation")]
    for r in rows:
        rep = r["report"]
        rr = rep["raw_ankle_sliding_cm_per_foot_per_moving_s"]
        rep_ratio = rep["ankle_sliding_cm_per_foot_per_moving_s"] / rr if rr else float("nan")
        toe_ratio = rep["foot_sliding_cm_per_foot_per_moving_s"] / rep["raw_foot_sliding_cm_per_foot_per_moving_s"]
        rot = r["rotation"]
        out.append("%-16s %-7s %3d  %-22s %-12s %-20s %-11s %-9s %-9s %s" % (
            r["path"], _db(r), r["fps"],
            "%.1f / %.1f (%+.1f)" % (rep["ankle_sliding_cm_per_foot_per_moving_s"],
                                     r["sliding"]["cm_per_foot_per_moving_s"],
                                     rep["ankle_sliding_cm_per_foot_per_moving_s"] - r["sliding"]["cm_per_foot_per_moving_s"]),
            "%.2f / %.2f" % (rep_ratio, r["sliding_ratio"]),
            "%.1f / %.1f (%+.1f)" % (100 * rep["tracking_error_max_m"], 100 * r["tracking"]["max_m"],
                                     100 * (rep["tracking_error_max_m"] - r["tracking"]["max_m"])),
            "%.1f / %.1f" % (100 * rep["tracking_error_mean_m"], 100 * r["tracking"]["mean_m"]),
            "%.2f" % toe_ratio, "%d/%d" % (rep["searches"], rep["jumps"]),
            "%s %.1f deg at %d (raw %.1f)" % (rot["joint"], rot["max_deg"], rot["frame"], rot["raw_deg"])))
    return out


def checks_table(rows):
    """The Done-when checks, PASS/FAIL per row and check, and per variant
    how many rows pass each."""
    head = "%-16s %-7s %3s %-6s " % ("path", "db", "fps", "bake") + " ".join(
        "%-*s" % (max(4, len(c)), c) for c in done_when.CHECKS)
    out = ["Done-when checks per row", head]
    passed = {}
    for r in rows:
        c = done_when.checks(r)
        out.append("%-16s %-7s %3d %-6s " % (r["path"], _db(r), r["fps"], r["variant"]) + " ".join(
            "%-*s" % (max(4, len(k)), done_when.mark(c[k])) for k in done_when.CHECKS))
        for k, v in c.items():
            if v is not None:
                tally = passed.setdefault(r["variant"], {}).setdefault(k, [0, 0])
                tally[0] += int(v)
                tally[1] += 1
    for variant, tally in passed.items():
        out.append("%s: rows passing: %s" % (variant, ", ".join(
            "%s %d/%d" % (k, tally[k][0], tally[k][1]) for k in done_when.CHECKS if k in tally)))
    return out


def run_bakes(args, obj, raw_action, db, floor, raw60, tmp):
    """Bake every job at every rate, before and after; the measured rows."""
    rows = []
    import bpy

    after_build = {} if args.mirror_takes is None else {"mirror_takes": args.mirror_takes}
    variants = ([("before", BEFORE, BEFORE_BUILD)] if args.before else []) + [("after", {}, after_build)]
    built = None
    for fps in args.fps:
        raw = raw60 if fps == int(db.clip_fps[0]) else raw_motion(obj, raw_action, db, fps)
        jobs = [(p, "") for p in args.paths]
        if args.walk_query:
            jobs += [(p, args.walk_query) for p in WALK_PATHS if p in args.paths]
        for variant, options, build in variants:
            if built != variant:    # each variant bakes on its own database (BEFORE_BUILD: as it was built)
                bpy.context.scene.motion_matching.property_unset("mirror_takes")
                if bpy.ops.motion_matching.build_database(**build) != {"FINISHED"}:
                    raise RuntimeError("the database of the %s bakes did not build" % variant)
                built = variant
            for name, query in jobs:
                row = bake_path(obj, raw_action, name, fps, query, raw, floor, tmp, variant, options)
                rows.append(row)
                print("baked %-16s %-5s %2d fps %-6s: sliding %.2fx" % (
                    name, query or "all", fps, variant, row["sliding_ratio"]), flush=True)
    return rows


def print_results(args, rows, floor, raw60, walk_s, worst_check):
    import bpy

    from core.measure import path_metrics as pm

    raw_facing = pm.travel_facing_error(pm.body_facing(raw60.hip_joints[:, 0], raw60.hip_joints[:, 1]),
                                        raw60.hips, raw60.fps)
    print()
    print("Blender %s; sample take: planted ankle height %.1f cm (the report's %.1f cm); walking rows: tag query %r: "
          "%.1f s searchable of %.1f s playable (strict rule: %.1f s)" % (
              bpy.app.version_string, 100 * floor, 100 * rows[0]["report"]["planted_ankle_height_m"],
              args.walk_query, *walk_s))
    print("frozen glides in the raw take itself: %s" % ", ".join(
        "%d at %d fps" % (r["raw_glides"], r["fps"]) for r in rows
        if r["path"] == rows[0]["path"] and not r["query"] and r["variant"] == "after"))
    print("bulk positions vs frame_set: largest difference %.2g m over %d frames per bake (limit %g)"
          % (worst_check, CHECK_FRAMES, CHECK_TOLERANCE))
    after_db = "the add-on's default" if args.mirror_takes is None else "mirror_takes=%s" % args.mirror_takes
    for variant, what in (("before", "core settings %s; database %s" % (
                              ", ".join("%s=%s" % kv for kv in BEFORE.items()),
                              ", ".join("%s=%s" % kv for kv in BEFORE_BUILD.items()))),
                          ("after", "the bake's defaults; database %s" % after_db)):
        some = [r for r in rows if r["variant"] == variant]
        if some:
            print()
            print("%s: %s" % (variant.upper(), what))
            for line in table(some):
                print(line)
    print(LEGEND % (raw_facing["mean_deg"], raw_facing["median_deg"]))
    after = [r for r in rows if r["variant"] == "after"]
    print()
    for line in comparison(after):
        print(line)
    print()
    for line in agreement(after):
        print(line)
    print()
    for line in checks_table(rows):
        print(line)
    print(done_when.LEGEND)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fps", type=int, nargs="+", default=[24, 30, 60], help="scene rates (default 24 30 60)")
    ap.add_argument("--paths", nargs="+", default=list(SUITE), choices=SUITE, help="paths (default: all)")
    ap.add_argument("--walk-query", default="walk",
                    help="tag query of the walking-only database ('' skips those rows; default 'walk')")
    ap.add_argument("--no-before", dest="before", action="store_false",
                    help="bake only with the defaults (not also with the settings of BEFORE)")
    ap.add_argument("--mirror-takes", type=str.upper, choices=("AUTO", "ON", "OFF"), default=None,
                    help="the after bakes' database's Mirror Takes (default: the add-on's default; "
                         "the before bakes use BEFORE_BUILD)")
    ap.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    args = ap.parse_args()
    t_start = time.perf_counter()
    addon_session.start()
    import bpy

    from core.measure import path_metrics as pm

    check_settings(BEFORE)
    obj, raw_action, db, walk_s = setup(args.walk_query, args.mirror_takes)
    raw60 = raw_motion(obj, raw_action, db, float(db.clip_fps[0]))
    floor = pm.planted_height(raw60.ankles, raw60.toes, raw60.fps)
    with tempfile.TemporaryDirectory() as tmp:
        rows = run_bakes(args, obj, raw_action, db, floor, raw60, tmp)
    worst_check = max(r["frame_set_check_m"] for r in rows)
    print_results(args, rows, floor, raw60, walk_s, worst_check)
    print("bench time %.0f s" % (time.perf_counter() - t_start))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump({"blender": bpy.app.version_string, "planted_ankle_height_m": floor, "walk_query": args.walk_query,
                       "before": BEFORE, "before_build": BEFORE_BUILD,
                       "mirror_takes": args.mirror_takes, "rows": rows}, fh, indent=1, default=_plain)
    addon_session.disable()
    if worst_check > CHECK_TOLERANCE:
        sys.exit("bulk positions differ from frame_set by %.3g m" % worst_check)


def _plain(v):
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(type(v))


if __name__ == "__main__":
    main()
