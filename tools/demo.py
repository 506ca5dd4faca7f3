"""The end-to-end demo on the shipped sample take.

    .venv-5.0/bin/python -m tools.demo --out out/demo      # from the repository root

Imports the sample take with its virtual root, tags it from the shipped dance
card, builds the database, lays the built-in 'showcase' path, maps the Rigify
human meta-rig and bakes straight onto it (retargeted), exports BVH and glTF,
prints the report, and renders pictures with Workbench: a contact sheet PNG of
the character along the path (path and footprints drawn) and a short MP4.
Everything goes to --out.
"""

import argparse
import json
import os
import sys
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m tools.demo")

from tools import addon_session  # noqa: E402
from tools.mannequin import add_mannequin  # noqa: E402
from tools.mm_cli import Failure, call  # noqa: E402

REPO = addon_session.REPO
SAMPLES = os.path.join(REPO, "samples")


def parse(argv):
    ap = argparse.ArgumentParser(prog="demo", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/demo", help="output folder (default out/demo)")
    ap.add_argument("--fps", type=float, default=24.0)
    ap.add_argument("--tiles", type=int, default=8, help="frames on the contact sheet")
    ap.add_argument("--no-video", action="store_true", help="skip the MP4")
    ap.add_argument("--video-frames", type=int, default=0, help="only the first N frames in the MP4 (0: all)")
    return ap.parse_args(argv)


def build_scene(args):
    import bpy

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = int(round(args.fps))
    scene.render.fps_base = scene.render.fps / args.fps
    call(ops.import_dance_card, filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml"))
    call(ops.import_bvh, filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01, add_virtual_root=True)
    source = bpy.context.active_object
    call(ops.load_tpose, filepath=os.path.join(SAMPLES, "jl_mm_tpose.bvh"), global_scale=0.01)
    call(ops.auto_tag)
    call(ops.database_add_action)
    call(ops.build_database)
    call(ops.database_report, filepath=os.path.join(args.out, "coverage.json"))
    call(ops.add_scenario_controller, scenario="showcase", frame_start=1, update_scene_range=True)
    controller = bpy.context.active_object
    scene.motion_matching.controller = controller
    target = retarget_target(source)
    scene.motion_matching.bake_armature = target
    bpy.context.view_layer.objects.active = target
    return source, controller, target


def retarget_target(source):
    """The Rigify meta-rig, mapped and put in T-pose, chosen as the Retarget
    panel's target with the take as its source."""
    import addon_utils
    import bpy

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.active_object
    rig.name = "Character"
    rig.location.x = 0.0
    choices = bpy.context.scene.motion_matching.retarget
    choices.source, choices.target = source, rig
    call(bpy.ops.motion_matching.auto_map_bones)
    call(bpy.ops.motion_matching.make_tpose)
    return rig


def render_pictures(args, target, controller, report):
    import bpy
    import numpy as np


    scene = bpy.context.scene
    fs, fe = scene.frame_start, scene.frame_end
    # The character's body, the floor, the path and the footprints.
    add_mannequin(target, skip=(target.data.motion_matching.root_bone,))
    path = _path(controller)
    lo, hi = path[:, :2].min(axis=0) - 1.5, path[:, :2].max(axis=0) + 1.5
    _floor(lo, hi)
    _polyline("Path", path + [0, 0, 0.01], 0.02, (0.15, 0.45, 0.95, 1.0))
    for i, p in enumerate(_footprints(target, report)):
        _disc("Footprint%03d" % i, p, 0.05, (0.9, 0.15, 0.15, 1.0))
    _camera(lo, hi)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.render.resolution_x, scene.render.resolution_y = 640, 360
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    if scene.world is None:
        scene.world = bpy.data.worlds.new("World")
    scene.world.color = (0.25, 0.27, 0.3)
    # Contact sheet: evenly spaced frames in a grid.
    frames = np.linspace(fs, fe, args.tiles).round().astype(int)
    tiles = []
    tmp = os.path.join(args.out, "frames")
    os.makedirs(tmp, exist_ok=True)
    scene.render.image_settings.file_format = "PNG"
    _stamp(scene, True)
    for f in frames:
        scene.frame_set(int(f))
        scene.render.filepath = os.path.join(tmp, "frame_%04d.png" % f)
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(scene.render.filepath)
        px = np.empty(img.size[0] * img.size[1] * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
        tiles.append(px.reshape(img.size[1], img.size[0], 4))
        bpy.data.images.remove(img)
    cols = 4
    rows = -(-len(tiles) // cols)
    h, w = tiles[0].shape[:2]
    sheet = np.ones((rows * h, cols * w, 4), dtype=np.float32)
    for i, t in enumerate(tiles):
        r, c = divmod(i, cols)
        # Image rows run bottom-up in Blender; fill the sheet top-down.
        sheet[(rows - 1 - r) * h:(rows - r) * h, c * w:(c + 1) * w] = t
    out = bpy.data.images.new("contact_sheet", cols * w, rows * h, alpha=True)
    out.pixels.foreach_set(sheet.ravel())
    out.filepath_raw = os.path.join(args.out, "contact_sheet.png")
    out.file_format = "PNG"
    out.save()
    written = [out.filepath_raw]
    if not args.no_video:
        scene.render.resolution_x, scene.render.resolution_y = 480, 270
        use_mp4(scene)
        scene.render.filepath = os.path.join(args.out, "demo_")
        end = scene.frame_end
        if args.video_frames:
            scene.frame_end = min(end, scene.frame_start + args.video_frames - 1)
        try:
            bpy.ops.render.render(animation=True)
        finally:
            scene.frame_end = end
        written += [os.path.join(args.out, f) for f in os.listdir(args.out) if f.endswith(".mp4")]
    return written


def use_mp4(scene):
    """Render the scene's animation to an H.264 MP4 (Blender's FFmpeg output)."""
    settings = scene.render.image_settings
    if hasattr(settings, "media_type"):   # Blender 5.0 sorts formats into image and video
        settings.media_type = "VIDEO"
    settings.file_format = "FFMPEG"
    scene.render.ffmpeg.format = "MPEG4"
    scene.render.ffmpeg.codec = "H264"


def _path(controller):
    import bpy
    import numpy as np

    bridge = __import__(addon_session.MODULE + ".motion_matching_addon.controller_build", fromlist=["sample_controller"])
    scene = bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    pos, _f = bridge.sample_controller(bpy.context, controller, frames)
    return pos


def _footprints(target, report):
    """Toe positions on the frames a foot lock engages (where the feet are planted)."""
    import bpy
    import numpy as np

    scene = bpy.context.scene
    locks = np.asarray(report.get("lock_frames", []))
    if not len(locks):
        return []
    toes = report["toe_bones"]
    out = []
    for frame, side in locks:
        scene.frame_set(int(frame))
        out.append(np.array(target.matrix_world @ target.pose.bones[toes[int(side)]].head))
    return out


def _material_object(name, mesh, color):
    import bpy

    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.color = color
    return obj


def _floor(lo, hi):
    import bpy

    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(lo[0], lo[1], 0), (hi[0], lo[1], 0), (hi[0], hi[1], 0), (lo[0], hi[1], 0)], [], [(0, 1, 2, 3)])
    _material_object("Floor", mesh, (0.55, 0.55, 0.55, 1.0))


def _polyline(name, pts, radius, color):
    import bpy

    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = radius
    spline = curve.splines.new("POLY")
    spline.points.add(len(pts) - 1)
    spline.points.foreach_set("co", [c for p in pts for c in (p[0], p[1], p[2], 1.0)])
    _material_object(name, curve, color)


def _disc(name, p, radius, color):
    import math

    import bpy

    n = 12
    verts = [(p[0] + radius * math.cos(2 * math.pi * k / n), p[1] + radius * math.sin(2 * math.pi * k / n), 0.005)
             for k in range(n)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], [tuple(range(n))])
    _material_object(name, mesh, color)


def _camera(lo, hi):
    """An orthographic camera from the side (+X) and above, the path's length
    (along Y) across the picture."""
    import bpy
    from mathutils import Vector

    centre = Vector(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0.6))
    cam_data = bpy.data.cameras.new("Camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = max(hi[1] - lo[1], (hi[0] - lo[0] + 2.0) * 16 / 9)
    cam = bpy.data.objects.new("Camera", cam_data)
    bpy.context.scene.collection.objects.link(cam)
    direction = Vector((1.0, 0.0, 0.9)).normalized()
    cam.location = centre + direction * 30.0
    cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    bpy.context.scene.camera = cam


def _stamp(scene, on):
    """Burn the frame number into each rendered picture."""
    r = scene.render
    r.use_stamp = on
    for key in ("date", "time", "render_time", "camera", "lens", "scene", "filename", "memory", "marker",
                "frame_range", "hostname", "sequencer_strip", "note"):
        if hasattr(r, "use_stamp_" + key):
            setattr(r, "use_stamp_" + key, False)
    r.use_stamp_frame = True
    r.stamp_font_size = 18


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    try:
        addon_session.start()
        import bpy

        source, controller, target = build_scene(args)
        report_path = os.path.join(args.out, "report.json")
        call(bpy.ops.motion_matching.bake, report_path=report_path)
        with open(report_path) as fh:
            report = json.load(fh)
        bridge = __import__(addon_session.MODULE + ".motion_matching_addon.bake_bridge", fromlist=["report_text"])
        exports = []
        for fmt, ext in (("BVH", "bvh"), ("GLTF", "glb")):
            path = os.path.join(args.out, "baked.%s" % ext)
            call(bpy.ops.motion_matching.export_baked, filepath=path, format=fmt, armature=target.name)
            exports.append(path)
        report["lock_frames"] = _lock_frames(target)
        report["toe_bones"] = _toe_bones(bpy.context.scene, target)
        pictures = render_pictures(args, target, controller, report)
        bpy.ops.wm.save_as_mainfile(filepath=os.path.join(args.out, "demo.blend"))
        print(bridge.report_text(report))
        print("coverage: %s" % os.path.join(args.out, "coverage.json"))
        for path in exports + pictures + [report_path, os.path.join(args.out, "demo.blend")]:
            print("wrote %s" % path)
        print("demo done in %.0f s" % (time.perf_counter() - t0))
    except Failure as ex:
        print("demo: %s" % ex, file=sys.stderr)
        return 1
    finally:
        # Disable the add-on, remove the throw-away user folder and Blender's
        # session folder (the process ends with os._exit, skipping Blender's own clean-up).
        addon_session.finish(blender_temp=True)
    return 0


def _lock_frames(target):
    """(frame, side) of each frame a lock starts, from the keyed mm_lock_* figures."""
    import bpy
    import numpy as np

    compat = __import__(addon_session.MODULE + ".motion_matching_addon.compat", fromlist=["fcurves"])
    out = []
    for fc in compat.fcurves(target.animation_data.action, target):
        for side, key in enumerate(('["mm_lock_left"]', '["mm_lock_right"]')):
            if fc.data_path == key:
                co = compat.read_curve(fc)["co"]
                on = co[:, 1] > 0.5
                starts = np.flatnonzero(on & ~np.concatenate([[False], on[:-1]]))
                out += [(int(co[i, 0]), side) for i in starts]
    return sorted(out)


def _toe_bones(scene, target):
    """The target's toe bones: its retarget mapping, else the database's feature bones."""
    mapped = {item.name: item.bone for item in target.data.motion_matching.bone_map if item.bone}
    if mapped.get("LeftToes") and mapped.get("RightToes"):
        return [mapped["LeftToes"], mapped["RightToes"]]
    store = __import__(addon_session.MODULE + ".motion_matching_addon.database_store", fromlist=["load"])
    _db, arrays = store.load(scene)
    bones = json.loads(str(arrays["feature_bones_json"]))
    return [bones["left_toe"], bones["right_toe"]]


if __name__ == "__main__":
    code = main()
    # Blender 4.2's bpy module crashes while Python shuts down once its glTF
    # exporter has run; everything is written and the add-on disabled by now,
    # so end the process here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
