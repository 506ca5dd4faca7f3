"""Rigs that cannot give a right result, and rigs that need a decision
: a rig lying on its side is refused, one whose bones are 100 times
the size of its mesh and one whose rest pose is an A-pose each get one
sentence, one with too few mapped joints is refused; the bake's size can be
set by hand and is in the report."""

import json
import math
import os

import bpy
import numpy as np
import pytest

from tools import rig_trial, rigs

import bl_helpers as H


@pytest.fixture
def scene_with_take():
    take, controller = rig_trial.sample_scene(24)
    return take, controller


def _actions(obj):
    return obj.animation_data.action if obj.animation_data else None


def _bake(rig, folder, **kw):
    path = os.path.join(folder, "report.json")
    bpy.ops.motion_matching.bake(armature=rig.name, report_path=path, **kw)
    with open(path) as fh:
        return json.load(fh)


def test_a_rig_lying_on_its_side_is_refused(scene_with_take):
    take, _controller = scene_with_take
    rig, _mesh = rigs.build("Lying")
    rig.rotation_euler = (math.pi / 2.0, math.pi / 2.0, 0.0)     # the head along +X
    bpy.context.view_layer.update()
    actions = len(bpy.data.actions)
    with pytest.raises(RuntimeError, match="does not stand upright .* lies on its side"):
        bpy.ops.motion_matching.retarget(source=take.name, target=rig.name)
    with pytest.raises(RuntimeError, match="does not stand upright"):
        bpy.ops.motion_matching.bake(armature=rig.name)
    assert len(bpy.data.actions) == actions and _actions(rig) is None


def test_a_rig_100_times_its_mesh_is_named(scene_with_take, workdir):
    """Bones in centimetres with the object's scale 1 (the mesh in metres):
    the retarget and the bake say so."""
    take, _controller = scene_with_take
    rig, mesh = rigs.build("Huge")
    world = mesh.matrix_world.copy()
    mesh.parent = None
    mesh.matrix_world = world
    rig.scale = (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    bridge = H.addon_module("bridge.retarget.retarget")
    _action, text, warnings = bridge.retarget(bpy.context, take, rig)
    said = [w for w in warnings if "times the size of the mesh they skin" in w]
    assert len(said) == 1 and "0.01" in said[0], warnings
    ratio = float(said[0].split(" are ")[1].split(" times")[0])
    assert 60 < ratio < 140
    report = _bake(rig, workdir)
    assert any("times the size of the mesh" in w for w in report["warnings"]), report["warnings"]
    # The same rig at its right scale says nothing of its size.
    rig.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    _action, _text, warnings = bridge.retarget(bpy.context, take, rig)
    assert not [w for w in warnings if "size of the mesh" in w]


def test_too_few_mapped_joints_are_refused(scene_with_take):
    take, _controller = scene_with_take
    rig, _mesh = rigs.build("Few")
    bridge = H.addon_module("bridge.retarget.mapping")
    bridge.store_mapping(rig, {"Hips": rigs.PREFIX + "Hips", "Spine": rigs.PREFIX + "Spine",
                               "Head": rigs.PREFIX + "Head"})
    with pytest.raises(RuntimeError, match="(?i)mapping of the target 'Few'.*LeftUpperArm"):
        bpy.ops.motion_matching.retarget(source=take.name, target=rig.name)
    assert _actions(rig) is None


def test_an_a_pose_rest_gets_a_computed_tpose_and_says_so(scene_with_take):
    """With no stored T-pose, an A-pose rest is not used as the T-pose: the
    computed one is (not stored), the limbs then follow the source within 3
    degrees beyond the rest poses' difference, and one sentence says so."""
    take, _controller = scene_with_take
    rig, mesh = rigs.build("APose", pose="A")
    bridge = H.addon_module("bridge.retarget.retarget")
    _action, _text, warnings = bridge.retarget(bpy.context, take, rig)
    said = [w for w in warnings if "A-pose" in w]
    assert len(said) == 1 and "45 degrees below level" in said[0] and "Make T-Pose" in said[0], warnings
    assert not len(rig.data.motion_matching.tpose)
    fig, _heads, _names = rig_trial.retarget_figures(take, rig, mesh, mesh_frames=8)
    assert fig["angle_excess_deg"] <= 3.0 and fig["lowest_m"] >= -0.02, fig
    # The T-pose rest of the same character says nothing of it.
    rig2, _mesh2 = rigs.build("TPose")
    _action, _text, warnings = bridge.retarget(bpy.context, take, rig2)
    assert not [w for w in warnings if "A-pose" in w]


def test_bake_size_can_be_set_and_is_reported(scene_with_take, workdir):
    take, _controller = scene_with_take
    rig, _mesh = rigs.build("Sized")
    auto = _bake(rig, workdir)
    assert auto["size_ratio"] == pytest.approx(0.88 / 0.968, abs=0.02)
    assert rig["mm_size_ratio"] == pytest.approx(auto["size_ratio"])     # for the Retarget panel
    fixed = _bake(rig, workdir, scale=1.0)
    assert fixed["size_ratio"] == 1.0 and rig["mm_size_ratio"] == 1.0
    assert "size" in bpy.context.scene.motion_matching.last_bake_report


def test_uneven_object_scale_is_refused(scene_with_take):
    take, _controller = scene_with_take
    rig, _mesh = rigs.build("Uneven")
    rig.scale = (0.01, 0.02, 0.01)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="target 'Uneven' is scaled unevenly or mirrored: apply its scale"):
        bpy.ops.motion_matching.retarget(source=take.name, target=rig.name)
    assert _actions(rig) is None and "mm_size_ratio" not in rig.keys()


