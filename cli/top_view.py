"""A top view of a bake, rendered by Blender (Workbench): the wanted path
(blue), the baked hips path (orange), every planted foot as a footprint (left
green, right purple) and slides as red streaks (a planted foot that moved more
than 2 cm before it lifted: a line from where it planted to where it lifted).

Planted: the bake's keyed ``mm_lock_left`` / ``mm_lock_right`` figures where the
armature has them, else core.measure.path_metrics' planted definition applied to the
world ankle positions. Everything is drawn in a scene of its own, rendered and
removed again: the user's scene is left as it was. Used by ``bake --top-view``,
the demo and the crowd bench.
"""

import os

import numpy as np

from ..bridge.blender import armature_data, compat
from ..bridge.bake import controller as bridge_controller
from ..bridge.database import store as database_store
from ..core.measure import path_metrics

SLIDE_M = 0.02                      # a planted foot moving further than this is a slide
PATH_COLOR = (0.15, 0.4, 0.95, 1.0)
HIPS_COLOR = (1.0, 0.55, 0.1, 1.0)
FOOT_COLORS = ((0.2, 0.75, 0.3, 1.0), (0.7, 0.3, 0.9, 1.0))   # left, right
SLIDE_COLOR = (0.95, 0.1, 0.1, 1.0)
FLOOR_COLORS = ((0.8, 0.8, 0.8, 1.0), (0.7, 0.7, 0.7, 1.0))
FOOT_SIZE = (0.24, 0.10)           # footprint length along the foot, width (m)



# ----------------------------------------------------------------------------
# What is drawn (read from the scene, numpy from there on)


def bones_of(armature, scene):
    """(hips, left ankle, right ankle, left toe, right toe) bone names: the
    armature's retarget mapping, else the database's feature bones."""
    mapped = {i.name: i.bone for i in armature.data.motion_matching.bone_map if i.bone}
    keys = ("Hips", "LeftFoot", "RightFoot", "LeftToes", "RightToes")
    if all(mapped.get(k) for k in keys):
        return tuple(mapped[k] for k in keys)
    b = database_store.load(scene).feature_bones
    return b.hips, b.left_foot, b.right_foot, b.left_toe, b.right_toe


def world_tracks(armature, frames, names):
    """World heads (F, len(names), 3) of the named bones on ``frames``, from
    the armature's keys in bulk."""
    ad = armature.animation_data
    order, _parents, _rest, pose = armature_data.armature_pose(armature, ad.action if ad else None,
                                                      np.asarray(frames, dtype=np.float64))
    pos = {n: i for i, n in enumerate(order)}
    pose = pose[:, [pos[n] for n in names]]
    mw = np.array(armature.matrix_world)
    return pose[..., :3, 3] @ mw[:3, :3].T + mw[:3, 3]


def lock_flags(armature, frames):
    """(F, 2) bool from the keyed mm_lock_left / mm_lock_right, or None."""
    ad = armature.animation_data
    if ad is None or ad.action is None:
        return None
    out = {}
    for fc in compat.fcurves(ad.action, armature):
        for side, key in enumerate(('["mm_lock_left"]', '["mm_lock_right"]')):
            if fc.data_path == key:
                co = compat.read_curve(fc, ("co",))["co"]
                out[side] = np.interp(frames, co[:, 0], co[:, 1]) > 0.5
    if len(out) != 2:
        return None
    return np.stack([out[0], out[1]], axis=1)


def planted_from_motion(ankles, toes, fps):
    """(F, 2) bool by core.measure.path_metrics' planted definition on world ankles."""
    floor = path_metrics.planted_height(ankles, toes, fps)
    steps = path_metrics.planted(ankles, fps, floor)
    flags = np.zeros((len(ankles), 2), dtype=bool)
    flags[:-1] |= steps
    flags[1:] |= steps
    return flags


def plants(flags, ankles, toes, slide=SLIDE_M):
    """Each planted stretch: dicts with side, first and last index, where the
    foot planted (ankle, toe) and where it lifted, and whether it slid (the
    ankle got further than ``slide`` horizontally from where it planted)."""
    out = []
    for side in (0, 1):
        on = np.concatenate([[False], flags[:, side], [False]])
        starts = np.flatnonzero(on[1:] & ~on[:-1])
        ends = np.flatnonzero(~on[1:] & on[:-1]) - 1
        for a, b in zip(starts, ends):
            moved = np.linalg.norm(ankles[a:b + 1, side, :2] - ankles[a, side, :2], axis=1).max()
            out.append({"side": side, "first": int(a), "last": int(b), "ankle": ankles[a, side],
                        "toe": toes[a, side], "lifted": ankles[b, side], "slide_m": float(moved),
                        "slid": bool(moved > slide)})
    return out


