"""Turn a converted BVH take (core.io.bvh_convert.BlenderMotion) into an armature and an action."""

import time

import bpy
import numpy as np
from mathutils import Matrix

from ...core.io.bvh_channels import keyed_channel_list, keyed_channels
from ..blender import armature_data, compat


def _fix_zero_length(motion):
    """Tails for bones still shorter than 1 mm after the parser's fix, as Blender's
    importer treats them: extend along the parent's direction, else along +Y."""
    heads, tails = motion.heads, motion.tails.copy()
    lengths = np.linalg.norm(tails - heads, axis=1)
    nonzero = lengths[lengths > 0]
    average = nonzero.mean() if len(nonzero) else 0.1
    zero_area = lengths < 0.001
    parents = np.asarray(motion.parents)
    for j in np.nonzero(zero_area)[0]:
        p = parents[j]
        step = (tails[p] - heads[p]) if p >= 0 else np.zeros(3)
        if p >= 0 and np.linalg.norm(step) > 0:
            tails[j] = tails[j] + step
        else:
            tails[j, 1] += average
    return tails, zero_area


class _Steps:
    """The seconds of each step of a build (into ``timings``, a dict, if
    given) and its stages' progress (to ``progress(stage, fraction)``)."""

    def __init__(self, progress, timings):
        self.progress, self.timings = progress, timings
        self.clock = time.perf_counter()

    def mark(self, stage):
        if self.timings is not None:
            now = time.perf_counter()
            self.timings[stage] = now - self.clock
            self.clock = now

    def tell(self, stage, fraction):
        if self.progress is not None:
            self.progress(stage, fraction)


def _make_bones(arm, motion, steps):
    """The take's bones as edit bones of ``arm`` (left in edit mode), made in
    bulk; returns their names in the take's joint order."""
    tails, zero_area = _fix_zero_length(motion)
    parents = np.asarray(motion.parents)
    # Connected when the child sits exactly on its parent's tail and has no
    # translation of its own (as Blender's importer does).
    has_parent = parents >= 0
    parent_or_self = np.where(has_parent, parents, np.arange(len(parents)))
    connect = (has_parent & ~motion.has_loc & ~zero_area[parent_or_self]
               & np.all(motion.tails[parent_or_self] == motion.heads, axis=1))
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = arm.edit_bones
    ebs = []
    every = max(1, len(motion.names) // 50)
    for j, bone_name in enumerate(motion.names):
        ebs.append(edit_bones.new(bone_name))
        if (j + 1) % every == 0:
            steps.tell("create", 0.2 * (j + 1) / len(motion.names))
    steps.mark("bones")
    # In bulk: setting a head or tail one bone at a time makes Blender visit
    # every edit bone to update connected children (work growing with the
    # square of the bone count).
    edit_bones.foreach_set("head", motion.heads.astype(np.float32).ravel())
    edit_bones.foreach_set("tail", tails.astype(np.float32).ravel())
    edit_bones.foreach_set("roll", np.zeros(len(ebs), dtype=np.float32))
    for j in np.nonzero(has_parent)[0].tolist():
        ebs[j].parent = ebs[parents[j]]
    # The flag alone: connected bones already sit on their parent's tail.
    edit_bones.foreach_set("use_connect", connect)
    return [eb.name for eb in ebs]


def _make_curves(obj, name, motion, names, created, steps):
    """The new action of ``obj`` (kept in ``created``) and its empty curves,
    one per keyed channel of the take; returns the curves."""
    action = created["action"] = compat.new_action(obj, name)
    paths = {}
    curve_channels = []
    for j, kind, k in keyed_channel_list(motion):
        path = paths.get((j, kind))
        if path is None:
            path = paths[(j, kind)] = armature_data.bone_path(names[j], kind)
        curve_channels.append((path, k, names[j]))
    curves = compat.ensure_curves(action, obj, curve_channels,
                                  progress=lambda f: steps.tell("create", 0.2 + 0.7 * f))
    steps.mark("curves")
    return curves


def build(context, name, motion, frames, collection=None, progress=None, timings=None, names_out=None):
    """Create the armature object and its action; return the object.

    ``frames`` (F,) are the scene frames of the keys. Bones are made in the
    source's axes with no roll and then turned by the axis conversion, so their
    rest orientation is the one Blender's BVH importer gives. Every step works
    on lists indexed by joint (no look-ups by name), so the work grows with the
    number of joints and frames, not faster (but Blender's own creation of
    F-Curves). ``progress(stage, fraction)`` is told about the stages "create"
    and "keys"; ``timings`` (a dict) gets the seconds of each step; ``names_out``
    (a list) gets the bones' names in the take's joint order. On any failure
    everything created so far is removed again.
    """
    collection = collection or context.collection
    created = {"arm": None, "obj": None, "action": None}
    steps = _Steps(progress, timings)
    try:
        arm = created["arm"] = bpy.data.armatures.new(name)
        obj = created["obj"] = bpy.data.objects.new(name, arm)
        collection.objects.link(obj)
        for other in context.view_layer.objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj

        names = _make_bones(arm, motion, steps)
        if names_out is not None:
            names_out[:] = names
        # The action's curves are made now, before leaving edit mode frees the
        # edit bones: Blender walks the existing curves for each new one, which
        # is several times quicker while they lie together in memory.
        curves = _make_curves(obj, name, motion, names, created, steps)
        conv = Matrix(motion.conversion.tolist()).to_4x4()
        arm.transform(conv)
        bpy.ops.object.mode_set(mode="OBJECT")
        steps.tell("create", 1.0)
        steps.mark("object mode")

        rest = armature_data.rest_matrices(arm, names)
        _channels, rows = keyed_channels(motion, rest[:, :3, :3])
        steps.mark("convert keys")
        if curves:
            compat.write_keys(curves, frames, rows, progress=lambda f: steps.tell("keys", f))
        steps.mark("write keys")
        return obj
    except BaseException:
        if context.mode != "OBJECT" and created["obj"] is not None:
            try:
                bpy.ops.object.mode_set(mode="OBJECT")
            except RuntimeError:
                pass
        remove_created(created)
        raise


def add_action(obj, names, rest, name, motion, frames, progress=None):
    """Key another take of the same skeleton as a new action of ``obj`` (bones
    ``names`` in the take's joint order, with rest matrices ``rest``, as
    :func:`build` made them) and make ``obj`` play it; return the action. On
    failure the action is removed again."""
    action = compat.new_action(obj, name)
    try:
        curve_channels = [(armature_data.bone_path(names[j], kind), k, names[j])
                          for j, kind, k in keyed_channel_list(motion)]
        curves = compat.ensure_curves(action, obj, curve_channels,
                                      progress=(lambda f: progress("create", f)) if progress else None)
        _channels, rows = keyed_channels(motion, rest[:, :3, :3])
        if curves:
            compat.write_keys(curves, frames, rows, progress=(lambda f: progress("keys", f)) if progress else None)
    except BaseException:
        bpy.data.actions.remove(action)
        raise
    return action


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
