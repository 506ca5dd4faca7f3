"""Mixamo-style characters for tests and benches, in the setups real files come in.

:func:`build` makes, in Blender, a humanoid armature named the way Mixamo names
its bones (``mixamorig:Hips`` ... ``mixamorig:LeftToe_End``, with ``_End`` leaf
bones and two fingers per hand) and a low-poly body skinned to it: one box per
bone (a flat sole under each foot and toe), one vertex group per bone with
rigid weights, an Armature modifier, parented to the armature. As Blender's
FBX and glTF importers give a Mixamo character: bones stored Y-up in
centimetres (the character faces +Z, its left arm along +X), the armature
object turned +90 degrees about X and scaled 0.01, so in the world it stands
Z-up in metres facing -Y, soles on the floor. ``pose="A"`` lowers the arms 45
degrees at rest; ``apply_transforms`` bakes the object transforms into the
data (Ctrl-A), leaving bones Z-up in metres.

Its proportions differ from the sample take's skeleton (samples/jl_mm_tpose.bvh:
pelvis 96.8 cm above the floor, thigh 45.7 cm, shin 41.6 cm, upper arm 30.0 cm,
forearm 24.8 cm): pelvis 88 cm, thigh 40, shin 41, upper arm 27, forearm 25.

:func:`make` builds one of the :data:`SETUPS`: as built, with transforms
applied, or sent through Blender's own exporters and importers (glTF .glb with
each bone-direction option, FBX with automatic bone orientation on and off,
leaf bones kept or dropped, joints written with Y or X along the bone). Both
return ``(armature object, mesh object)``.
Developer tool, not part of the extension.
"""

import math
import os

import numpy as np

PREFIX = "mixamorig:"

# Rest layout in the file's frame (Y up, centimetres, facing +Z, left on +X):
# (bone, parent, head offset from the parent's head). Left side only; the
# right side mirrors it in X.
_CENTRE = [
    ("Hips", None, (0.0, 93.0, 0.5)),
    ("Spine", "Hips", (0.0, 8.0, -0.5)),
    ("Spine1", "Spine", (0.0, 10.0, 0.0)),
    ("Spine2", "Spine1", (0.0, 11.0, 0.0)),
    ("Neck", "Spine2", (0.0, 15.0, 1.0)),
    ("Head", "Neck", (0.0, 9.0, 1.5)),
    ("HeadTop_End", "Head", (0.0, 19.0, 0.0)),
]
_LEFT = [
    ("LeftShoulder", "Spine2", (5.5, 10.5, 0.0)),
    ("LeftArm", "LeftShoulder", (13.0, 0.0, 0.0)),
    ("LeftForeArm", "LeftArm", (27.0, 0.0, 0.0)),
    ("LeftHand", "LeftForeArm", (25.0, 0.0, 0.0)),
    ("LeftHandIndex1", "LeftHand", (9.0, 0.0, 2.0)),
    ("LeftHandIndex2", "LeftHandIndex1", (3.5, 0.0, 0.0)),
    ("LeftHandIndex3", "LeftHandIndex2", (2.5, 0.0, 0.0)),
    ("LeftHandIndex4", "LeftHandIndex3", (2.0, 0.0, 0.0)),
    ("LeftHandThumb1", "LeftHand", (2.5, -1.0, 3.0)),
    ("LeftHandThumb2", "LeftHandThumb1", (2.5, 0.0, 2.0)),
    ("LeftHandThumb3", "LeftHandThumb2", (2.0, 0.0, 1.0)),
    ("LeftHandThumb4", "LeftHandThumb3", (2.0, 0.0, 0.5)),
    ("LeftUpLeg", "Hips", (9.5, -5.0, 0.0)),
    ("LeftLeg", "LeftUpLeg", (0.0, -40.0, 0.5)),
    ("LeftFoot", "LeftLeg", (0.0, -41.0, -1.5)),
    ("LeftToeBase", "LeftFoot", (0.0, -6.0, 12.0)),
    ("LeftToe_End", "LeftToeBase", (0.0, 0.0, 8.0)),
]
# The bone each bone's box and tail point at (its main child).
_NEXT = {"Hips": "Spine", "Spine": "Spine1", "Spine1": "Spine2", "Spine2": "Neck", "Neck": "Head",
         "Head": "HeadTop_End", "Shoulder": "Arm", "Arm": "ForeArm", "ForeArm": "Hand", "Hand": "HandIndex1",
         "UpLeg": "Leg", "Leg": "Foot", "Foot": "ToeBase", "ToeBase": "Toe_End"}