def test_a_rig_turned_and_scaled_by_its_parent_moves_as_one_turned_by_its_object(scene_with_take):
    """The importer's +90 degrees about X and 0.01 on a parent Empty instead
    of the armature object: the same world motion within 1 mm."""
    from tools import rig_measure

    take, _controller = scene_with_take
    own, _m1 = rigs.build("Own")
    held, _m2 = rigs.build("Held")
    parent = bpy.data.objects.new("Importer", None)
    bpy.context.scene.collection.objects.link(parent)
    parent.rotation_euler = held.rotation_euler
    parent.scale = held.scale
    held.rotation_euler = (0.0, 0.0, 0.0)
    held.scale = (1.0, 1.0, 1.0)
    held.parent = parent
    bpy.context.view_layer.update()
    np.testing.assert_allclose(np.array(held.matrix_world), np.array(own.matrix_world), atol=1e-9)
    names = [b.name for b in own.data.bones]
    frames = np.array([1.0, 700.0, 2500.0, 5000.0])
    for rig in (own, held):
        rig_trial.retarget(take, rig)
    a = rig_measure.world_heads(own, frames, names)
    b = rig_measure.world_heads(held, frames, names)
    assert np.abs(a - b).max() < 1e-3
    # And both follow the source in world space: the hips move as the source's, scaled by the size ratio.
    src = rig_measure.world_heads(take, frames, [rig_measure.mapping(take)["Hips"]])[:, 0]
    hips = a[:, names.index(rigs.PREFIX + "Hips")]
    ratio = own["mm_size_ratio"]
    np.testing.assert_allclose(hips[:, :2] - hips[0, :2], ratio * (src[:, :2] - src[0, :2]), atol=0.05)


def test_the_mesh_not_the_bones_stands_on_the_floor(scene_with_take, workdir):
    """Soles 4 cm thicker under the same bones (shoes): after a bake the mesh's
    soles, not the toe joints, stand on the floor while the character stands."""
    take, controller = scene_with_take
    rig, mesh = rigs.build("Shod")
    co = np.empty(len(mesh.data.vertices) * 3, dtype=np.float32)
    mesh.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    co[co[:, 1] < 2.0, 1] -= 4.0              # the mesh is in the rig's frame: Y up, centimetres
    mesh.data.vertices.foreach_set("co", co.ravel())
    mesh.data.update()
    rig_trial.auto_map(rig)
    report = _bake(rig, workdir)
    fig, _heads, _names = rig_trial.bake_figures(rig, mesh, controller, report, 24)
    assert abs(fig["soles_m"]) <= 0.02 and fig["lowest_m"] >= -0.02, fig
    assert report["sole_shift_m"] == pytest.approx(0.04, abs=0.015)
