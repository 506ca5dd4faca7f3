"""motion_matching.bake on a Ground mesh (rolling hills, a flight of stairs) made
with bpy, measured against the same path's flat bake with Blender's ray casts."""

import bpy
import numpy as np
import pytest

import bl_helpers as H
from tools import ground_scenes as gs
from tools import path_measure




def _bake_flat_then(take_on_path, bake, make):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    flat_report = bake(name="flat.json")
    flat = gs.measure(obj, None, path_measure)
    ground = make()
    bpy.context.scene.motion_matching.ground = ground
    report = bake(name="ground.json")
    return flat_report, flat, report, gs.measure(obj, ground, path_measure), obj


@pytest.mark.parametrize("make", [gs.make_hills, gs.make_stairs], ids=["hills", "stairs"])
def test_the_feet_stand_on_the_ground_and_the_hips_follow_it(take_on_path, bake, make):
    flat_report, flat, report, on, obj = _bake_flat_then(take_on_path, bake, make)
    assert on["under_cm"] <= 1.5, on["under_cm"]
    assert abs(on["planted_toe_cm"]) <= 3.0 and abs(on["planted_ankle_cm"] - flat["planted_ankle_cm"]) <= 3.0, on
    assert abs(on["hips_m"] - flat["hips_m"]) <= 0.1 * flat["hips_m"], (on["hips_m"], flat["hips_m"])
    # The report's sliding measures feet near the flat floor; the toes' own planted travel is measured here.
    assert on["slide_cm_s"] <= 1.2 * flat["slide_cm_s"], (on["slide_cm_s"], flat["slide_cm_s"])
    assert report["frames"] == flat_report["frames"]
    # The body climbed: at the end the hips are over the top of the ground.
    assert on["hips"][-1, 2] > flat["hips"][-1, 2] + (0.5 if make is gs.make_stairs else -1.0)


def test_a_ground_that_is_not_a_mesh_is_refused_and_nothing_is_keyed(take_on_path):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    empty = bpy.data.objects.new("NotGround", None)
    bpy.context.scene.collection.objects.link(empty)
    action = obj.animation_data.action if obj.animation_data else None
    with pytest.raises(RuntimeError, match=r"The ground 'NotGround' is not a mesh"):
        bpy.ops.motion_matching.bake(ground="NotGround")
    assert (obj.animation_data.action if obj.animation_data else None) == action


def test_a_ground_beside_the_path_or_far_above_it_is_refused(take_on_path):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    action = obj.animation_data.action if obj.animation_data else None
    gs.make_hills("Beside", x=(10.0, 14.0))
    with pytest.raises(RuntimeError, match=r"The ground 'Beside' has no faces under"):
        bpy.ops.motion_matching.bake(ground="Beside")
    high = gs.make_stairs("High")
    high.location.z = 2.5
    with pytest.raises(RuntimeError, match=r"The ground 'High' lies .* m from the controller's path height"):
        bpy.ops.motion_matching.bake(ground="High")
    assert (obj.animation_data.action if obj.animation_data else None) == action