for _f in ("Index", "Thumb"):
    _NEXT.update({"Hand%s%d" % (_f, k): "Hand%s%d" % (_f, k + 1) for k in (1, 2, 3)})
# Half-widths (cm) of each bone's box: across (x) and front-back (z) at rest.
_WIDTH = {"Hips": (14, 10), "Spine": (13, 9), "Spine1": (14, 10), "Spine2": (15, 10), "Neck": (5, 5),
          "Head": (9, 10), "Shoulder": (5, 5), "Arm": (5, 5), "ForeArm": (4, 4), "Hand": (4.5, 2),
          "UpLeg": (7, 7), "Leg": (5.5, 5.5)}
_SOLE = {"Foot": (4.5, -5.0), "ToeBase": (4.0, 3.0)}   # half-width, height of the sole box top (cm)
_ARM_BONES = ("Arm", "ForeArm", "Hand", "HandIndex1", "HandIndex2", "HandIndex3", "HandIndex4",
              "HandThumb1", "HandThumb2", "HandThumb3", "HandThumb4")


def _short(name):
    """The bone's name without prefix and side ('LeftForeArm' -> 'ForeArm')."""
    for side in ("Left", "Right"):
        if name.startswith(side):
            return name[len(side):]
    return name


def layout(pose="T"):
    """Bone names (prefixed, parents first), parent indices and rest heads
    (J, 3) in the file's frame (Y up, centimetres). ``pose`` "T" or "A" (arms
    45 degrees down)."""
    rows = list(_CENTRE)
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        for name, parent, off in _LEFT:
            par = side + parent[4:] if parent.startswith("Left") else parent
            rows.append((side + name[4:], par, (sign * off[0], off[1], off[2])))
    names = [r[0] for r in rows]
    index = {n: i for i, n in enumerate(names)}
    parents = np.array([-1 if r[1] is None else index[r[1]] for r in rows])
    heads = np.zeros((len(rows), 3))
    for i, (_n, _p, off) in enumerate(rows):
        heads[i] = off if parents[i] < 0 else heads[parents[i]] + off
    if pose == "A":
        for side, sign in (("Left", 1.0), ("Right", -1.0)):
            pivot = heads[index[side + "Arm"]].copy()
            a = -sign * math.radians(45.0)
            rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
            for short in _ARM_BONES:
                i = index[side + short]
                heads[i] = pivot + rot @ (heads[i] - pivot)
    elif pose != "T":
        raise ValueError("pose must be 'T' or 'A'")
    return [PREFIX + n for n in names], parents, heads


def _tails(names, parents, heads):
    """A tail per bone: the head of its main child, else its parent's
    direction continued (leaf bones: 40% of the parent's length, at least 2 cm)."""
    index = {n: i for i, n in enumerate(names)}
    tails = np.zeros_like(heads)
    for i, name in enumerate(names):
        short = name[len(PREFIX):]
        side = short[:4] if short.startswith("Left") else short[:5] if short.startswith("Right") else ""
        nxt = _NEXT.get(_short(short))
        if nxt is not None:
            tails[i] = heads[index[PREFIX + side + nxt]]
        else:
            p = parents[i]
            d = heads[i] - heads[p]
            length = np.linalg.norm(d)
            tails[i] = heads[i] + d / length * max(2.0, 0.4 * length)
    return tails


def _box(a, b, half_x, half_z, up_hint):
    """Eight corners of a box from point a to point b (its axis), with
    half-widths along two directions across it."""
    d = b - a
    d = d / np.linalg.norm(d)
    x = np.cross(up_hint, d)
    if np.linalg.norm(x) < 1e-6:
        x = np.cross(np.array([0.0, 0.0, 1.0]), d)
    x = x / np.linalg.norm(x)
    z = np.cross(x, d)
    out = []
    for p in (a, b):
        for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            out.append(p + sx * half_x * x + sz * half_z * z)
    return out


_FACES = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]


