"""Try the add-on on a character as a user would, and measure the result in
world space (core.measure.rig_metrics): auto-map, retarget of the sample take, bake of
the built-in showcase. Used by bench/bench_rigs.py and tests/blender/test_rigs.py.
Developer tool; needs the add-on enabled (tools.addon_session)."""

import json
import os

import numpy as np

from core.skeleton import humanoid_joints
from core.measure import rig_metrics as rm

from . import addon_session, rig_measure

SAMPLES = os.path.join(addon_session.REPO, "samples")


class Failed(Exception):
    """An operator did not finish."""


def call(op, **kw):
    result = op(**kw)
    if result != {"FINISHED"}:
        raise Failed("%s returned %s" % (op.idname_py(), result))


def sample_scene(fps=24, database=True):
    """A new empty scene with the sample take (virtual root, T-pose loaded),
    and with ``database`` its tags, database and a controller on the showcase
    path (the scene's range follows it). Returns (take, controller or None)."""
    import bpy

    ops = bpy.ops.motion_matching
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = fps
    call(ops.import_bvh, filepath=os.path.join(SAMPLES, "jl_mm_run.bvh"), global_scale=0.01,
         add_virtual_root=True)
    take = bpy.context.active_object
    call(ops.load_tpose, filepath=os.path.join(SAMPLES, "jl_mm_tpose.bvh"), global_scale=0.01)
    if not database:
        return take, None
    call(ops.import_dance_card, filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml"))
    bpy.context.view_layer.objects.active = take
    call(ops.auto_tag)
    call(ops.database_add_action)
    call(ops.build_database)
    call(ops.add_scenario_controller, scenario="showcase", frame_start=1, update_scene_range=True)
    controller = bpy.context.active_object
    scene.motion_matching.controller = controller
    return take, controller


def _activate(obj):
    import bpy

    for o in bpy.context.view_layer.objects:
        o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def auto_map(rig):
    """Run Auto-Map on ``rig``; returns the number of canonical joints mapped."""
    import bpy

    _activate(rig)
    call(bpy.ops.motion_matching.auto_map_bones)
    return len(rig_measure.mapping(rig))


def retarget(take, rig):
    """The sample take onto ``rig`` (its mapping and T-pose as they are)."""
    import bpy

    call(bpy.ops.motion_matching.retarget, source=take.name, target=rig.name)


def bake(rig, folder):
    """The scene's controller baked onto ``rig``; returns the report."""
    import bpy

    path = os.path.join(folder, "report_%s.json" % "".join(c if c.isalnum() else "_" for c in rig.name))
    call(bpy.ops.motion_matching.bake, armature=rig.name, report_path=path)
    with open(path) as fh:
        return json.load(fh)


def _frames_of(obj):
    cmp = __import__(addon_session.MODULE + ".bridge.blender.compat", fromlist=["fcurves"])
    curves = cmp.fcurves(obj.animation_data.action, obj)
    return np.unique(np.concatenate([cmp.read_curve(fc)["co"][:, 0] for fc in curves]))


def retarget_figures(take, rig, mesh, mesh_frames=40):
    """World-space figures of the retarget now on ``rig``: the angle excess of
    the limbs over every frame of the take, and the mesh's lowest point on
    ``mesh_frames`` frames spread over it. Returns (figures, world heads of
    the rig (F, J, 3), bone names)."""
    frames = _frames_of(take)
    s_names = [b.name for b in take.data.bones]
    t_names = [b.name for b in rig.data.bones]
    s_heads = rig_measure.world_heads(take, frames, s_names)
    t_heads = rig_measure.world_heads(rig, frames, t_names)
    joints = [j for j in humanoid_joints.CANONICAL]
    src = rig_measure.joint_heads(take, s_heads, s_names, joints)
    tgt = rig_measure.joint_heads(rig, t_heads, t_names, joints)
    s_rest = rig_measure.tpose_heads(take)
    t_rest = rig_measure.tpose_heads(rig)
    s_map, t_map = rig_measure.mapping(take), rig_measure.mapping(rig)
    angles = rm.angle_excess(src, tgt, {j: s_rest[b] for j, b in s_map.items()},
                             {j: t_rest[b] for j, b in t_map.items()})
    out = {"angle_excess_deg": angles["excess_deg"], "angle_max_deg": angles["max_deg"],
           "per_segment": angles["per_segment"]}
    if mesh is not None:
        pick = frames[np.linspace(0, len(frames) - 1, mesh_frames).round().astype(int)]
        out["lowest_m"] = float(rig_measure.mesh_lowest(mesh, pick).min())
    return out, t_heads, t_names


def bake_figures(rig, mesh, controller, report, fps):
    """World-space figures of the bake now on ``rig`` over the scene's range:
    hips travel against the controller's path, their horizontal distance,
    the mesh's lowest point on every frame and the soles while standing,
    next to the report's tracking figures. Returns (figures, world heads,
    bone names)."""
    import bpy

    scene = bpy.context.scene
    frames = np.arange(scene.frame_start, scene.frame_end + 1, dtype=np.float64)
    names = [b.name for b in rig.data.bones]
    heads = rig_measure.world_heads(rig, frames, names)
    hips = heads[:, names.index(rig_measure.mapping(rig)["Hips"])]
    cb = __import__(addon_session.MODULE + ".bridge.bake.controller", fromlist=["x"])
    ctrl, _facing = cb.sample_controller(bpy.context, controller, frames)
    out = rm.travel(hips, ctrl)
    out["report_tracking_mean_m"] = report["tracking_error_mean_m"]
    out["report_tracking_max_m"] = report["tracking_error_max_m"]
    if mesh is not None:
        lowest = rig_measure.mesh_lowest(mesh, frames)
        standing = rm.standing_frames(hips, fps) & rm.standing_frames(ctrl, fps)
        out["lowest_m"] = float(lowest.min())
        out["soles_m"] = rm.soles_height(lowest, standing)
        out["standing_frames"] = int(standing.sum())
    return out, heads, names
