"""Characters as users import them: the Mixamo-style rig factory and
its round trips through Blender's glTF and FBX exporters and importers
(tools/rigs.py), auto-mapping on every setup, the world-space readings the
bench uses (tools/rig_measure.py), and the issue's thresholds on the glTF
default import as imported (object turned and scaled) and with its
transforms applied.

Each setup is built once per module; the fixtures keep figures, not objects
(every test starts from an empty scene)."""

import bpy
import numpy as np
import pytest

from core.skeleton import humanoid_joints
from tools import rig_measure, rig_trial, rigs

MIXAMO_MAP = {
    "Hips": "Hips", "Spine": "Spine", "Chest": "Spine1", "UpperChest": "Spine2", "Neck": "Neck", "Head": "Head",
    **{s + j: s + b for s in ("Left", "Right") for j, b in (
        ("Shoulder", "Shoulder"), ("UpperArm", "Arm"), ("LowerArm", "ForeArm"), ("Hand", "Hand"),
        ("UpperLeg", "UpLeg"), ("LowerLeg", "Leg"), ("Foot", "Foot"), ("Toes", "ToeBase"))},
}
MIXAMO_MAP = {k: rigs.PREFIX + v for k, v in MIXAMO_MAP.items()}
LEAVES = {rigs.PREFIX + n for n in ("HeadTop_End", "LeftToe_End", "RightToe_End", "LeftHandIndex4",
                                    "RightHandIndex4", "LeftHandThumb4", "RightHandThumb4")}


def _remove(*objs):
    for o in objs:
        bpy.data.objects.remove(o)


def _facts(rig, mesh):
    names = [b.name for b in rig.data.bones]
    groups = {g.name for g in mesh.vertex_groups}
    mods = [m for m in mesh.modifiers if m.type == "ARMATURE"]
    return {
        "names": names,
        "heads": rigs.rest_world_heads(rig, names),
        "matrix_world": np.array(rig.matrix_world),
        "mapping": None,
        "mesh_rest_lowest": rig_measure.mesh_rest_lowest(mesh),
        "mesh_lowest_now": float(rig_measure.mesh_world_points(mesh)[:, 2].min()),
        "skinned": len(mods) == 1 and mods[0].object == rig and mesh.parent == rig,
        "groups": groups,
        "foot_tail_m": float(np.linalg.norm(
            np.array(rig.matrix_world) @ np.append(rig.data.bones[rigs.PREFIX + "LeftFoot"].tail_local, 1.0)
            - np.array(rig.matrix_world) @ np.append(rig.data.bones[rigs.PREFIX + "LeftFoot"].head_local, 1.0))),
    }


@pytest.fixture(scope="module")
def setups(addon, tmp_path_factory):
    """Every setup of tools/rigs.py built once (plus the A-pose character):
    {name: facts}, with 'reference' the character as built."""
    folder = str(tmp_path_factory.mktemp("rigs"))
    bpy.ops.wm.read_homefile(use_empty=True)
    out = {}
    ref, ref_mesh = rigs.build("Reference")
    out["reference"] = _facts(ref, ref_mesh)
    _remove(ref_mesh, ref)
    for setup in rigs.SETUP_NAMES + ("A-pose",):
        if setup == "A-pose":
            rig, mesh = rigs.build("C", pose="A")
        else:
            rig, mesh = rigs.make(setup, folder, "C")
        facts = _facts(rig, mesh)
        rig_trial.auto_map(rig)
        facts["mapping"] = rig_measure.mapping(rig)
        out[setup] = facts
        _remove(mesh, rig)
    return out


