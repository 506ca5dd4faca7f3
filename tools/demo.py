"""The end-to-end demo on the shipped sample take.

    .venv-5.0/bin/python -m tools.demo --out out/demo      # from the repository root

Imports the sample take with its virtual root, tags it from the shipped dance
card, builds the database, lays the built-in 'showcase' path with moves along
the timeline (stand, run, stand, walk, stand: the tag query changing with
what the path asks), makes a
skinned Mixamo-named character the way Blender's glTF importer gives one
(tools/rigs.py), maps it and bakes straight onto it (retargeted), exports BVH
and glTF, prints the report, and renders pictures with Workbench: a top view of
the whole path (the add-on's cli/top_view.py), a contact sheet PNG and a short MP4 with a
camera following the character (checker floor, path and footprints drawn).
Everything goes to --out.
"""

import argparse
import json
import os
import sys
import time

if not __package__:
    sys.exit("Run from the repository root as: python -m tools.demo")

from tools import addon_session, rigs  # noqa: E402

REPO = addon_session.REPO


def call(op, **kw):
    """Run an operator as the bake command does (its error report is a Failure)."""
    return addon_session.addon_module("cli.bake").call(op, **kw)
SAMPLES = os.path.join(REPO, "samples")
# The moves along the showcase: (seconds from its start, tag query), each
# where the path starts to stand, run or walk (core/paths/scenario_builtins.py).
MOVES = ((0.0, "idle"), (1.0, "run"), (5.75, "idle"), (6.75, "walk"), (13.0, "idle"))


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
    moves = addon_session.addon_module("core.paths.moves")
    addon_session.addon_module("bridge.bake.moves").store_moves(
        controller, moves.moves_of_times([t for t, _ in MOVES], [q for _, q in MOVES], args.fps))
    target = retarget_target(source)
    scene.motion_matching.bake_armature = target
    bpy.context.view_layer.objects.active = target
    return source, controller, target


def retarget_target(source):
    """A skinned Mixamo-named character (tools/rigs.py) as Blender's glTF
    importer gives it with its defaults (Y-up centimetre bones, object turned
    +90 degrees about X and scaled 0.01), auto-mapped and chosen as the Retarget
    panel's target with the take as its source."""
    import shutil
    import tempfile

    import bpy

    folder = tempfile.mkdtemp(prefix="mm_demo_rig_")
    try:
        rig, mesh = rigs.make("glTF default", folder, "Character")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    choices = bpy.context.scene.motion_matching.retarget
    choices.source, choices.target = source, rig
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj == rig)
    bpy.context.view_layer.objects.active = rig
    call(bpy.ops.motion_matching.auto_map_bones)
    mesh.color = (0.85, 0.55, 0.3, 1.0)
    return rig


CAMERA_DISTANCE = 7.0        # m from the hips, perspective 50 mm: the body about half the frame height
CAMERA_DIRECTION = (0.75, -0.55, 0.35)   # from the hips toward the camera (front-right, a little above)


