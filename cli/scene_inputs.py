"""The command line's scene inputs besides the takes: a character to bake onto
(a .glb/.gltf/.fbx file through Blender's importers with their defaults, or an
armature appended from a .blend as ``FILE.blend:Object``), a controller
appended from a .blend, and the export files by extension.

The ``check_*`` functions need no Blender (they run before it starts); the
``load_*`` ones run inside it. Each failure is a ``ValueError`` whose text is
one sentence (the command prints it as ``motion_matching: ...``).
"""

import os

CHARACTER_EXTENSIONS = (".glb", ".gltf", ".fbx")
EXPORT_FORMATS = {".bvh": "BVH", ".fbx": "FBX", ".glb": "GLTF", ".gltf": "GLTF_SEPARATE"}


def split_blend(spec):
    """(file, object name) of ``FILE.blend:Object``; (spec, None) for anything else."""
    at = spec.lower().rfind(".blend:")
    if at < 0:
        return spec, None
    return spec[:at + len(".blend")], spec[at + len(".blend:"):]


def check_character(spec, option="--character"):
    """Check a character argument before Blender starts (file there, known kind)."""
    path, name = split_blend(spec)
    ext = os.path.splitext(path)[1].lower()
    if name is None and ext == ".blend":
        raise ValueError("%s %s: name the armature in the .blend as FILE.blend:Object." % (option, spec))
    if name is not None and not name.strip():
        raise ValueError("%s %s: the object name after ':' is empty." % (option, spec))
    if name is None and ext not in CHARACTER_EXTENSIONS:
        raise ValueError("%s %s: unknown kind of file %r; give a .glb, .gltf or .fbx file, or FILE.blend:Object."
                         % (option, spec, ext or "(no extension)"))
    if not os.path.isfile(path):
        raise ValueError("%s file not found: %s" % (option, path))


GROUND_EXTENSIONS = (".glb", ".gltf", ".fbx", ".obj")


def check_ground(spec, option="--ground"):
    """Check a ground argument before Blender starts (file there, known kind)."""
    path, name = split_blend(spec)
    ext = os.path.splitext(path)[1].lower()
    if name is None and ext == ".blend":
        raise ValueError("%s %s: name the mesh in the .blend as FILE.blend:Object." % (option, spec))
    if name is not None and not name.strip():
        raise ValueError("%s %s: the object name after ':' is empty." % (option, spec))
    if name is None and ext not in GROUND_EXTENSIONS:
        raise ValueError("%s %s: unknown kind of file %r; give a .glb, .gltf, .fbx or .obj file, or FILE.blend:Object."
                         % (option, spec, ext or "(no extension)"))
    if not os.path.isfile(path):
        raise ValueError("%s file not found: %s" % (option, path))


def check_controller(spec, option="--controller"):
    """Check a controller argument (``FILE.blend:Object``) before Blender starts."""
    path, name = split_blend(spec)
    if name is None or not name.strip():
        raise ValueError("%s %s: give the controller as FILE.blend:Object." % (option, spec))
    if not os.path.isfile(path):
        raise ValueError("%s file not found: %s" % (option, path))