def test_built_character_is_a_mixamo_import(setups):
    """Bones Y-up in centimetres in an object turned +90 degrees about X and
    scaled 0.01: standing Z-up in metres in the world, facing -Y, left arm on
    +X, soles on the floor, proportions unlike the sample's."""
    f = setups["built"]
    m = f["matrix_world"]
    np.testing.assert_allclose(m[:3, :3], 0.01 * np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]]), atol=1e-9)
    assert len(f["names"]) == 41 and all(n.startswith("mixamorig:") for n in f["names"])
    heads = dict(zip(f["names"], f["heads"]))
    P = rigs.PREFIX
    assert heads[P + "HeadTop_End"][2] == pytest.approx(1.65, abs=1e-6)          # metres, Z up
    assert heads[P + "LeftHand"][0] > 0.5 and heads[P + "RightHand"][0] < -0.5    # left on +X
    assert heads[P + "LeftToe_End"][1] < heads[P + "LeftFoot"][1] - 0.15         # toes point at -Y
    pelvis = 0.5 * (heads[P + "LeftUpLeg"][2] + heads[P + "RightUpLeg"][2])
    assert pelvis == pytest.approx(0.88, abs=1e-6)                                # the sample's is 0.968
    # Armature space is Y up in centimetres.
    names, _parents, local = rigs.layout()
    assert local[names.index(P + "Head"), 1] > 140 and abs(local[names.index(P + "Head"), 2]) < 5
    assert f["mesh_rest_lowest"] == pytest.approx(0.0, abs=1e-6)
    assert f["skinned"]
    # Every bone that has a box has its own vertex group; leaves and fingers carry none.
    assert {P + n for n in ("Hips", "LeftFoot", "LeftToeBase", "Head", "RightForeArm")} <= f["groups"]
    assert not f["groups"] & LEAVES


def test_built_mesh_is_skinned_with_rigid_weights(addon):
    rig, mesh = rigs.build("C")
    weights = np.zeros(len(mesh.data.vertices))
    for v in mesh.data.vertices:
        assert len(v.groups) == 1
        weights[v.index] = v.groups[0].weight
    assert np.all(weights == 1.0)
    # Turning the left upper arm moves the left hand's box with it, nothing of the legs.
    before = rig_measure.mesh_world_points(mesh)
    pb = rig.pose.bones[rigs.PREFIX + "LeftArm"]
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (0.0, 0.0, 0.5)
    bpy.context.view_layer.update()
    after = rig_measure.mesh_world_points(mesh)
    moved = np.linalg.norm(after - before, axis=1) > 1e-4
    hand = [mesh.vertex_groups[rigs.PREFIX + "LeftHand"].index]
    hand_verts = [v.index for v in mesh.data.vertices if v.groups[0].group in hand]
    leg_verts = [v.index for v in mesh.data.vertices
                 if mesh.vertex_groups[v.groups[0].group].name.endswith(("UpLeg", "Leg", "Foot", "ToeBase"))]
    assert moved[hand_verts].all() and not moved[leg_verts].any()


def test_a_pose_character(setups):
    f = setups["A-pose"]
    heads = dict(zip(f["names"], f["heads"]))
    P = rigs.PREFIX
    for side, s in (("Left", 1), ("Right", -1)):
        d = heads[P + side + "ForeArm"] - heads[P + side + "Arm"]
        assert np.degrees(np.arctan2(-d[2], s * d[0])) == pytest.approx(45.0, abs=1e-4)
    ref = setups["reference"]
    legs = [n for n in f["names"] if "Leg" in n or "Foot" in n or "Toe" in n]
    np.testing.assert_allclose(heads[legs[0]], dict(zip(ref["names"], ref["heads"]))[legs[0]], atol=1e-9)
    assert f["mapping"] == MIXAMO_MAP


@pytest.mark.parametrize("setup", rigs.SETUP_NAMES)
def test_round_trip_keeps_the_rest_heads_within_1mm(setups, setup):
    """The factory's exports come back where they were built: every bone's
    rest head in world space within 1 mm, for every importer option; only
    the leaf bones go when leaf bones are ignored."""
    ref, f = setups["reference"], setups[setup]
    missing = set(ref["names"]) - set(f["names"])
    assert missing == (LEAVES if "no leaves" in setup else set())
    assert not set(f["names"]) - set(ref["names"])
    ref_heads = dict(zip(ref["names"], ref["heads"]))
    err = max(np.linalg.norm(h - ref_heads[n]) for n, h in zip(f["names"], f["heads"]))
    assert err < 0.001, err
    assert f["mesh_rest_lowest"] == pytest.approx(0.0, abs=0.001)
    assert f["mesh_lowest_now"] == pytest.approx(0.0, abs=0.001)
    assert f["skinned"]