def _stairs_obj(path, rise=0.0):
    """The stairs of tools/ground_scenes as an OBJ file (Y up, as Blender's OBJ importer reads it by default)."""
    prof = gs.stairs_profile()
    verts = [(x, y, z + rise) for x in (-3.0, 3.0) for y, z in prof]
    n = len(prof)
    lines = ["v %r %r %r" % (x, z, -y) for x, y, z in verts]
    lines += ["f %d %d %d %d" % (k + 1, k + 2, n + k + 2, n + k + 1) for k in range(n - 1)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_the_bake_command_walks_on_a_ground_file_and_refuses_one_far_from_the_path(tmp_path):
    import os
    import subprocess
    import sys

    from sample_paths import REPO, SAMPLE_TAKE

    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}

    def run(ground, out):
        return subprocess.run([sys.executable, "-m", "tools.mm_cli", "--bvh", SAMPLE_TAKE, "--scale", "0.01",
                               "--scenario", "straight_walk", "--fps", "30", "--no-mirror-takes", "--out", str(out),
                               "--ground", ground], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)

    far = run(_stairs_obj(tmp_path / "far.obj", rise=3.0), tmp_path / "far")
    assert far.returncode == 1
    lines = [l for l in far.stderr.splitlines() if l.startswith("motion_matching:")]
    assert len(lines) == 1 and "The ground 'far' lies 4.28 m from the controller's path height" in lines[0], lines
    assert not (tmp_path / "far" / "baked.blend").exists()
    proc = run(_stairs_obj(tmp_path / "stairs.obj"), tmp_path / "run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    with bpy.data.libraries.load(str(tmp_path / "run" / "baked.blend")) as (src, _dst):
        assert "stairs" in src.objects


def test_the_live_preview_follows_the_ground_and_its_edits(take_on_path):

    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    scene = bpy.context.scene
    follow = H.addon_module("bridge.preview.follow")
    preview = H.addon_module("bridge.preview.preview")
    bake_job = H.addon_module("bridge.bake.bake_job")
    bake_props = H.addon_module("bridge.blender.bake_settings")
    pipeline = H.addon_module("core.bake.pipeline")
    frame = 250                                  # on the stairs' landing

    def followed():
        scene.frame_set(scene.frame_current + 1)
        follow.finish_pending()
        assert follow.status(scene) is None and not follow.pending()
        return preview.pose_at(scene, frame)

    def baked():
        settings = bake_props.to_core(scene.motion_matching.bake_settings)
        output = pipeline.run_to_end(bake_job.start(bpy.context, settings).steps)
        i = int(np.flatnonzero(output.frames == frame)[0])
        return output.locations[i], output.rotations[i]

    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    flat = preview.pose_at(scene, frame)
    stairs = gs.make_stairs()
    scene.motion_matching.ground = stairs
    on = followed()
    assert np.abs(on[0] - flat[0]).max() > 0.5          # the body went up the flight (root or hips location)
    for a, b in zip(on, baked()):
        assert np.array_equal(a, b)                    # the preview shows what Bake keys
    stairs.location.z = 0.3                            # an edit of the ground moves the preview again
    bpy.context.view_layer.update()
    higher = followed()
    assert np.abs(higher[0] - on[0]).max() > 0.2
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}


def test_bake_all_walks_every_character_on_the_ground(take_on_path):
    from tools import scene_curves

    obj, _ctrl = take_on_path(fps=24)
    curve = scene_curves.bezier_curve("Path", ((0.0, 0.0, 0.0), (6.0, 0.0, 0.0), (12.0, 3.0, 0.0)))
    for o in bpy.context.view_layer.objects:
        o.select_set(o in (curve, obj))
    bpy.context.view_layer.objects.active = curve
    assert bpy.ops.motion_matching.add_crowd(count=2, lanes=2) == {"FINISHED"}
    scene = bpy.context.scene
    scene.motion_matching.ground = gs.make_hills(x=(-4.0, 18.0), y=(-5.0, 8.0))
    assert bpy.ops.motion_matching.bake_all() == {"FINISHED"}
    frames = np.arange(scene.frame_start, scene.frame_end + 1, 4)
    for pair in scene.motion_matching.crowd:
        hips = H.pose_heads(pair.armature, frames, ["Hips"])[:, 0]
        above = hips[:, 2] - gs.ground_heights(scene.motion_matching.ground, hips)
        assert abs(np.median(above) - 0.97) < 0.1, np.median(above)      # the flat bake's hips: 0.97 m
        # Over the hills the hips rise and fall with the ground (on the flat floor they keep about one height).
        assert np.ptp(hips[:, 2]) > 0.25, np.ptp(hips[:, 2])


def test_a_bake_onto_another_rig_keeps_its_feet_on_the_ground(rigify, take_on_path):

    source, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    rig = H.meta_rig_target(source)
    scene = bpy.context.scene
    scene.motion_matching.bake_armature = rig
    stairs = gs.make_stairs()
    scene.motion_matching.ground = stairs
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    mapped = {i.name: i.bone for i in rig.data.motion_matching.bone_map if i.bone}
    frames = np.arange(scene.frame_start, scene.frame_end + 1, 3)
    names = [mapped[k] for k in ("LeftFoot", "RightFoot", "LeftToes", "RightToes")]
    heads = H.pose_heads(rig, frames, names)                       # (F, 4, 3) ankles and toes
    gap = heads[..., 2] - gs.ground_heights(stairs, heads)
    assert gap.min() > -0.015, gap.min()
    # Up the flight: at the end the toes stand on the landing, not on the floor below.
    assert np.median(gap[-10:, 2:]) < 0.08 and heads[-1, 2:, 2].min() > gs.STEPS * gs.RISER - 0.015
    # On every tread on the way too: the lower toe over each third of the walk stays
    # within 10 cm (one toe floor for the whole bake would hold it at the landing's height).
    for part in np.array_split(gap[:, 2:].min(axis=1), 3):
        assert np.median(part) < 0.10, np.median(part)
