"""motion_matching.export_baked with the armature as the only object in the
scene (no controller, nothing else selected): every format, twice in a row,
leaves the scene exactly as it was; a folder or an empty file name is refused."""

import os

import bpy
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H


def _alone():
    """The sample take imported with the virtual root: the scene's only object."""
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert list(bpy.context.scene.objects) == [obj]
    return obj


def _state():
    scene, vl = bpy.context.scene, bpy.context.view_layer
    return {
        "range": (scene.frame_start, scene.frame_end), "frame": scene.frame_current,
        "active": vl.objects.active.name if vl.objects.active else None,
        "selected": sorted(o.name for o in vl.objects if o is not None and o.select_get(view_layer=vl)),
        "objects": len(bpy.data.objects), "scene_objects": len(scene.objects),
        "armatures": len(bpy.data.armatures), "actions": len(bpy.data.actions),
        "mode": bpy.context.mode,
    }


@pytest.mark.parametrize("fmt", ["BVH", "FBX", "GLTF"])
def test_armature_alone_exports_twice(tmp_path, fmt):
    obj = _alone()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 5, 250
    scene.frame_set(17)
    before = _state()
    assert before["active"] == obj.name and before["selected"] == [obj.name]
    ext = {"BVH": ".bvh", "FBX": ".fbx", "GLTF": ".glb"}[fmt]
    for i in range(2):
        path = str(tmp_path / ("alone_%d" % i))
        assert bpy.ops.motion_matching.export_baked(filepath=path, format=fmt,
                                                    frame_start=10, frame_end=40) == {"FINISHED"}
        assert os.path.isfile(path + ext)
        assert _state() == before, (fmt, i)
        # The view layer holds only live objects (no base left over from a removed one).
        assert all(o is not None for o in bpy.context.view_layer.objects)
    # And once more with nothing selected and nothing active.
    obj.select_set(False)
    bpy.context.view_layer.objects.active = None
    scene.motion_matching.bake_armature = obj
    before = _state()
    assert bpy.ops.motion_matching.export_baked(filepath=str(tmp_path / "unselected"), format=fmt) == {"FINISHED"}
    assert _state() == before


def test_a_folder_or_an_empty_name_is_refused(tmp_path):
    obj = _alone()
    folder = tmp_path / "takes"
    folder.mkdir()
    before = _state()
    for fmt in ("BVH", "FBX", "GLTF"):
        for path, message in ((str(folder), "Choose a file name inside the folder"),
                              (str(folder) + os.sep, "Choose a file name inside the folder"),
                              (os.path.join(str(folder), "."), "Choose a file name inside the folder"),
                              ("", "Choose a file name to export to")):
            with pytest.raises(RuntimeError, match=message):
                bpy.ops.motion_matching.export_baked(filepath=path, format=fmt)
            assert _state() == before, (fmt, path)
    assert sorted(os.listdir(tmp_path)) == ["takes"] and os.listdir(folder) == []
    assert obj.animation_data.action is not None