@pytest.mark.parametrize("setup", rigs.SETUP_NAMES)
def test_setups_keep_the_import_transform(setups, setup):
    """Every import gives what real files give: the object turned +90 degrees
    about X and scaled 0.01 (bones Y-up in centimetres); applied transforms
    give the identity."""
    m = setups[setup]["matrix_world"]
    want = np.eye(3) if setup == "built, transforms applied" else \
        0.01 * np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    np.testing.assert_allclose(m[:3, :3], want, atol=1e-6)


def test_gltf_default_puts_tails_metres_away(setups):
    """Why no measure may use a tail: the glTF importer's default bone
    direction gives the foot a tail over a metre from its head (13 cm as
    built); the other options keep it."""
    assert setups["reference"]["foot_tail_m"] == pytest.approx(0.134, abs=0.001)
    assert setups["glTF default"]["foot_tail_m"] > 1.0
    for setup in ("glTF TEMPERANCE", "glTF FORTUNE", "FBX", "FBX auto-orient"):
        assert setups[setup]["foot_tail_m"] == pytest.approx(0.134, abs=0.001)


@pytest.mark.parametrize("setup", rigs.SETUP_NAMES)
def test_auto_map_is_complete_on_every_setup(setups, setup):
    assert setups[setup]["mapping"] == MIXAMO_MAP
    assert len(MIXAMO_MAP) == len(humanoid_joints.CANONICAL)


# ----------------------------------------------------------------------------
# Retarget and bake onto the glTF default import (the case), with a
# twin whose transforms are applied.


@pytest.fixture(scope="module")
def trial(addon, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("trial"))
    take, controller = rig_trial.sample_scene(24)
    out = {}
    for key, apply in (("imported", False), ("applied", True)):
        rig, mesh = rigs.make("glTF default", folder, "Applied" if apply else "Character")
        if apply:
            rigs.apply_object_transforms(rig, mesh)
        rig_trial.auto_map(rig)
        rig_trial.retarget(take, rig)
        ret, ret_heads, names = rig_trial.retarget_figures(take, rig, mesh, mesh_frames=12)
        report = rig_trial.bake(rig, folder)
        bake, bake_heads, _names = rig_trial.bake_figures(rig, mesh, controller, report, 24)
        frames = np.array([1.0, 120.0, 349.0])
        check = (rig_measure.world_heads(rig, frames, names), rig_measure.frame_set_heads(rig, frames, names))
        out[key] = {"retarget": ret, "bake": bake, "names": names, "retarget_heads": ret_heads,
                    "bake_heads": bake_heads, "check": check, "warnings": report.get("warnings"),
                    "size_ratio": report.get("size_ratio")}
    return out


def test_bulk_world_heads_match_frame_set(trial):
    """The bench's bulk world heads equal Blender's pose after frame_set (within
    0.1 mm), on a rig turned and scaled by its object and on one applied."""
    for key in ("imported", "applied"):
        bulk, blender = trial[key]["check"]
        assert np.abs(bulk - blender).max() < 1e-4, key


def test_the_applied_twin_meets_the_rig_thresholds(trial):
    """Joints are heads: the glTF default import puts foot tails metres away,
    which made the size ratio about 6 and the character float 6 m up once its
    transforms were applied. Measured from heads, the applied character meets
    the issue's thresholds (all but the report's tracking figure, below)."""
    r, b = trial["applied"]["retarget"], trial["applied"]["bake"]
    assert r["angle_excess_deg"] <= 3.0 and r["lowest_m"] >= -0.02, r
    assert abs(b["percent"] - 100.0) <= 3.0, b
    assert b["distance_mean_m"] <= 0.10 and b["distance_max_m"] <= 0.15, b
    assert b["lowest_m"] >= -0.02 and abs(b["soles_m"]) <= 0.02, b