def gather(armature, controller, scene=None, planted="motion"):
    """Everything the top view draws, over the scene's frame range: dict with
    frames, path (F, 3), hips (F, 3), ankles/toes (F, 2, 3), flags (F, 2),
    plants (see :func:`plants`), and where the flags came from. ``planted``
    "motion" (default: core.measure.path_metrics on the world ankles, what the feet do)
    or "locks" (the keyed mm_lock_* figures, where the bake has them)."""
    import bpy

    scene = scene or bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    names = bones_of(armature, scene)
    heads = world_tracks(armature, frames, names)
    hips, ankles, toes = heads[:, 0], heads[:, 1:3], heads[:, 3:5]
    path, _facing = bridge_controller.sample_controller(bpy.context, controller, frames)
    locks = lock_flags(armature, frames)
    if planted == "locks" and locks is not None:
        flags, source = locks, "the keyed foot locks"
    else:
        fps = scene.render.fps / scene.render.fps_base
        flags, source = planted_from_motion(ankles, toes, fps), "the world ankle motion"
    return {"frames": frames, "path": np.asarray(path, dtype=np.float64), "hips": hips, "ankles": ankles,
            "toes": toes, "flags": flags, "plants": plants(flags, ankles, toes), "planted_from": source,
            "lock_stretches": None if locks is None else
            [int(locks[0, k] + (locks[1:, k] & ~locks[:-1, k]).sum()) for k in (0, 1)]}


# ----------------------------------------------------------------------------
# Drawing objects (shared with the demo's pictures)


def _object(name, data, color, collection):
    import bpy

    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    obj.color = color
    return obj


def polyline(name, pts, radius, color, collection):
    """A bevelled poly curve through ``pts`` (N, 3)."""
    import bpy

    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = radius
    curve.bevel_resolution = 0
    spline = curve.splines.new("POLY")
    spline.points.add(len(pts) - 1)
    co = np.ones((len(pts), 4))
    co[:, :3] = pts
    spline.points.foreach_set("co", co.ravel())
    return _object(name, curve, color, collection)


def quads_mesh(name, corners, color, collection):
    """One mesh of quads: ``corners`` (Q, 4, 3)."""
    import bpy

    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 3)
    mesh = bpy.data.meshes.new(name)
    faces = np.arange(len(corners) * 4).reshape(-1, 4)
    mesh.from_pydata([tuple(v) for v in corners.reshape(-1, 3)], [], [tuple(f) for f in faces])
    mesh.update()
    return _object(name, mesh, color, collection)


def footprint_quads(plants_list, side, z, scale=1.0):
    """(Q, 4, 3) footprint outlines of one side: a rectangle from behind the
    ankle toward the toe, where the foot planted."""
    out = []
    length, width = FOOT_SIZE[0] * scale, FOOT_SIZE[1] * scale
    for p in plants_list:
        if p["side"] != side:
            continue
        a, t = p["ankle"][:2], p["toe"][:2]
        d = t - a
        n = np.linalg.norm(d)
        d = d / n if n > 1e-6 else np.array([0.0, -1.0])
        s = np.array([-d[1], d[0]]) * width / 2
        back, front = a - d * 0.06 * scale, a - d * 0.06 * scale + d * length
        out.append([(*(back - s), z), (*(back + s), z), (*(front + s), z), (*(front - s), z)])
    return np.array(out).reshape(-1, 4, 3)


def checker_floor(lo, hi, collection, cell=1.0):
    """Two meshes of alternating squares covering [lo, hi] (x, y) at z = 0."""
    x0, y0 = np.floor(np.asarray(lo[:2]) / cell) * cell
    nx = int(np.ceil((hi[0] - x0) / cell))
    ny = int(np.ceil((hi[1] - y0) / cell))
    ix, iy = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    ix, iy = ix.ravel(), iy.ravel()
    out = []
    for parity in (0, 1):
        pick = (ix + iy) % 2 == parity
        x, y = x0 + ix[pick] * cell, y0 + iy[pick] * cell
        zero = np.zeros_like(x)
        corners = np.stack([np.stack([x, y, zero], 1), np.stack([x + cell, y, zero], 1),
                            np.stack([x + cell, y + cell, zero], 1), np.stack([x, y + cell, zero], 1)], 1)
        out.append(quads_mesh("Floor%d" % parity, corners, FLOOR_COLORS[parity], collection))
    return out


def draw_plants(plants_list, collection, z=0.004, scale=1.0, line=0.012):
    """Footprints per side and slide streaks; returns the objects."""
    objs = []
    for side in (0, 1):
        q = footprint_quads(plants_list, side, z, scale)
        if len(q):
            objs.append(quads_mesh("Footprints%s" % "LR"[side], q, FOOT_COLORS[side], collection))
    for i, p in enumerate(x for x in plants_list if x["slid"]):
        a, b = p["ankle"].copy(), p["lifted"].copy()
        a[2] = b[2] = z + 0.006
        objs.append(polyline("Slide%03d" % i, np.stack([a, b]), line, SLIDE_COLOR, collection))
    return objs


