"""Helpers for Blender tests: world joint positions, imports, datablock counts."""

import os

import numpy as np


def datablock_counts():
    import bpy

    return {k: len(getattr(bpy.data, k)) for k in ("objects", "armatures", "actions", "texts", "meshes")}


def new_objects(before):
    import bpy

    return [o for o in bpy.data.objects if o.name not in before]


def pose_heads(obj, frames, names=None):
    """World positions (F, J, 3) of pose bone heads after frame_set, bones in
    ``names`` order (default: the armature's bone order)."""
    import bpy

    scene = bpy.context.scene
    names = names or [pb.name for pb in obj.pose.bones]
    order = {pb.name: i for i, pb in enumerate(obj.pose.bones)}
    idx = [order[n] for n in names]
    out = np.empty((len(frames), len(names), 3))
    buf = np.empty(len(obj.pose.bones) * 3, dtype=np.float32)
    for i, f in enumerate(frames):
        fi = int(np.floor(f))
        scene.frame_set(fi, subframe=float(f - fi))
        obj.pose.bones.foreach_get("head", buf)
        heads = buf.reshape(-1, 3)[idx].astype(np.float64)
        mw = np.array(obj.matrix_world)
        out[i] = heads @ mw[:3, :3].T + mw[:3, 3]
    return out


def import_ours(path, **kw):
    import bpy

    before = set(o.name for o in bpy.data.objects)
    result = bpy.ops.motion_matching.import_bvh(filepath=path, **kw)
    assert result == {"FINISHED"}
    objs = [o for o in new_objects(before) if o.type == "ARMATURE"]
    assert len(objs) == 1
    return objs[0]


def import_blender(path, **kw):
    import bpy

    before = set(o.name for o in bpy.data.objects)
    kw.setdefault("rotate_mode", "QUATERNION")
    result = bpy.ops.import_anim.bvh(filepath=path, **kw)
    assert result == {"FINISHED"}
    objs = [o for o in new_objects(before) if o.type == "ARMATURE"]
    assert len(objs) == 1
    return objs[0]


def addon_module(name):
    """A module of the installed add-on, e.g. addon_module("bridge.blender.compat")."""
    import importlib

    from tools.addon_session import MODULE

    return importlib.import_module(MODULE + "." + name)


def key_times(obj):
    """Frames of the keys of the first curve of the object's action."""
    compat = addon_module("bridge.blender.compat")
    curves = compat.fcurves(obj.animation_data.action, obj)
    return compat.read_curve(curves[0])["co"][:, 0].astype(np.float64)


# Blender 4.2's bpy crashes now and then inside its own glTF code (exporter,
# importer, the depsgraph after them) in a process that has opened many files
# before; these modules run there in a pytest process of their own, started by
# test_in_own_process.py. ISOLATED_ENV marks that process.
OWN_PROCESS_ON = ((4, 2),)
OWN_PROCESS = ("test_rigs.py", "test_preview_character.py")
ISOLATED_ENV = "MM_TESTS_IN_OWN_PROCESS"


def needs_own_process():
    """True when this Blender runs :data:`OWN_PROCESS` in a process of their own."""
    import bpy

    return tuple(bpy.app.version[:2]) in OWN_PROCESS_ON and not os.environ.get(ISOLATED_ENV)


def meta_rig_target(source):
    """Rigify's human meta-rig mapped from ``source`` (the sample take, given its
    T-pose) and in its T-pose: the other rig the retarget tests bake onto."""
    import bpy

    from sample_paths import SAMPLE_TPOSE

    bpy.context.view_layer.objects.active = source
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.active_object
    assert bpy.ops.motion_matching.auto_map_bones() == {"FINISHED"}
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}
    return rig