def follow_points(hips, fps, seconds=0.75):
    """Where the camera aims on each frame: the hips' world position with its
    side-to-side sway smoothed out (centred moving average), at a fixed height."""
    import numpy as np

    n = max(1, int(round(seconds * fps)) | 1)
    pad = np.pad(hips[:, :2], ((n // 2, n // 2), (0, 0)), mode="edge")
    kernel = np.ones(n) / n
    xy = np.stack([np.convolve(pad[:, k], kernel, mode="valid") for k in (0, 1)], axis=1)
    return np.column_stack([xy, np.full(len(xy), 0.85)])


def render_pictures(args, target, controller):
    """The top view, the contact sheet and (unless --no-video) the MP4;
    returns the files written."""
    import bpy
    import numpy as np

    scene = bpy.context.scene
    # The top view of the whole path (rendered in a scene of its own).
    top = os.path.join(args.out, "top_view.png")
    top_view = addon_session.addon_module("cli.top_view")
    facts = top_view.render_top_view(top, target, controller, scene=scene)
    print(top_view.summary(facts))
    # The floor (checker), the path and the footprints, in the character's scene.
    coll = scene.collection
    pts = np.concatenate([facts["path"][:, :2], facts["hips"][:, :2]])
    top_view.checker_floor(pts.min(axis=0) - 6.0, pts.max(axis=0) + 6.0, coll)
    path = facts["path"].copy()
    path[:, 2] = 0.01
    top_view.polyline("Path", path, 0.02, top_view.PATH_COLOR, coll)
    top_view.draw_plants(facts["plants"], coll, z=0.006)
    follow_camera(scene, facts)
    top_view.workbench(scene, (480, 270))
    scene.display.shading.light = "STUDIO"
    stamp = move_stamp(scene, controller)
    bpy.app.handlers.frame_change_pre.append(stamp)
    try:
        written = [top, contact_sheet(args, scene)]
        if not args.no_video:
            written += video(args, scene)
    finally:
        bpy.app.handlers.frame_change_pre.remove(stamp)
    return written


def move_stamp(scene, controller):
    """A frame-change handler that writes the move in force (its tag query)
    into the stamp's note, so every picture says what the bake searched."""
    moves = addon_session.addon_module("bridge.bake.moves").controller_moves(scene, controller)
    base = scene.motion_matching.tag_query

    def stamp(scene, *_):
        scene.render.stamp_note_text = "move: %s" % (moves.query_at(scene.frame_current, base) or "all")

    return stamp


def follow_camera(scene, facts):
    """A camera keyed on every frame at a fixed distance and direction from the
    smoothed hips (see :func:`follow_points`), made the scene's camera."""
    import bpy
    import numpy as np
    from mathutils import Vector

    fps = scene.render.fps / scene.render.fps_base
    aim = follow_points(facts["hips"], fps)
    direction = Vector(CAMERA_DIRECTION).normalized()
    cam_data = bpy.data.cameras.new("Camera")
    cam_data.lens = 50.0
    cam = bpy.data.objects.new("Camera", cam_data)
    scene.collection.objects.link(cam)
    cam.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    compat = __import__(addon_session.MODULE + ".bridge.blender.compat", fromlist=["write_channels"])
    action = compat.new_action(cam, "CameraFollow")
    compat.write_channels(action, cam, "location", facts["frames"], aim + np.array(direction) * CAMERA_DISTANCE)
    return cam


def contact_sheet(args, scene):
    """Evenly spaced frames rendered and laid out four a row; returns its path."""
    import bpy
    import numpy as np

    frames = np.linspace(scene.frame_start, scene.frame_end, args.tiles).round().astype(int)
    tiles = []
    tmp = os.path.join(args.out, "frames")
    os.makedirs(tmp, exist_ok=True)
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
    path = os.path.join(args.out, "contact_sheet.png")
    write_png(path, sheet[::-1, :, :3], levels=64)
    return path


def video(args, scene):
    """The MP4 (its first --video-frames frames if given); returns its path(s)."""
    import bpy

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
    return [os.path.join(args.out, f) for f in os.listdir(args.out) if f.endswith(".mp4")]


def write_png(path, rgb, levels=256):
    """An 8-bit RGB PNG of ``rgb`` (H, W, 3) floats in 0..1, rows top-down,
    with ``levels`` values a channel (64 keeps a Workbench render looking the
    same at half the file size); each pixel stored as its difference to the
    one on its left (PNG filter "sub"), which suits flat-shaded renders."""
    import struct
    import zlib

    import numpy as np

    step = 256 // levels
    img = (np.clip(rgb, 0.0, 1.0) * 255.0 + 0.5).astype(np.int16) // step * step + step // 2
    img = np.clip(img, 0, 255)
    h, w = img.shape[:2]
    left = np.zeros_like(img)
    left[:, 1:] = img[:, :-1]
    rows = ((img - left) % 256).astype(np.uint8).reshape(h, w * 3)
    raw = np.hstack([np.ones((h, 1), dtype=np.uint8), rows])

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                 + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9)) + chunk(b"IEND", b""))


def use_mp4(scene):
    """Render the scene's animation to an H.264 MP4 (Blender's FFmpeg output)."""
    settings = scene.render.image_settings
    if hasattr(settings, "media_type"):   # Blender 5.0 sorts formats into image and video
        settings.media_type = "VIDEO"
    settings.file_format = "FFMPEG"
    scene.render.ffmpeg.format = "MPEG4"
    scene.render.ffmpeg.codec = "H264"


def _stamp(scene, on):
    """Burn the frame number into each rendered picture."""
    r = scene.render
    r.use_stamp = on
    for key in ("date", "time", "render_time", "camera", "lens", "scene", "filename", "memory", "marker",
                "frame_range", "hostname", "sequencer_strip", "note"):
        if hasattr(r, "use_stamp_" + key):
            setattr(r, "use_stamp_" + key, False)
    r.use_stamp_frame = True
    r.use_stamp_note = on
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
        bake_report = __import__(addon_session.MODULE + ".core.measure.report", fromlist=["BakeReport"])
        exports = []
        for fmt, ext in (("BVH", "bvh"), ("GLTF", "glb")):
            path = os.path.join(args.out, "baked.%s" % ext)
            call(bpy.ops.motion_matching.export_baked, filepath=path, format=fmt, armature=target.name)
            exports.append(path)
        pictures = render_pictures(args, target, controller)
        bpy.ops.wm.save_as_mainfile(filepath=os.path.join(args.out, "demo.blend"))
        print(bake_report.BakeReport.from_json(report).to_text())
        print("coverage: %s" % os.path.join(args.out, "coverage.json"))
        for path in exports + pictures + [report_path, os.path.join(args.out, "demo.blend")]:
            print("wrote %s" % path)
        print("demo done in %.0f s" % (time.perf_counter() - t0))
    except Exception as ex:
        if not isinstance(ex, addon_session.addon_module("cli.bake_args").Failure):
            raise
        print("demo: %s" % ex, file=sys.stderr)
        return 1
    finally:
        # Disable the add-on, remove the throw-away user folder and Blender's
        # session folder (the process ends with os._exit, skipping Blender's own clean-up).
        addon_session.finish(blender_temp=True)
    return 0


if __name__ == "__main__":
    code = main()
    # Blender 4.2's bpy module crashes while Python shuts down once its glTF
    # exporter has run; everything is written and the add-on disabled by now,
    # so end the process here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