def workbench(scene, size):
    """Flat Workbench shading with object colours, ``size`` (width, height)."""
    import bpy

    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "FLAT"
    scene.display.shading.color_type = "OBJECT"
    scene.render.resolution_x, scene.render.resolution_y = int(size[0]), int(size[1])
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.render.use_stamp = False
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    if scene.world is None:
        scene.world = bpy.data.worlds.new(scene.name + "World")
    scene.world.color = (0.25, 0.27, 0.3)
    scene.view_settings.view_transform = "Standard"


# ----------------------------------------------------------------------------
# The top view


def render_top_view(filepath, armature, controller, size=None, scene=None, planted="motion"):
    """Render a top view of ``armature`` following ``controller`` over the
    scene's frame range to the PNG ``filepath``, ``size`` (width, height)
    pixels (default 800 x 600, turned upright for a path longer along Y);
    returns what was drawn (see :func:`gather`). Nothing stays behind in bpy.data."""
    import bpy

    scene = scene or bpy.context.scene
    facts = gather(armature, controller, scene, planted)
    facts["view"] = render_many(filepath, [facts], size)
    return facts


def render_many(filepath, facts_list, size=None):
    """Render every character's :func:`gather` facts (paths, hips, footprints)
    in one top view to the PNG ``filepath``; returns the view (centre, width in
    metres, size in pixels). Nothing stays behind in bpy.data."""
    import bpy

    pts = np.concatenate([np.concatenate([f["path"][:, :2], f["hips"][:, :2], f["ankles"].reshape(-1, 3)[:, :2]])
                          for f in facts_list])
    lo, hi = pts.min(axis=0) - 0.5, pts.max(axis=0) + 0.5
    if size is None:
        size = (800, 600) if hi[0] - lo[0] >= hi[1] - lo[1] else (600, 800)
    aspect = size[0] / size[1]
    width = max(hi[0] - lo[0], (hi[1] - lo[1]) * aspect)     # metres across the picture
    px = width / size[0]                                      # metres per pixel
    view_facts = {"centre": (lo + hi) / 2, "width_m": width, "size": tuple(size)}
    view = bpy.data.scenes.new("MM top view")
    before = {k: {b.as_pointer() for b in getattr(bpy.data, k)}
              for k in ("objects", "meshes", "curves", "cameras", "worlds")}
    try:
        coll = view.collection
        centre = (lo + hi) / 2
        half = np.array([width, width / aspect]) / 2 + 1.0
        checker_floor(centre - half, centre + half, coll)
        line = max(0.012, 2.0 * px)
        for facts in facts_list:
            polyline("WantedPath", np.column_stack([facts["path"][:, :2], np.full(len(facts["path"]), 0.01)]),
                     line, PATH_COLOR, coll)
            polyline("HipsPath", np.column_stack([facts["hips"][:, :2], np.full(len(facts["hips"]), 0.02)]),
                     line * 0.8, HIPS_COLOR, coll)
            draw_plants(facts["plants"], coll, z=0.03, scale=max(1.0, 1.2 * px / 0.02), line=line * 0.9)
        cam_data = bpy.data.cameras.new("TopCamera")
        cam_data.type = "ORTHO"
        cam_data.ortho_scale = width * (1.0 if aspect >= 1 else 1.0 / aspect)
        cam_data.clip_end = 200.0
        cam = bpy.data.objects.new("TopCamera", cam_data)
        coll.objects.link(cam)
        cam.location = (centre[0], centre[1], 50.0)
        cam.rotation_euler = (0.0, 0.0, 0.0)
        view.camera = cam
        workbench(view, size)
        view.render.filepath = os.path.abspath(filepath)
        folder = os.path.dirname(view.render.filepath)
        if folder:
            os.makedirs(folder, exist_ok=True)
        bpy.ops.render.render(write_still=True, scene=view.name)
    finally:
        bpy.data.scenes.remove(view)
        for kind, had in before.items():
            coll = getattr(bpy.data, kind)
            for block in [b for b in coll if b.as_pointer() not in had]:
                coll.remove(block)
    return view_facts


def summary(facts):
    """One line on what the top view shows."""
    pl = facts["plants"]
    slid = [p for p in pl if p["slid"]]
    locks = facts.get("lock_stretches")
    return ("top view: %d footprints (%d left, %d right, planted by %s), %d slides (longest %.1f cm)%s"
            % (len(pl), sum(p["side"] == 0 for p in pl), sum(p["side"] == 1 for p in pl), facts["planted_from"],
               len(slid), 100 * max([p["slide_m"] for p in slid] or [0.0]),
               "" if locks is None else "; foot locks engaged %d times left, %d right" % tuple(locks)))
