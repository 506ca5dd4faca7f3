"""Live preview on a character chosen as the Bake armature (the demo's
Mixamo-style rig through Blender's glTF and FBX importers): the preview poses
it as Bake keys it (retargeted, the feet planted again on its own legs), on
every frame and after edits; a rig whose joints cannot be mapped is refused."""

import bpy
import numpy as np
import pytest

import bl_helpers as H
from test_preview_follow import _followed
from tools import rig_file, rigs

FRAMES = (1, 47, 96, 150, 200)


def _character(tmp_path, fmt):
    path = rig_file.write(fmt, str(tmp_path), "Hero")
    new = rigs.import_gltf(path) if fmt == "glb" else rigs.import_fbx(path)
    return new[0]


def _poses(obj, frames=FRAMES):
    """World matrices (B, 4, 4) of every pose bone on each frame (frame_set, as a user scrubs)."""
    scene = bpy.context.scene
    out = {}
    for f in frames:
        scene.frame_set(f)
        bpy.context.view_layer.update()
        out[f] = np.array([np.array(obj.matrix_world @ pb.matrix) for pb in obj.pose.bones])
    return out


def _baked(obj):
    """The preview stopped, Bake run: the keys Bake gives ``obj``, on FRAMES."""
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    assert obj.animation_data.action is not None
    return _poses(obj)


def _same(a, b, tol=1e-5):
    for f in FRAMES:
        assert np.abs(a[f] - b[f]).max() < tol, (f, np.abs(a[f] - b[f]).max())


def _moved(a, b):
    return max(np.abs(a[f] - b[f]).max() for f in FRAMES)


@pytest.mark.parametrize("fmt", ["glb", "fbx"])
def test_preview_on_a_character_equals_its_bake_and_follows(tmp_path, take_on_path, fmt):
    source, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 200
    hero = _character(tmp_path, fmt)
    scene.motion_matching.bake_armature = hero
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    mm = scene.motion_matching
    assert mm.preview_active and mm.preview_armature == hero
    first = _poses(hero)
    _same(first, _baked(hero))
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}       # the baked action set aside
    assert mm.preview_armature == hero and hero.animation_data.action is None
    _same(first, _poses(hero))
    # The overlay's data is there, in the world near the character's hips.
    scene.frame_set(96)
    bpy.context.view_layer.update()
    hips = np.array(hero.matrix_world @ hero.pose.bones[rigs.PREFIX + "Hips"].head)
    wanted, _matched, toes, _locked, _contacts = H.addon_module("bridge.preview.preview").overlay_lines(scene)
    assert len(wanted) > 10 and np.isfinite(toes).all()
    assert np.linalg.norm(wanted[0, :2] - hips[:2]) < 0.3, (wanted[0], hips)
    # An edit the preview follows: a bake setting.
    mm.bake_settings.search_interval = 0.5
    _followed(scene)
    edited = _poses(hero)
    assert _moved(first, edited) > 1e-3
    # An edit of the controller's keys: the second half of the path 0.4 m to the side.
    compat = H.addon_module("bridge.blender.compat")
    fc = next(fc for fc in compat.fcurves(ctrl.animation_data.action, ctrl)
              if fc.data_path == "location" and fc.array_index == 1)
    keys = compat.read_curve(fc, ("co",))["co"].astype(np.float32)
    co = keys.copy()
    co[co[:, 0] > 100, 1] += 0.4
    fc.keyframe_points.foreach_set("co", co.ravel())
    fc.update()
    _followed(scene)
    moved = _poses(hero)
    assert _moved(edited, moved) > 1e-3
    _same(moved, _baked(hero))


def test_preview_refuses_a_rig_it_cannot_map_in_one_sentence(take_on_path):
    source, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    arm = bpy.data.armatures.new("Stick")
    stick = bpy.data.objects.new("Stick", arm)
    scene.collection.objects.link(stick)
    bpy.context.view_layer.objects.active = stick
    bpy.ops.object.mode_set(mode="EDIT")
    for name, head, tail in (("a", (0, 0, 0), (0, 0, 1)), ("b", (0, 0, 1), (0, 0, 2))):
        bone = arm.edit_bones.new(name)
        bone.head, bone.tail = head, tail
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.motion_matching.bake_armature = stick
    preview = H.addon_module("bridge.preview.preview")
    errors = H.addon_module("core.errors")
    with pytest.raises(errors.MotionMatchingError) as caught:
        preview.start(bpy.context)
    text = str(caught.value)
    assert text.count(". ") == 0 and text.endswith(".") and "\n" not in text, text
    assert not scene.motion_matching.preview_active and scene.motion_matching.preview_armature is None
    with pytest.raises(RuntimeError, match="Stick"):          # the operator's ERROR report, in background
        bpy.ops.motion_matching.toggle_preview()
    assert not scene.motion_matching.preview_active
    # The database skeleton itself is still previewed.
    scene.motion_matching.bake_armature = source
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}


def test_choosing_a_character_while_previewing_the_skeleton(tmp_path, take_on_path):
    """The preview follows the Bake armature from the database skeleton to a
    character: the skeleton gets its action back, the character is posed as Bake keys it."""
    source, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 200
    take = source.animation_data.action
    hero = _character(tmp_path, "glb")
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert source.animation_data.action is None
    scene.motion_matching.bake_armature = hero
    _followed(scene)
    assert scene.motion_matching.preview_armature == hero and source.animation_data.action == take
    _same(_poses(hero), _baked(hero))


def test_preview_on_a_generated_rigify_rig_keys_its_fk_controls(rigify, take_on_path):
    """A generated Rigify rig mapped to its FK controls: the preview turns the
    limbs to FK as Bake does (and back on Stop) and shows what Bake keys."""
    from sample_paths import SAMPLE_TPOSE

    source, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    scene.frame_end = 200
    bpy.context.view_layer.objects.active = source
    assert bpy.ops.motion_matching.load_tpose(filepath=SAMPLE_TPOSE, global_scale=0.01) == {"FINISHED"}
    bpy.ops.object.select_all(action="DESELECT")
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.active_object
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.active_object
    assert rig != meta and "upper_arm_fk.L" in rig.pose.bones
    assert bpy.ops.motion_matching.auto_map_bones(prefer="FK") == {"FINISHED"}
    assert bpy.ops.motion_matching.make_tpose() == {"FINISHED"}
    switch = rig.pose.bones["upper_arm_parent.L"]
    before = switch["IK_FK"]
    scene.motion_matching.bake_armature = rig
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert switch["IK_FK"] == 1.0
    shown = _poses(rig)
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert switch["IK_FK"] == before
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    _same(shown, _poses(rig))
