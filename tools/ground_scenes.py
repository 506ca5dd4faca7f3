"""Grounds to bake on, made with bpy (rolling hills, a flight of stairs), and the
figures of a bake on one: foot points under the surface, planted feet's height
over it, the hips' height over it, and a side-view picture (numpy drawn, saved
through Blender's image API). Shared by tests/blender/test_ground.py and
bench/bench_ground.py."""

import numpy as np

HILL_RISE = 0.16       # m: the hills' amplitude along the walk (4 m waves: slopes up to 14.7 degrees)
STAIR_START, TREAD, RISER, STEPS = -2.0, 0.30, 0.16, 8


def hills_height(x, y):
    """The rolling hills' height at (x, y): 4 m waves along y, 5 m across x."""
    return HILL_RISE * np.sin(2 * np.pi * y / 4.0) + 0.06 * np.sin(2 * np.pi * x / 5.0)


def _mesh_object(name, verts, faces):
    import bpy

    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in np.asarray(verts).tolist()], [], [tuple(f) for f in faces])
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def make_hills(name="Hills", x=(-4.0, 4.0), y=(-12.0, 3.0), cell=0.1):
    """A grid mesh of :func:`hills_height`."""
    xs = np.arange(x[0], x[1] + 1e-9, cell)
    ys = np.arange(y[0], y[1] + 1e-9, cell)
    gx, gy = np.meshgrid(xs, ys)
    verts = np.column_stack([gx.ravel(), gy.ravel(), hills_height(gx, gy).ravel()])
    nx = len(xs)
    faces = [(j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i)
             for j in range(len(ys) - 1) for i in range(nx - 1)]
    return _mesh_object(name, verts, faces)


def stairs_profile():
    """(y, z) corners of the flight along -y: floor, STEPS risers and treads, a landing."""
    pts = [(3.0, 0.0), (STAIR_START, 0.0)]
    for k in range(STEPS):
        y = STAIR_START - k * TREAD
        pts += [(y, (k + 1) * RISER), (y - TREAD, (k + 1) * RISER)]
    pts.append((-14.0, STEPS * RISER))
    return pts


def make_stairs(name="Stairs", x=(-3.0, 3.0)):
    """The flight of :func:`stairs_profile`, 6 m wide."""
    prof = stairs_profile()
    verts = [(x[0], y, z) for y, z in prof] + [(x[1], y, z) for y, z in prof]
    n = len(prof)
    faces = [(k, k + 1, n + k + 1, n + k) for k in range(n - 1)]
    return _mesh_object(name, verts, faces)


def ground_heights(ground, points):
    """Heights (...) of ``ground`` (a mesh object, or None: 0) under world
    ``points`` (..., 3), by Blender's ray casts."""
    points = np.asarray(points, dtype=np.float64)
    if ground is None:
        return np.zeros(points.shape[:-1])
    import bpy
    from mathutils import Vector
    from mathutils.bvhtree import BVHTree

    tree = BVHTree.FromObject(ground, bpy.context.evaluated_depsgraph_get())
    inv = np.linalg.inv(np.asarray(ground.matrix_world))
    mw = np.asarray(ground.matrix_world)
    flat = points.reshape(-1, 3)
    out = np.full(len(flat), np.nan)
    down = Vector((inv[:3, :3] @ np.array([0.0, 0.0, -1.0])).tolist())
    for k, p in enumerate(flat.tolist()):
        o = inv[:3, :3] @ np.array([p[0], p[1], 50.0]) + inv[:3, 3]
        hit = tree.ray_cast(Vector(o.tolist()), down)[0]
        if hit is not None:
            out[k] = (mw[:3, :3] @ np.array(hit) + mw[:3, 3])[2]
    return out.reshape(points.shape[:-1])


def toe_tips(obj, frames, toe_names):
    """World tails (F, 2, 3) of the toe bones on ``frames`` (Blender's own evaluation)."""
    scene = __import__("bpy").context.scene
    current = scene.frame_current
    out = np.empty((len(frames), len(toe_names), 3))
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            mw = np.asarray(obj.matrix_world, dtype=np.float64)
            for k, name in enumerate(toe_names):
                out[i, k] = mw[:3, :3] @ np.array(obj.pose.bones[name].tail) + mw[:3, 3]
    finally:
        scene.frame_set(current)
    return out


