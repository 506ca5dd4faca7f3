"""python -m tools.mm_cli --character: a bake straight onto a rig from a glTF
file or appended from a .blend, exports by extension, and a one-line refusal
with nothing written for each bad character."""

import json
import os
import subprocess
import sys

import pytest

from sample_paths import REPO, SAMPLE_TAKE
from tools import rig_file, rigs


def _run(*args):
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    return subprocess.run([sys.executable, "-m", "tools.mm_cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=env)


def _failure(proc):
    lines = [line for line in proc.stderr.splitlines() if line.startswith("motion_matching:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr[-2000:]
    return lines[0]


def _imported_armature(path):
    """The armature Blender's glTF importer makes from ``path`` (its bone names, its action's frame range)."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.gltf(filepath=str(path)) == {"FINISHED"}
    arm = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    assert len(arm) == 1
    return arm[0]


def test_a_glb_character_is_baked_on_and_exported_in_every_format(tmp_path):
    glb = rig_file.write("glb", str(tmp_path), "Hero")
    out = tmp_path / "run"
    exports = [str(out / ("hero" + ext)) for ext in (".glb", ".gltf", ".fbx", ".bvh")]
    args = ["--bvh", SAMPLE_TAKE, "--scenario", "straight_walk", "--fps", "24", "--speed-scale", "1.25",
            "--start-frame", "11", "--character", glb, "--out", str(out)]
    for path in exports:
        args += ["--export", path]
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    # straight_walk lasts 10 s; 1.25 times faster it is 8 s: 193 frames at 24 fps from frame 11.
    assert report["frames"] == 193 and report["frame_start"] == 11
    assert "onto Hero" in proc.stdout
    for path in exports:
        assert os.path.getsize(path) > 1000, path
    assert (out / "hero.bin").is_file()          # the .gltf's arrays
    with open(exports[3]) as fh:
        assert "Frames: 193" in fh.read()
    # Both glTF files hold the baked animation on the character's own bones.
    for path in exports[:2]:
        arm = _imported_armature(path)
        assert {b.name for b in arm.data.bones} >= {rigs.PREFIX + "Hips", rigs.PREFIX + "LeftFoot"}
        assert arm.animation_data is not None and arm.animation_data.action is not None
        first, last = arm.animation_data.action.frame_range
        assert round(last - first) == 192, path


@pytest.fixture
def blend_file(tmp_path):
    """A .blend with a mapped character ("Hero" and its mesh), a mesh alone
    ("Box"), an armature no humanoid can be found in ("Stick") and a
    controller on the straight_walk path ("Walker")."""
    import bpy

    rigs.build("Hero")
    bpy.ops.mesh.primitive_cube_add()
    bpy.context.active_object.name = "Box"
    arm = bpy.data.armatures.new("Stick")
    stick = bpy.data.objects.new("Stick", arm)
    bpy.context.scene.collection.objects.link(stick)
    bpy.context.view_layer.objects.active = stick
    bpy.ops.object.mode_set(mode="EDIT")
    for i in range(3):
        eb = arm.edit_bones.new("bone%d" % i)
        eb.head, eb.tail = (0, 0, i), (0, 0, i + 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="straight_walk", controller_name="Walker",
                                                           frame_start=5) == {"FINISHED"}
    path = str(tmp_path / "cast.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    return path


def test_a_character_and_a_controller_appended_from_a_blend(tmp_path, blend_file):
    out = tmp_path / "run"
    proc = _run("--bvh", SAMPLE_TAKE, "--controller", blend_file + ":Walker", "--character", blend_file + ":Hero",
                "--out", str(out), "--export", str(out / "hero.bvh"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["frame_start"] == 5 and report["frames"] == 241   # the controller's own keys, 10 s at 24 fps
    assert "onto Hero" in proc.stdout
    assert (out / "hero.bvh").is_file()


@pytest.mark.parametrize("which, expected", [
    ("Nobody", "cast.blend has no object named 'Nobody'"),
    ("Box", "Box is a mesh, not an armature"),
    ("Stick", "cannot be mapped: no bones found for Hips"),
])
def test_a_bad_character_in_a_blend_is_refused_with_nothing_written(tmp_path, blend_file, which, expected):
    out = tmp_path / "run"
    proc = _run("--bvh", SAMPLE_TAKE, "--scenario", "straight_walk", "--character", blend_file + ":" + which,
                "--out", str(out), "--export", str(out / "x.fbx"), "--save-database", str(tmp_path / "db.npz"))
    assert expected in _failure(proc)
    assert not out.exists() and not (tmp_path / "db.npz").exists()


def test_a_gltf_without_an_armature_is_refused(tmp_path):
    path = tmp_path / "empty.gltf"
    path.write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
                                "nodes": [{"name": "Marker"}]}))
    out = tmp_path / "run"
    proc = _run("--bvh", SAMPLE_TAKE, "--character", str(path), "--out", str(out))
    assert _failure(proc) == "motion_matching: --character %s holds no armature." % path
    assert not out.exists()