def check_export(path):
    """The export operator's format for ``path`` by its extension."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXPORT_FORMATS:
        raise ValueError("--export %s: unknown extension %r; give a .bvh, .fbx, .glb or .gltf file."
                         % (path, ext or "(none)"))
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError("--export %s is a folder: give a file name." % path)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError("--export %s cannot be written: %s is a file." % (path, folder))
    return EXPORT_FORMATS[ext]


# ---------------------------------------------------------------------------
# Inside Blender


def _new_objects(before):
    import bpy

    return [o for o in bpy.data.objects if o.name not in before]


def _append(path, name):
    """Append the object ``name`` from the .blend ``path`` and everything
    parented under it (a character's meshes); returns the object."""
    import bpy

    try:
        with bpy.data.libraries.load(path, link=False) as (src, dst):
            if name not in src.objects:
                raise ValueError("%s has no object named %r (%s)." % (
                    os.path.basename(path), name, _few(src.objects) or "it holds no objects"))
            names = list(src.objects)
            dst.objects = list(names)
    except OSError as ex:
        raise ValueError("Cannot read %s as a .blend file (%s)." % (path, str(ex).strip() or "unreadable")) from None
    # Appended objects are renamed when the file already has their names: find ours by position.
    obj = dst.objects[names.index(name)]
    loaded = [o for o in dst.objects if o is not None]
    wanted = {o for o in loaded if o == obj or _under(o, obj)}
    for o in loaded:
        if o not in wanted:
            bpy.data.objects.remove(o)
    for o in sorted(wanted, key=lambda o: o.name):
        bpy.context.scene.collection.objects.link(o)
    return obj


def _under(obj, root):
    parent = obj.parent
    while parent is not None:
        if parent == root:
            return True
        parent = parent.parent
    return False


def _few(names, most=8):
    names = sorted(names)
    shown = ", ".join(names[:most])
    return "it holds " + shown + (", ..." if len(names) > most else "") if names else ""


def load_character(spec):
    """Import or append the character; returns its armature object (a ValueError
    sentence when the file holds no armature, more than one, or the object is not one)."""
    import bpy

    path, name = split_blend(spec)
    path = os.path.abspath(path)
    if name is not None:
        obj = _append(path, name)
        if obj.type != "ARMATURE":
            raise ValueError("--character %s: %s is a %s, not an armature." % (spec, name, obj.type.lower()))
        return obj
    before = {o.name for o in bpy.data.objects}
    importer = bpy.ops.import_scene.fbx if path.lower().endswith(".fbx") else bpy.ops.import_scene.gltf
    try:
        result = importer(filepath=path)
    except RuntimeError as ex:
        lines = [line for line in str(ex).splitlines() if line.strip()]
        raise ValueError("--character %s cannot be imported (%s)." % (spec, lines[-1].strip() if lines else "error"))
    if result != {"FINISHED"}:
        raise ValueError("--character %s cannot be imported." % spec)
    armatures = [o for o in _new_objects(before) if o.type == "ARMATURE"]
    if not armatures:
        raise ValueError("--character %s holds no armature." % spec)
    if len(armatures) > 1:
        raise ValueError("--character %s holds %d armatures (%s): append the one to bake onto from a .blend "
                         "as FILE.blend:Object." % (spec, len(armatures), ", ".join(sorted(a.name for a in armatures))))
    return armatures[0]


def load_controller(spec):
    """Append the controller object (with its animation); returns it."""
    path, name = split_blend(spec)
    obj = _append(os.path.abspath(path), name)
    ad = obj.animation_data
    if ad is None or ad.action is None:
        raise ValueError("--controller %s: %s has no animation to follow." % (spec, name))
    return obj


def load_ground(spec, option="--ground"):
    """Import or append the ground; returns its mesh object (a ValueError
    sentence when it is not a mesh, or the file holds none or more than one)."""
    import bpy

    path, name = split_blend(spec)
    path = os.path.abspath(path)
    if name is not None:
        obj = _append(path, name)
        if obj.type != "MESH":
            raise ValueError("%s %s: %s is a %s, not a mesh." % (option, spec, name, obj.type.lower()))
        return obj
    before = {o.name for o in bpy.data.objects}
    ext = os.path.splitext(path)[1].lower()
    importer = {".fbx": bpy.ops.import_scene.fbx, ".obj": bpy.ops.wm.obj_import}.get(ext, bpy.ops.import_scene.gltf)
    try:
        result = importer(filepath=path)
    except RuntimeError as ex:
        lines = [line for line in str(ex).splitlines() if line.strip()]
        raise ValueError("%s %s cannot be imported (%s)." % (option, spec, lines[-1].strip() if lines else "error"))
    meshes = [o for o in _new_objects(before) if o.type == "MESH"] if result == {"FINISHED"} else []
    if len(meshes) != 1:
        raise ValueError("%s %s holds %s meshes: give a file with one, or FILE.blend:Object."
                         % (option, spec, len(meshes) or "no"))
    return meshes[0]