def measure(obj, ground, path_measure):
    """Figures of the armature ``obj``'s baked action over ``ground`` (None: the
    flat floor): {under_cm, planted_cm, hips_m, ...} and the arrays drawn."""
    import bpy

    scene = bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    action = obj.animation_data.action
    contacts = path_measure.baked_contacts(obj, action, frames)
    motion = path_measure.read_motion(obj, action, frames, scene.render.fps, contacts=contacts)
    names = path_measure.measured_bones(obj)
    tips = toe_tips(obj, frames, [names["LeftToes"], names["RightToes"]])
    points = np.concatenate([motion.ankles, motion.toes, tips], axis=1)       # (F, 6, 3)
    under = ground_heights(ground, points)
    gap = points[..., 2] - under
    toe_gap = gap[:, 2:4]
    hips_ground = ground_heights(ground, motion.hips)
    # Planted sliding: the toes' ground travel between frames both in contact, per planted second.
    both = contacts[1:] & contacts[:-1]
    step = np.linalg.norm(np.diff(motion.toes[..., :2], axis=0), axis=-1)
    slide = float(100 * step[both].sum() / max(both.sum() / scene.render.fps, 1e-9))
    return {"under_cm": float(100 * max(-gap.min(), 0.0)),
            "planted_toe_cm": float(100 * np.median(toe_gap[contacts])),
            "planted_ankle_cm": float(100 * np.median(gap[:, :2][contacts])),
            "hips_m": float(np.median(motion.hips[:, 2] - hips_ground)), "slide_cm_s": slide,
            "hips": motion.hips, "points": points, "contacts": contacts, "frames": frames}


def side_view(path, figures, ground_profile, size=(1200, 300), span=None):
    """A PNG at ``path``: the ground's profile (y, z), the hips, ankles (blue planted,
    grey swinging) and toe tips (red) seen from the side (+x)."""
    import bpy

    w, h = size
    img = np.ones((h, w, 4))
    ys = np.concatenate([figures["points"][..., 1].ravel(), ground_profile[:, 0]])
    lo_y, hi_y = span or (ys.min() - 0.2, ys.max() + 0.2)
    lo_z, hi_z = -0.3, max(1.3, figures["hips"][:, 2].max() + 0.2)
    scale = min(w / (hi_y - lo_y), h / (hi_z - lo_z))

    def px(y, z):
        return ((hi_y - np.asarray(y)) * scale).astype(int), ((np.asarray(z) - lo_z) * scale).astype(int)

    def dots(y, z, color, r=1):
        u, v = px(y, z)
        for du in range(-r, r + 1):
            for dv in range(-r, r + 1):
                ok = (u + du >= 0) & (u + du < w) & (v + dv >= 0) & (v + dv < h)
                img[(v + dv)[ok], (u + du)[ok]] = color

    t = np.linspace(0, 1, 4000)
    prof = ground_profile
    seg = np.interp(t * (len(prof) - 1), np.arange(len(prof)), np.arange(len(prof)))
    i = np.minimum(seg.astype(int), len(prof) - 2)
    a = seg - i
    dots(prof[i, 0] * (1 - a) + prof[i + 1, 0] * a, prof[i, 1] * (1 - a) + prof[i + 1, 1] * a, (0.1, 0.6, 0.1, 1))
    p, c = figures["points"], figures["contacts"]
    dots(figures["hips"][:, 1], figures["hips"][:, 2], (0.2, 0.2, 0.2, 1))
    for side in range(2):
        planted = c[:, side]
        dots(p[~planted, side, 1], p[~planted, side, 2], (0.6, 0.6, 0.6, 1), 0)
        dots(p[planted, side, 1], p[planted, side, 2], (0.1, 0.2, 0.9, 1))
        dots(p[:, 4 + side, 1], p[:, 4 + side, 2], (0.9, 0.1, 0.1, 1), 0)
    image = bpy.data.images.new("side_view", w, h, alpha=True)
    image.pixels.foreach_set(img.astype(np.float32).ravel())
    image.filepath_raw = path
    image.file_format = "PNG"
    image.save()
    bpy.data.images.remove(image)
    return path