def body(names, parents, heads):
    """A low-poly body in the file's frame: vertices (V, 3), quad faces and
    {bone: vertex indices}. A box along every bone that has a main child
    (leaf bones and fingers carry none, as in Mixamo files); under each foot
    a sole box from the heel to the toe base and one under the toes, both
    with their bottom on the floor (y = 0)."""
    index = {n: i for i, n in enumerate(names)}
    verts, faces, groups = [], [], {}
    for i, name in enumerate(names):
        short = name[len(PREFIX):]
        side = short[:4] if short.startswith("Left") else short[:5] if short.startswith("Right") else ""
        key = _short(short)
        nxt = _NEXT.get(key)
        if nxt is None or key.startswith("HandIndex") or key.startswith("HandThumb"):
            continue
        a, b = heads[i], heads[index[PREFIX + side + nxt]]
        if key in _SOLE:
            half, top = _SOLE[key]
            if key == "Foot":
                top = a[1]            # up to the ankle
                z0, z1 = a[2] - 7.0, b[2]
            else:
                z0, z1 = a[2], b[2]
            x = a[0]
            corners = [np.array(c) for c in (
                (x - half, 0.0, z0), (x + half, 0.0, z0), (x + half, 0.0, z1), (x - half, 0.0, z1),
                (x - half, top, z0), (x + half, top, z0), (x + half, top, z1), (x - half, top, z1))]
        else:
            hx, hz = _WIDTH[key]
            corners = _box(a, b, hx, hz, np.array([0.0, 0.0, 1.0]))
        base = len(verts)
        verts += corners
        faces += [tuple(base + k for k in f) for f in _FACES]
        groups[name] = list(range(base, base + 8))
    return np.array(verts), faces, groups


# ----------------------------------------------------------------------------
# Blender


def _link(obj):
    import bpy

    bpy.context.scene.collection.objects.link(obj)
    return obj


def build(name="Character", pose="T", apply_transforms=False):
    """The character as Blender's importers give a Mixamo file: returns
    (armature object, mesh object)."""
    import bpy

    names, parents, heads = layout(pose)
    tails = _tails(names, parents, heads)
    arm = bpy.data.armatures.new(name)
    obj = _link(bpy.data.objects.new(name, arm))
    _select_only([obj])
    bpy.ops.object.mode_set(mode="EDIT")
    ebs = []
    for i, n in enumerate(names):
        eb = arm.edit_bones.new(n)
        eb.head = heads[i]
        eb.tail = tails[i]
        eb.roll = 0.0
        if parents[i] >= 0:
            eb.parent = ebs[parents[i]]
            eb.use_connect = bool(np.allclose(tails[parents[i]], heads[i]))
        ebs.append(eb)
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.rotation_mode = "XYZ"
    obj.rotation_euler = (math.pi / 2.0, 0.0, 0.0)
    obj.scale = (0.01, 0.01, 0.01)

    verts, faces, groups = body(names, parents, heads)
    mesh = bpy.data.meshes.new(name + "Body")
    mesh.from_pydata([tuple(v) for v in verts], [], faces)
    mesh.update()
    mobj = _link(bpy.data.objects.new(name + "Body", mesh))
    for bone, idx in groups.items():
        mobj.vertex_groups.new(name=bone).add(idx, 1.0, "REPLACE")
    mod = mobj.modifiers.new("Armature", "ARMATURE")
    mod.object = obj
    mobj.parent = obj          # identity parent inverse: the mesh sits in the armature's frame
    bpy.context.view_layer.update()
    if apply_transforms:
        apply_object_transforms(obj, mobj)
    return obj, mobj


def apply_object_transforms(obj, mesh):
    """Ctrl-A (location, rotation, scale) on the armature and its mesh."""
    import bpy

    _select_only([obj, mesh])
    bpy.ops.object.transform_apply(location=True, rotation=True, scale=True)
    bpy.context.view_layer.update()


def _select_only(objs):
    import bpy

    bpy.context.view_layer.update()     # drops objects removed since
    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    for o in objs:
        o.select_set(True)
    bpy.context.view_layer.objects.active = objs[0]


def _new_objects(before):
    import bpy

    new = [o for o in bpy.data.objects if o.name not in before]
    arms = [o for o in new if o.type == "ARMATURE"]
    # Only the skinned mesh (the glTF importer also makes a mesh for bone shapes).
    meshes = [o for o in new if o.type == "MESH" and any(m.type == "ARMATURE" for m in o.modifiers)]
    if len(arms) != 1 or len(meshes) != 1:
        raise RuntimeError("the import made %d armatures and %d skinned meshes" % (len(arms), len(meshes)))
    return arms[0], meshes[0]


def _remove(objs):
    import bpy

    for o in objs:
        data = o.data
        bpy.data.objects.remove(o)
        if data is not None and data.users == 0:
            (bpy.data.armatures if isinstance(data, bpy.types.Armature) else bpy.data.meshes).remove(data)


