"""Ctrl+Z after each data-changing operator brings the scene back.

In the interface Blender pushes an undo step after every operator flagged
UNDO; a background process does not, so the test pushes it as the interface
would, then undoes and redoes. Everything an operator changes must therefore
live in Blender's data (nothing in module state that undo would not restore)."""

import bpy
import numpy as np

from sample_paths import SAMPLE_TAKE, SAMPLE_TPOSE
import bl_helpers as H


def _state(obj_name=None):
    scene = bpy.context.scene
    obj = bpy.data.objects.get(obj_name) if obj_name else None
    pose = None
    if obj is not None and obj.type == "ARMATURE":
        scene.frame_set(scene.frame_current)
        pose = tuple(round(v, 6) for pb in obj.pose.bones for v in pb.matrix.translation)
        pose += (len(obj.data.bones), obj.animation_data.action.name if obj.animation_data and obj.animation_data.action else "")
        pose += (len(obj.animation_data.action.motion_matching.tags) if obj.animation_data and obj.animation_data.action else 0,)
        pose += (len(obj.data.motion_matching.tpose),
                 tuple((i.name, i.bone) for i in obj.data.motion_matching.bone_map))
    return (len(bpy.data.objects), len(bpy.data.actions), "motion_matching_database" in scene,
            len(scene.motion_matching.entries), pose)


def _undoable(op, obj_name=None, **kw):
    bpy.ops.ed.undo_push(message="before")
    before = _state(obj_name)
    assert op(**kw) == {"FINISHED"}
    bpy.ops.ed.undo_push(message=op.idname_py())
    after = _state(obj_name)
    assert after != before, "the operator changed nothing"
    assert bpy.ops.ed.undo() == {"FINISHED"}
    assert _state(obj_name) == before, op
    assert bpy.ops.ed.redo() == {"FINISHED"}
    assert _state(obj_name) == after


def test_data_changing_operators_support_undo():
    changing = ["import_bvh", "add_virtual_root", "load_tpose", "tag_add", "tag_remove", "auto_tag",
                "tags_from_markers", "import_dance_card", "database_add_action", "database_remove_action",
                "reset_features", "build_database", "import_database", "add_controller",
                "add_scenario_controller", "bake", "auto_map_bones", "load_bone_map", "make_tpose", "retarget"]
    for name in changing:
        cls = getattr(bpy.types, "MOTION_MATCHING_OT_" + name)
        assert "UNDO" in cls.bl_options and "REGISTER" in cls.bl_options, name


def test_undo_after_each_operator():
    win = bpy.context.window_manager.windows[0]
    with bpy.context.temp_override(window=win, screen=win.screen, area=win.screen.areas[0]):
        bpy.ops.ed.undo_push(message="start")
        ops = bpy.ops.motion_matching
        _undoable(ops.import_bvh, filepath=SAMPLE_TAKE, global_scale=0.01)
        name = bpy.context.active_object.name
        _undoable(ops.add_virtual_root, name)
        _undoable(ops.load_tpose, name, filepath=SAMPLE_TPOSE, global_scale=0.01)
        _undoable(ops.tag_add, name, name="walk", frame_start=100, frame_end=400)
        _undoable(ops.auto_tag, name)
        _undoable(ops.database_add_action, name)
        _undoable(ops.build_database, name)
        _undoable(ops.add_scenario_controller, name, scenario="straight_walk", update_scene_range=True)
        scene = bpy.context.scene
        scene.motion_matching.controller = bpy.context.active_object
        scene.motion_matching.bake_armature = bpy.data.objects[name]
        bpy.context.view_layer.objects.active = bpy.data.objects[name]
        scene.frame_current = 50
        scene.frame_end = 120
        _undoable(ops.bake, name)
        # Retarget the take onto a second skeleton (the T-pose file's armature).
        assert ops.import_bvh(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
        target = bpy.context.active_object.name
        bpy.ops.ed.undo_push(message="target")
        _undoable(ops.auto_map_bones, target)
        _undoable(ops.retarget, target, source=name, target=target)