def test_rig_retarget_limbs_follow_the_source_within_3_degrees(trial):
    assert trial["imported"]["retarget"]["angle_excess_deg"] <= 3.0


def test_rig_retarget_mesh_stays_above_the_floor(trial):
    assert trial["imported"]["retarget"]["lowest_m"] >= -0.02


def test_rig_bake_hips_travel_within_3_percent(trial):
    assert abs(trial["imported"]["bake"]["percent"] - 100.0) <= 3.0


def test_rig_bake_hips_near_the_controller(trial):
    b = trial["imported"]["bake"]
    assert b["distance_mean_m"] <= 0.10 and b["distance_max_m"] <= 0.15


def test_rig_bake_mesh_never_below_2cm_and_soles_on_the_floor(trial):
    b = trial["imported"]["bake"]
    assert b["lowest_m"] >= -0.02 and abs(b["soles_m"]) <= 0.02



@pytest.mark.parametrize("key", ["imported", "applied"])
def test_rig_report_tracking_is_the_measured_one(trial, key):
    """The report measures the rig's own hips in world space."""
    b = trial[key]["bake"]
    assert abs(b["report_tracking_max_m"] - b["distance_max_m"]) <= 0.02


def test_rig_applied_or_not_same_world_heads(trial):
    a, b = trial["imported"], trial["applied"]
    for stage in ("retarget_heads", "bake_heads"):
        assert np.abs(a[stage] - b[stage]).max() <= 0.001, stage


def test_a_good_result_raises_no_warning(trial):
    """The world-space checks stay quiet when the result is right, and the
    report gives the size ratio (standing pelvis heights 0.88 / 0.968)."""
    for key in ("imported", "applied"):
        retarget_warnings = [w for w in trial[key]["warnings"] if w.startswith("Retargeted onto")]
        assert retarget_warnings == [], key
        assert trial[key]["size_ratio"] == pytest.approx(0.88 / 0.968, abs=0.01), key


# ----------------------------------------------------------------------------
# The same thresholds on every other import (bone directions, automatic bone
# orientation, leaf bones, joints with X along the bone), as imported.


@pytest.fixture(scope="module")
def every_import(addon, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("every_import"))
    take, controller = rig_trial.sample_scene(24)
    out = {}
    for setup in rigs.SETUP_NAMES:
        if setup == "glTF default":      # measured by ``trial`` above
            continue
        rig, mesh = rigs.make(setup, folder, "C_" + "".join(c if c.isalnum() else "_" for c in setup))
        rig_trial.auto_map(rig)
        rig_trial.retarget(take, rig)
        ret, _heads, _names = rig_trial.retarget_figures(take, rig, mesh, mesh_frames=8)
        report = rig_trial.bake(rig, folder)
        bake, _heads, _names = rig_trial.bake_figures(rig, mesh, controller, report, 24)
        out[setup] = {"retarget": ret, "bake": bake}
        _remove(mesh, rig)
    return out


@pytest.mark.parametrize("setup", [s for s in rigs.SETUP_NAMES if s != "glTF default"])
def test_rig_thresholds_on_every_import(every_import, setup):
    """With no manual step: limbs follow the source, the mesh stays above the
    floor, the hips follow the controller's path, the soles stand on the floor,
    and the report's tracking is the measured one."""
    r, b = every_import[setup]["retarget"], every_import[setup]["bake"]
    assert r["angle_excess_deg"] <= 3.0 and r["lowest_m"] >= -0.02, r
    assert abs(b["percent"] - 100.0) <= 3.0, b
    assert b["distance_mean_m"] <= 0.10 and b["distance_max_m"] <= 0.15, b
    assert b["lowest_m"] >= -0.02 and abs(b["soles_m"]) <= 0.02, b
    assert abs(b["report_tracking_max_m"] - b["distance_max_m"]) <= 0.02, b