def export_gltf(obj, mesh, path):
    import bpy

    _select_only([obj, mesh])
    # The exporter sets the context window's scene; name the window manager's own
    # window and screen (Blender 4.2 in background crashed here now and then after
    # earlier files were opened in the same process).
    window = bpy.context.window_manager.windows[0]
    with bpy.context.temp_override(window=window, screen=window.screen, scene=bpy.context.scene):
        result = bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", use_selection=True,
                                           export_animations=False)
    if result != {"FINISHED"}:
        raise RuntimeError("glTF export failed: %s" % result)


def import_gltf(path, bone_heuristic=None):
    """Import a .glb; ``bone_heuristic`` None uses the importer's default."""
    import bpy

    before = {o.name for o in bpy.data.objects}
    kw = {} if bone_heuristic is None else {"bone_heuristic": bone_heuristic}
    result = bpy.ops.import_scene.gltf(filepath=path, **kw)
    if result != {"FINISHED"}:
        raise RuntimeError("glTF import failed: %s" % result)
    return _new_objects(before)


def export_fbx(obj, mesh, path, bone_axis="Y"):
    """FBX as Mixamo ships it: armature and mesh, the _End bones as real
    bones (no leaf bones added), no animation. ``bone_axis`` "X" writes the
    joints with X along the bone (as Maya and Unreal files have them)."""
    import bpy

    _select_only([obj, mesh])
    axes = {"primary_bone_axis": "X", "secondary_bone_axis": "Y"} if bone_axis == "X" else {}
    result = bpy.ops.export_scene.fbx(filepath=path, use_selection=True, object_types={"ARMATURE", "MESH"},
                                      add_leaf_bones=False, bake_anim=False, **axes)
    if result != {"FINISHED"}:
        raise RuntimeError("FBX export failed: %s" % result)


def import_fbx(path, automatic_bone_orientation=False, ignore_leaf_bones=False):
    import bpy

    before = {o.name for o in bpy.data.objects}
    result = bpy.ops.import_scene.fbx(filepath=path, automatic_bone_orientation=automatic_bone_orientation,
                                      ignore_leaf_bones=ignore_leaf_bones)
    if result != {"FINISHED"}:
        raise RuntimeError("FBX import failed: %s" % result)
    return _new_objects(before)


# Every setup: name -> how it is made. "built" is the rig as build() makes it;
# "gltf": the importer's bone_heuristic (None: its default); "fbx": (bone axis
# in the file, automatic bone orientation, ignore leaf bones).
SETUPS = {
    "built": {},
    "built, transforms applied": {"apply_transforms": True},
    "glTF default": {"gltf": None},
    "glTF BLENDER": {"gltf": "BLENDER"},
    "glTF TEMPERANCE": {"gltf": "TEMPERANCE"},
    "glTF FORTUNE": {"gltf": "FORTUNE"},
    "FBX": {"fbx": ("Y", False, False)},
    "FBX auto-orient": {"fbx": ("Y", True, False)},
    "FBX no leaves": {"fbx": ("Y", False, True)},
    "FBX auto-orient, no leaves": {"fbx": ("Y", True, True)},
    "FBX X-axis bones": {"fbx": ("X", False, False)},
    "FBX X-axis bones, auto-orient": {"fbx": ("X", True, False)},
}
SETUP_NAMES = tuple(SETUPS)


def make(setup, folder, name="Character", pose="T"):
    """The character in one of :data:`SETUPS`, imported from a file written
    into ``folder`` by another process (:mod:`tools.rig_file`) when the setup asks.
    Returns (armature object, mesh object); the armature is renamed ``name``."""
    kw = SETUPS[setup]
    if "gltf" not in kw and "fbx" not in kw:
        return build(name, pose, apply_transforms=kw.get("apply_transforms", False))
    # The file is written by a process of its own (tools.rig_file), named as
    # the original would be, so the import sees what an in-process export gives.
    from tools import rig_file

    if "gltf" in kw:
        path = rig_file.write("glb", folder, name + "_original", pose)
        new, new_mesh = import_gltf(path, kw["gltf"])
    else:
        axis, auto, no_leaves = kw["fbx"]
        path = rig_file.write("fbx", folder, name + "_original", pose, axis)
        new, new_mesh = import_fbx(path, automatic_bone_orientation=auto, ignore_leaf_bones=no_leaves)
    new.name = name
    return new, new_mesh


def rest_world_heads(obj, names=None):
    """World positions (J, 3) of the bones' rest heads, in ``names`` order
    (default: the armature's bones)."""
    bones = obj.data.bones
    names = names or [b.name for b in bones]
    mw = np.array(obj.matrix_world)
    heads = np.array([bones[n].head_local for n in names], dtype=np.float64)
    return heads @ mw[:3, :3].T + mw[:3, 3]
