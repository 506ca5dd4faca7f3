"""Turn a converted BVH take (core.bvh.BlenderMotion) into an armature and an action."""

import bpy
import numpy as np
from mathutils import Matrix

from . import armature_data, compat


def _fix_zero_length(motion):
    """Tails for bones still shorter than 1 mm after the parser's fix, as Blender's
    importer treats them: extend along the parent's direction, else along +Y."""
    heads, tails = motion.heads, motion.tails.copy()
    lengths = np.linalg.norm(tails - heads, axis=1)
    nonzero = lengths[lengths > 0]
    average = nonzero.mean() if len(nonzero) else 0.1
    zero_area = np.zeros(len(heads), dtype=bool)
    for j, p in enumerate(motion.parents):
        if np.linalg.norm(heads[j] - tails[j]) < 0.001:
            zero_area[j] = True
            step = (tails[p] - heads[p]) if p >= 0 else np.zeros(3)
            if p >= 0 and np.linalg.norm(step) > 0:
                tails[j] = tails[j] + step
            else:
                tails[j, 1] += average
    return tails, zero_area


def build(context, name, motion, frames, collection=None):
    """Create the armature object and its action; return the object.

    ``frames`` (F,) are the scene frames of the keys. Bones are made in the
    source's axes with no roll and then turned by the axis conversion, so their
    rest orientation is the one Blender's BVH importer gives.
    On any failure everything created so far is removed again.
    """
    collection = collection or context.collection
    created = {"arm": None, "obj": None, "action": None}
    try:
        arm = created["arm"] = bpy.data.armatures.new(name)
        obj = created["obj"] = bpy.data.objects.new(name, arm)
        collection.objects.link(obj)
        for other in context.view_layer.objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj

        tails, zero_area = _fix_zero_length(motion)
        bpy.ops.object.mode_set(mode="EDIT")
        ebs = []
        for j, bone_name in enumerate(motion.names):
            eb = arm.edit_bones.new(bone_name)
            eb.head = motion.heads[j]
            eb.tail = tails[j]
            eb.roll = 0.0
            ebs.append(eb)
        for j, p in enumerate(motion.parents):
            if p < 0:
                continue
            ebs[j].parent = ebs[p]
            # Connected when the child sits on its parent's tail and has no
            # translation of its own (as Blender's importer does).
            if (not motion.has_loc[j] and not zero_area[p]
                    and np.allclose(motion.tails[p], motion.heads[j], atol=0.0, rtol=0.0)):
                ebs[j].use_connect = True
        names = [eb.name for eb in ebs]
        conv = Matrix(motion.conversion.tolist()).to_4x4()
        arm.transform(conv)
        bpy.ops.object.mode_set(mode="OBJECT")

        rest = armature_data.rest_matrices(arm, names)
        locs, quats = _basis(motion, rest)
        action = created["action"] = compat.new_action(obj, name)
        channels, columns = [], []
        for j, bone_name in enumerate(names):
            if motion.has_loc[j]:
                path = armature_data.bone_path(bone_name, "location")
                channels += [(path, k, bone_name) for k in range(3)]
                columns.append(locs[:, j])
            if motion.has_rot[j]:
                path = armature_data.bone_path(bone_name, "rotation_quaternion")
                channels += [(path, k, bone_name) for k in range(4)]
                columns.append(quats[:, j])
        if channels:
            compat.write_curves(action, obj, channels, frames, np.concatenate(columns, axis=1))
        return obj
    except BaseException:
        if context.mode != "OBJECT" and created["obj"] is not None:
            try:
                bpy.ops.object.mode_set(mode="OBJECT")
            except RuntimeError:
                pass
        remove_created(created)
        raise


def _basis(motion, rest):
    from ..core.bvh import bone_basis

    return bone_basis(motion, rest[:, :3, :3])


def remove_created(created):
    """Remove datablocks made by a failed operation (dict of name -> ID or None)."""
    obj = created.get("obj")
    if obj is not None:
        bpy.data.objects.remove(obj)
    action = created.get("action")
    if action is not None:
        bpy.data.actions.remove(action)
    arm = created.get("arm")
    if arm is not None:
        bpy.data.armatures.remove(arm)
