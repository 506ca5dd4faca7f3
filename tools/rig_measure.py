"""Blender-side readings for core.measure.rig_metrics: world joint heads per frame in
bulk, the skinned mesh's lowest point per frame, T-pose heads, the stored
bone mapping. Reads only; developer tool for tests and benches (needs the
add-on enabled, see tools.addon_session)."""

import importlib

import numpy as np

from . import addon_session


def _addon(name):
    return importlib.import_module(addon_session.MODULE + "." + name)


def mapping(obj):
    """The bone mapping stored on the armature: {canonical joint: bone}."""
    return {i.name: i.bone for i in obj.data.motion_matching.bone_map if i.bone}


def world_heads(obj, frames, names=None):
    """World heads (F, J, 3) of the pose bones on ``frames``, bones in ``names``
    order (default: parents first), in bulk: the action's curves sampled and
    chained through the rest offsets as Blender evaluates them (no
    constraints), then the object's world matrix (not animated)."""
    data = _addon("bridge.blender.armature_data")
    ad = obj.animation_data
    action = ad.action if ad else None
    frames = np.asarray(frames, dtype=np.float64)
    order, _parents, _rest, pose = data.armature_pose(obj, action, frames)
    if names is not None:
        pos = {n: i for i, n in enumerate(order)}
        pose = pose[:, [pos[n] for n in names]]
    return pose[..., :3, 3] @ np.array(obj.matrix_world)[:3, :3].T + np.array(obj.matrix_world)[:3, 3]


def frame_set_heads(obj, frames, names):
    """World heads (F, J, 3) after ``scene.frame_set`` on each frame (the check
    for :func:`world_heads`); the current frame is put back."""
    import bpy

    scene = bpy.context.scene
    keep = scene.frame_current
    out = np.empty((len(frames), len(names), 3))
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            mw = np.array(obj.matrix_world)
            heads = np.array([obj.pose.bones[n].head for n in names], dtype=np.float64)
            out[i] = heads @ mw[:3, :3].T + mw[:3, 3]
    finally:
        scene.frame_set(keep)
    return out


def mesh_world_points(mesh_obj):
    """World positions (V, 3) of the evaluated (deformed) mesh now."""
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    ev = mesh_obj.evaluated_get(dg)
    me = ev.to_mesh()
    try:
        co = np.empty(len(me.vertices) * 3, dtype=np.float32)
        me.vertices.foreach_get("co", co)
        mw = np.array(ev.matrix_world)
    finally:
        ev.to_mesh_clear()
    return co.reshape(-1, 3).astype(np.float64) @ mw[:3, :3].T + mw[:3, 3]


def mesh_lowest(mesh_obj, frames):
    """The lowest world height (F,) of the deformed mesh on each frame."""
    import bpy

    scene = bpy.context.scene
    keep = scene.frame_current
    out = np.empty(len(frames))
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            out[i] = mesh_world_points(mesh_obj)[:, 2].min()
    finally:
        scene.frame_set(keep)
    return out


def mesh_rest_lowest(mesh_obj):
    """The lowest world height of the mesh as modelled (no deformation)."""
    mw = np.array(mesh_obj.matrix_world)
    co = np.empty(len(mesh_obj.data.vertices) * 3, dtype=np.float32)
    mesh_obj.data.vertices.foreach_get("co", co)
    return float((co.reshape(-1, 3).astype(np.float64) @ mw[:3, :3].T + mw[:3, 3])[:, 2].min())


def tpose_heads(obj):
    """{bone: world head} of the T-pose the retarget uses for ``obj``: the
    stored one when there is one, else the rest pose."""
    mw = np.array(obj.matrix_world)
    stored = obj.data.motion_matching.tpose
    if len(stored):
        pts = {item.name: np.array(item.head, dtype=np.float64) for item in stored}
    else:
        pts = {b.name: np.array(b.head_local, dtype=np.float64) for b in obj.data.bones}
    return {k: v @ mw[:3, :3].T + mw[:3, 3] for k, v in pts.items()}


def joint_heads(obj, heads, names, joints):
    """{joint: heads[..., bone, :]} for the mapped ``joints`` of ``obj``
    from heads (F, J, 3) in ``names`` order."""
    m = mapping(obj)
    pos = {n: i for i, n in enumerate(names)}
    return {j: heads[:, pos[m[j]]] for j in joints if j in m and m[j] in pos}
