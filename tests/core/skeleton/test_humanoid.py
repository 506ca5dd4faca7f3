"""core.skeleton.humanoid_*: the naming conventions users bring, the hierarchy fallback,
validation and presets. Skeletons are synthetic (Z up, facing -Y, left = +X)
except the sample take and, when the bpy wheel is there, Rigify's meta-rig."""

import json
import os
import re

import numpy as np
import pytest

from core.io import bvh_convert, bvh_parse
from core.skeleton import humanoid_joints, humanoid_json, humanoid_map
from sample_paths import SAMPLE_TAKE

SIDES = (("Left", 1.0), ("Right", -1.0))
def _metarig_file():
    """Blender's human meta-rig script inside the installed bpy wheel, found
    without importing bpy (this is a core test)."""
    import glob
    import importlib.util

    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        return ""
    root = list(spec.submodule_search_locations)[0]
    found = glob.glob(os.path.join(root, "*", "scripts", "addons_core", "rigify", "metarigs", "human.py"))
    return found[0] if found else ""


METARIG = _metarig_file()


class Rig:
    """A skeleton assembled bone by bone, parents before children."""

    def __init__(self):
        self.names, self.parents, self.heads = [], [], []

    def add(self, name, parent, head):
        self.names.append(name)
        self.parents.append(self.names.index(parent) if parent is not None else -1)
        self.heads.append(np.asarray(head, dtype=float))
        return name

    def head(self, name):
        return self.heads[self.names.index(name)]

    def arrays(self):
        return list(self.names), np.array(self.parents), np.array(self.heads)

    def map(self, **kw):
        return humanoid_map.auto_map(*self.arrays(), **kw)


def biped(hips, spine, neck, head, arm, leg, pose="T", rig=None, root=None):
    """A humanoid with hips at z=1, the spine up to 1.45, legs down at x=+-0.1
    and arms sideways (T) or 45 degrees down (A).

    ``arm(side)`` gives [clavicle or None, upper, lower, hand] and ``leg(side)``
    [hip joint or None, upper, lower, foot, toe or None]. Returns the rig and
    the expected mapping.
    """
    rig = rig or Rig()
    exp = {"Hips": rig.add(hips, root, (0, 0.02, 1.0))}
    parent = hips
    for k, name in enumerate(spine):
        z = 1.08 + 0.37 * k / max(len(spine) - 1, 1)
        parent = rig.add(name, parent, (0, 0.02 - 0.01 * k, z))
    chest_top = parent
    for k, name in enumerate(neck):
        parent = rig.add(name, parent, (0, -0.01, 1.5 + 0.05 * k))
    exp["Head"] = rig.add(head, parent, (0, -0.01, 1.62))
    exp.update(zip(("Spine", "Chest"), spine))
    if len(spine) >= 3:
        exp["UpperChest"] = spine[-1]
    if neck:
        exp["Neck"] = neck[0]
    for side, s in SIDES:
        clav, upper, lower, hand = arm(side)
        parent = chest_top
        if clav:
            exp[side + "Shoulder"] = rig.add(clav, parent, (s * 0.03, 0, 1.45))
            parent = clav
        d = np.array([s, 0, 0]) if pose == "T" else np.array([s, 0, -1]) / np.sqrt(2)
        p = np.array([s * 0.17, 0.0, 1.45])
        for joint, name, step in (("UpperArm", upper, 0.28), ("LowerArm", lower, 0.25),
                                  ("Hand", hand, 0.08)):
            exp[side + joint] = rig.add(name, parent, p)
            parent, p = name, p + step * d
    for side, s in SIDES:
        hipjoint, upper, lower, foot, toe = leg(side)
        parent = hips
        if hipjoint:
            parent = rig.add(hipjoint, parent, (0, 0.02, 1.0))
        for joint, name, head_pos in (("UpperLeg", upper, (s * 0.1, 0.02, 0.93)),
                                      ("LowerLeg", lower, (s * 0.1, 0.0, 0.5)),
                                      ("Foot", foot, (s * 0.1, 0.03, 0.08)),
                                      ("Toes", toe, (s * 0.1, -0.11, 0.02))):
            if name:
                exp[side + joint] = rig.add(name, parent, head_pos)
                parent = name
    return rig, exp


def assert_maps(mapping, expected, method="names"):
    assert mapping.method == method
    assert mapping.missing_required == []
    assert dict(mapping) == expected
    humanoid_joints.check_mapping(mapping, list(mapping.values()))


# ----------------------------------------------------------------------------
# Conventions by name


@pytest.mark.parametrize("prefix", ["mixamorig:", "mixamorig1:", ""])
@pytest.mark.parametrize("pose", ["T", "A"])
def test_mixamo(prefix, pose):
    n = lambda s: prefix + s
    rig, exp = biped(n("Hips"), [n("Spine"), n("Spine1"), n("Spine2")], [n("Neck")], n("Head"),
                     lambda s: [n(s + "Shoulder"), n(s + "Arm"), n(s + "ForeArm"), n(s + "Hand")],
                     lambda s: [None, n(s + "UpLeg"), n(s + "Leg"), n(s + "Foot"),
                                n(s + "ToeBase")], pose=pose)
    rig.add(n("HeadTop_End"), n("Head"), (0, -0.01, 1.8))
    for side, s in SIDES:
        hand = rig.head(n(side + "Hand"))
        prev = rig.add(n(side + "HandIndex1"), n(side + "Hand"), hand + (s * 0.05, 0, 0))
        for k in (2, 3, 4):
            prev = rig.add(n(side + "HandIndex%d" % k), prev, rig.head(prev) + (s * 0.03, 0, 0))
        rig.add(n(side + "HandThumb1"), n(side + "Hand"), hand + (s * 0.02, -0.03, 0))
        rig.add(n(side + "Toe_End"), n(side + "ToeBase"),
                rig.head(n(side + "ToeBase")) + (0, -0.06, 0))
    m = rig.map()
    assert m["LeftShoulder"] == n("LeftShoulder") and m["LeftUpperArm"] == n("LeftArm")
    assert m["LeftLowerLeg"] == n("LeftLeg") and m["UpperChest"] == n("Spine2")
    assert_maps(m, exp)


def rigify_meta(rig=None, prefix="", root=None):
    """Rigify's human meta-rig layout (``prefix`` gives ORG-/DEF- copies)."""
    p = lambda s: prefix + s
    rig, exp = biped(p("spine"), [p("spine.001"), p("spine.002"), p("spine.003")],
                     [p("spine.004"), p("spine.005")], p("spine.006"),
                     lambda s: [p("shoulder." + s[0]), p("upper_arm." + s[0]),
                                p("forearm." + s[0]), p("hand." + s[0])],
                     lambda s: [None, p("thigh." + s[0]), p("shin." + s[0]), p("foot." + s[0]),
                                p("toe." + s[0])], pose="A", rig=rig, root=root)
    for side, s in SIDES:
        x = side[0]
        rig.add(p("pelvis." + x), p("spine"), (0, 0.05, 1.0))
        rig.add(p("breast." + x), p("spine.003"), (s * 0.12, 0.05, 1.46))
        rig.add(p("heel.02." + x), p("foot." + x), (s * 0.06, 0.05, 0.0))
        rig.add(p("palm.01." + x), p("hand." + x), rig.head(p("hand." + x)))
        rig.add(p("f_index.01." + x), p("palm.01." + x), rig.head(p("hand." + x)) + (s * .08, 0, 0))
        rig.add(p("thumb.01." + x), p("palm.01." + x),
                rig.head(p("hand." + x)) + (s * .02, -.03, 0))
    rig.add(p("face"), p("spine.006"), (0, -0.02, 1.62))
    rig.add(p("jaw"), p("face"), (0, -0.05, 1.6))
    return rig, exp


def test_rigify_meta_rig():
    rig, exp = rigify_meta()
    m = rig.map()
    assert m["Hips"] == "spine" and m["Neck"] == "spine.004" and m["Head"] == "spine.006"
    assert m["UpperChest"] == "spine.003"
    assert_maps(m, exp)


@pytest.mark.skipif(not METARIG, reason="bpy wheel with Rigify not installed")
def test_rigify_meta_rig_as_shipped():
    """Every bone of Blender's own human meta-rig (face and fingers too)."""
    text = open(METARIG, encoding="utf-8").read()
    rig = Rig()
    blocks = re.findall(r"bone = arm\.edit_bones\.new\('([^']+)'\)\n(.*?)bones\['", text, re.S)
    for name, body in blocks:
        head = re.search(r"bone\.head = ([-\d.]+), ([-\d.]+), ([-\d.]+)", body).groups()
        parent = re.search(r"bone\.parent = arm\.edit_bones\[bones\['([^']+)'\]\]", body)
        rig.add(name, parent.group(1) if parent else None, [float(v) for v in head])
    assert len(rig.names) > 100
    m = rig.map()
    expected = {"Hips": "spine", "Spine": "spine.001", "Chest": "spine.002",
                "UpperChest": "spine.003", "Neck": "spine.004", "Head": "spine.006"}
    for side in ("Left", "Right"):
        x = side[0]
        expected.update({side + "Shoulder": "shoulder." + x, side + "UpperArm": "upper_arm." + x,
                         side + "LowerArm": "forearm." + x, side + "Hand": "hand." + x,
                         side + "UpperLeg": "thigh." + x, side + "LowerLeg": "shin." + x,
                         side + "Foot": "foot." + x, side + "Toes": "toe." + x})
    assert_maps(m, expected)


def rigify_generated():
    """A generated Rigify rig: ORG- copies of the meta-rig, DEF- bones with twist
    segments, MCH- mechanism, FK and IK controls, tweaks."""
    rig = Rig()
    rig.add("root", None, (0, 0, 0))
    rigify_meta(rig, "ORG-", root="root")
    h = rig.head
    # Deform bones: the spine chain, limbs in two segments, parented like Rigify does.
    parent = rig.add("DEF-spine", "root", h("ORG-spine"))
    for k in range(1, 7):
        parent = rig.add("DEF-spine.%03d" % k, parent, h("ORG-spine.%03d" % k))
    for side, s in SIDES:
        x = side[0]
        rig.add("DEF-pelvis." + x, "DEF-spine", h("ORG-spine"))
        rig.add("DEF-shoulder." + x, "ORG-spine.003", h("ORG-shoulder." + x))
        rig.add("DEF-breast." + x, "ORG-spine.003", h("ORG-breast." + x))
        for chain, first_parent in ((("upper_arm", "forearm", "hand"), "ORG-shoulder." + x),
                                    (("thigh", "shin", "foot", "toe"), "ORG-spine")):
            parent = first_parent
            for k, bone in enumerate(chain):
                parent = rig.add("DEF-%s.%s" % (bone, x), parent, h("ORG-%s.%s" % (bone, x)))
                if k < 2:
                    mid = 0.5 * (h("ORG-%s.%s" % (bone, x)) + h("ORG-%s.%s" % (chain[k + 1], x)))
                    parent = rig.add("DEF-%s.%s.001" % (bone, x), parent, mid)
    # Mechanism and controls.
    rig.add("MCH-spine", "root", h("ORG-spine"))
    rig.add("MCH-spine.001", "MCH-spine", h("ORG-spine.001"))
    rig.add("torso", "root", h("ORG-spine.001"))
    rig.add("hips", "torso", h("ORG-spine.001"))
    rig.add("chest", "torso", h("ORG-spine.002"))
    rig.add("spine_fk", "MCH-spine", h("ORG-spine.001"))
    rig.add("spine_fk.001", "MCH-spine.001", h("ORG-spine.002"))
    rig.add("spine_fk.002", "chest", h("ORG-spine.002"))
    rig.add("spine_fk.003", "spine_fk.002", h("ORG-spine.003"))
    for k in range(0, 5):
        rig.add("tweak_spine" + (".%03d" % k if k else ""), "root", h("ORG-spine.%03d" % k
                                                                      if k else "ORG-spine"))
    rig.add("neck", "ORG-spine.003", h("ORG-spine.004"))
    rig.add("head", "neck", h("ORG-spine.006"))
    rig.add("MCH-ROT-neck", "ORG-spine.003", h("ORG-spine.004"))
    rig.add("MCH-ROT-head", "MCH-ROT-neck", h("ORG-spine.006"))
    for side, s in SIDES:
        x = "." + side[0]
        rig.add("shoulder" + x, "ORG-spine.003", h("ORG-shoulder" + x))
        rig.add("MCH-upper_arm_parent" + x, "ORG-shoulder" + x, h("ORG-upper_arm" + x))
        rig.add("upper_arm_parent" + x, "ORG-shoulder" + x, h("ORG-upper_arm" + x))
        rig.add("upper_arm_fk" + x, "MCH-upper_arm_parent" + x, h("ORG-upper_arm" + x))
        rig.add("forearm_fk" + x, "upper_arm_fk" + x, h("ORG-forearm" + x))
        rig.add("MCH-hand_fk" + x, "forearm_fk" + x, h("ORG-hand" + x))
        rig.add("hand_fk" + x, "MCH-hand_fk" + x, h("ORG-hand" + x))
        rig.add("upper_arm_ik" + x, "MCH-upper_arm_parent" + x, h("ORG-upper_arm" + x))
        rig.add("MCH-forearm_ik" + x, "upper_arm_ik" + x, h("ORG-forearm" + x))
        rig.add("hand_ik" + x, "root", h("ORG-hand" + x))
        rig.add("upper_arm_ik_target" + x, "root", h("ORG-forearm" + x) + (0, 0.3, 0))
        rig.add("VIS_upper_arm_ik_pole" + x, "ORG-upper_arm" + x, h("ORG-forearm" + x))
        rig.add("upper_arm_tweak" + x, "ORG-shoulder" + x, h("ORG-upper_arm" + x))
        rig.add("upper_arm_tweak" + x + ".001", "upper_arm_tweak" + x,
                h("DEF-upper_arm" + x + ".001"))
        rig.add("forearm_tweak" + x, "upper_arm_tweak" + x, h("ORG-forearm" + x))
        rig.add("hand_tweak" + x, "forearm_tweak" + x, h("ORG-hand" + x))
        rig.add("MCH-thigh_parent" + x, "root", h("ORG-thigh" + x))
        rig.add("thigh_parent" + x, "root", h("ORG-thigh" + x))
        rig.add("thigh_fk" + x, "MCH-thigh_parent" + x, h("ORG-thigh" + x))
        rig.add("shin_fk" + x, "thigh_fk" + x, h("ORG-shin" + x))
        rig.add("MCH-foot_fk" + x, "shin_fk" + x, h("ORG-foot" + x))
        rig.add("foot_fk" + x, "MCH-foot_fk" + x, h("ORG-foot" + x))
        rig.add("toe" + x, "foot_fk" + x, h("ORG-toe" + x))
        rig.add("thigh_ik" + x, "MCH-thigh_parent" + x, h("ORG-thigh" + x))
        rig.add("MCH-shin_ik" + x, "thigh_ik" + x, h("ORG-shin" + x))
        rig.add("foot_ik" + x, "root", h("ORG-foot" + x))
        rig.add("foot_heel_ik" + x, "foot_ik" + x, h("ORG-foot" + x))
        rig.add("foot_spin_ik" + x, "foot_ik" + x, h("ORG-toe" + x))
        rig.add("MCH-thigh_ik_swing" + x, "MCH-thigh_parent" + x, h("ORG-thigh" + x))
        rig.add("thigh_tweak" + x, "ORG-spine", h("ORG-thigh" + x))
        rig.add("shin_tweak" + x, "thigh_tweak" + x, h("ORG-shin" + x))
        rig.add("foot_tweak" + x, "shin_tweak" + x, h("ORG-foot" + x))
        rig.add("thigh_ik_target" + x, "root", h("ORG-shin" + x) + (0, -0.4, 0))
    return rig


def rigify_expected(kind):
    if kind == "DEF":
        exp = {"Hips": "DEF-spine", "Spine": "DEF-spine.001", "Chest": "DEF-spine.002",
               "UpperChest": "DEF-spine.003", "Neck": "DEF-spine.004", "Head": "DEF-spine.006"}
        limb = {"Shoulder": "DEF-shoulder", "UpperArm": "DEF-upper_arm", "LowerArm": "DEF-forearm",
                "Hand": "DEF-hand", "UpperLeg": "DEF-thigh", "LowerLeg": "DEF-shin",
                "Foot": "DEF-foot", "Toes": "DEF-toe"}
    else:
        exp = {"Hips": "torso", "Spine": "spine_fk.001", "Chest": "spine_fk.002",
               "UpperChest": "spine_fk.003", "Neck": "neck", "Head": "head"}
        limb = {"Shoulder": "shoulder", "UpperArm": "upper_arm_fk", "LowerArm": "forearm_fk",
                "Hand": "hand_fk", "UpperLeg": "thigh_fk", "LowerLeg": "shin_fk",
                "Foot": "foot_fk", "Toes": "toe"}
    for side, _ in SIDES:
        exp.update({side + j: b + "." + side[0] for j, b in limb.items()})
    return exp


@pytest.mark.parametrize("prefer", ["DEF", "FK"])
def test_rigify_generated_rig_prefers_deform_or_fk(prefer):
    rig = rigify_generated()
    m = rig.map(prefer=prefer)
    assert not any(b.startswith(("ORG-", "MCH-", "VIS_")) for b in m.values())
    assert not any(".001" in b and b.startswith("DEF-") and "spine" not in b for b in m.values())
    assert_maps(m, rigify_expected(prefer))
    assert m.from_hierarchy == []


def test_rigify_default_prefers_deform_bones_and_rejects_other_choices():
    rig = rigify_generated()
    assert dict(rig.map()) == rigify_expected("DEF")
    with pytest.raises(humanoid_joints.HumanoidError, match="prefer"):
        rig.map(prefer="IK")


@pytest.mark.parametrize("ue5", [False, True])
def test_unreal_mannequin_ignores_twist_and_ik_bones(ue5):
    spine = ["spine_0%d" % k for k in range(1, 6 if ue5 else 4)]
    necks = ["neck_01", "neck_02"] if ue5 else ["neck_01"]
    rig = Rig()
    rig.add("root", None, (0, 0, 0))
    rig, exp = biped("pelvis", spine, necks, "head",
                     lambda s: ["clavicle_" + s[0].lower(), "upperarm_" + s[0].lower(),
                                "lowerarm_" + s[0].lower(), "hand_" + s[0].lower()],
                     lambda s: [None, "thigh_" + s[0].lower(), "calf_" + s[0].lower(),
                                "foot_" + s[0].lower(), "ball_" + s[0].lower()],
                     rig=rig, root="root")
    for side, s in SIDES:
        x = side[0].lower()
        h = rig.head
        for bone, nxt in (("upperarm", "lowerarm"), ("lowerarm", "hand"),
                          ("thigh", "calf"), ("calf", "foot")):
            # Twist bones sit at the head of their bone and halfway down it.
            rig.add("%s_twist_01_%s" % (bone, x), "%s_%s" % (bone, x), h("%s_%s" % (bone, x)))
            if ue5:
                mid = 0.5 * (h("%s_%s" % (bone, x)) + h("%s_%s" % (nxt, x)))
                rig.add("%s_twist_02_%s" % (bone, x), "%s_%s" % (bone, x), mid)
                rig.add("%s_correctiveRoot_%s" % (bone, x), "%s_%s" % (bone, x), mid)
        rig.add("index_01_" + x, "hand_" + x, h("hand_" + x) + (s * 0.08, 0, 0))
        rig.add("thumb_01_" + x, "hand_" + x, h("hand_" + x) + (s * 0.03, -0.03, 0))
        if ue5:
            rig.add("clavicle_pec_" + x, spine[-1], h("clavicle_" + x))
            rig.add("spine_04_latissimus_" + x, "spine_04", h("spine_04") + (s * 0.1, 0, 0))
    rig.add("ik_foot_root", "root", (0, 0, 0))
    for side, _ in SIDES:
        rig.add("ik_foot_" + side[0].lower(), "ik_foot_root", rig.head("foot_" + side[0].lower()))
    rig.add("ik_hand_root", "root", (0, 0, 0))
    rig.add("ik_hand_gun", "ik_hand_root", rig.head("hand_r"))
    for side, _ in SIDES:
        rig.add("ik_hand_" + side[0].lower(), "ik_hand_gun", rig.head("hand_" + side[0].lower()))
    m = rig.map()
    assert not any("twist" in b or b.startswith("ik_") or "corrective" in b for b in m.values())
    assert m["Spine"] == "spine_01" and m["Chest"] == "spine_02" and m["Neck"] == "neck_01"
    assert m["UpperChest"] == spine[-1]
    assert_maps(m, exp)


def cmu(rig=None):
    return biped("Hips", ["LowerBack", "Spine", "Spine1"], ["Neck", "Neck1"], "Head",
                 lambda s: [s + "Shoulder", s + "Arm", s + "ForeArm", s + "Hand"],
                 lambda s: [s[0] + "HipJoint", s + "UpLeg", s + "Leg", s + "Foot", s + "ToeBase"],
                 rig=rig)


def test_cmu():
    rig, exp = cmu()
    for side, s in SIDES:
        hand = rig.head(side + "Hand")
        rig.add(side + "FingerBase", side + "Hand", hand + (s * 0.05, 0, 0))
        rig.add(side[0] + "Thumb", side + "Hand", hand + (s * 0.02, -0.03, 0))
        rig.add(side + "HandIndex1", side + "FingerBase", hand + (s * 0.08, 0, 0))
    m = rig.map()
    assert m["LeftShoulder"] == "LeftShoulder" and m["LeftUpperArm"] == "LeftArm"
    assert "LHipJoint" not in m.values()
    assert m["Neck"] == "Neck" and m["Spine"] == "LowerBack"
    assert_maps(m, exp)


@pytest.mark.parametrize("collar", [True, False])
def test_joint_named_convention_resolves_shoulder_by_context(collar):
    rig, exp = biped("Hips", ["Spine", "Spine1"], ["Neck"], "Head",
                     lambda s: [s + "Collar" if collar else None, s + "Shoulder", s + "Elbow",
                                s + "Wrist"],
                     lambda s: [None, s + "Hip", s + "Knee", s + "Ankle", s + "Toe"])
    m = rig.map()
    assert m["LeftUpperArm"] == "LeftShoulder"
    assert ("LeftShoulder" in m) == collar
    assert_maps(m, exp)


def test_unity_humanoid_names_map_to_themselves():
    rig, exp = biped("Hips", ["Spine", "Chest", "UpperChest"], ["Neck"], "Head",
                     lambda s: [s + "Shoulder", s + "UpperArm", s + "LowerArm", s + "Hand"],
                     lambda s: [None, s + "UpperLeg", s + "LowerLeg", s + "Foot", s + "Toes"])
    m = rig.map()
    assert all(k == v for k, v in m.items()) and len(m) == len(humanoid_joints.CANONICAL)
    assert_maps(m, exp)


def test_3ds_max_biped():
    rig = Rig()
    rig.add("Bip01", None, (0, 0, 1.0))
    rig, exp = biped("Bip01 Pelvis", ["Bip01 Spine", "Bip01 Spine1", "Bip01 Spine2"],
                     ["Bip01 Neck"], "Bip01 Head",
                     lambda s: ["Bip01 %s Clavicle" % s[0], "Bip01 %s UpperArm" % s[0],
                                "Bip01 %s Forearm" % s[0], "Bip01 %s Hand" % s[0]],
                     lambda s: [None, "Bip01 %s Thigh" % s[0], "Bip01 %s Calf" % s[0],
                                "Bip01 %s Foot" % s[0], "Bip01 %s Toe0" % s[0]],
                     rig=rig, root="Bip01")
    assert_maps(rig.map(), exp)


SIDE_STYLES = {
    ".L": lambda b, s: "%s.%s" % (b, s[0]),
    "_l": lambda b, s: "%s_%s" % (b, s[0].lower()),
    "_L": lambda b, s: "%s_%s" % (b, s[0]),
    " L": lambda b, s: "%s %s" % (b, s[0]),
    "L_": lambda b, s: "%s_%s" % (s[0], b.capitalize()),
    "l_": lambda b, s: "%s_%s" % (s[0].lower(), b),
    "LThigh": lambda b, s: "%s%s" % (s[0], b.capitalize()),
    "LeftThigh": lambda b, s: "%s%s" % (s, b.capitalize()),
    "left_thigh": lambda b, s: "%s_%s" % (s.lower(), b),
    "leftthigh": lambda b, s: "%s%s" % (s.lower(), b),
    "LEFTTHIGH": lambda b, s: "%s%s" % (s.upper(), b.upper()),
    "Left Thigh": lambda b, s: "%s %s" % (s, b.capitalize()),
    "thigh.left": lambda b, s: "%s.%s" % (b, s.lower()),
    "ThighLeft": lambda b, s: "%s%s" % (b.capitalize(), s),
    "thigh-R-jnt": lambda b, s: "%s-%s-jnt" % (b, s[0]),
}


@pytest.mark.parametrize("style", sorted(SIDE_STYLES))
def test_side_styles(style):
    f = SIDE_STYLES[style]
    rig, exp = biped("pelvis", ["spine", "chest"], ["neck"], "head",
                     lambda s: [f("clavicle", s), f("upperarm", s), f("forearm", s), f("hand", s)],
                     lambda s: [None, f("thigh", s), f("shin", s), f("foot", s), f("toe", s)])
    assert_maps(rig.map(), exp)


def test_unseen_but_reasonable_names():
    rig, exp = biped("Hips_JNT", ["LowerBack", "UpperBack"], ["Neck_bone"], "Head_jnt",
                     lambda s: [s[0] + "_Collarbone", s + "UpperArm", s + "_Lower_Arm",
                                "wrist." + s.lower()],
                     lambda s: [None, "thigh." + s.lower(), s[0] + "_Calf", s + "Ankle_jnt",
                                s.lower() + "_toes"])
    m = rig.map()
    assert m.from_hierarchy == []
    assert_maps(m, exp)


# ----------------------------------------------------------------------------
# The sample take and the hierarchy fallback


def sample_skeleton(with_tails=False):
    motion = bvh_convert.to_blender(bvh_parse.read_bvh(SAMPLE_TAKE), global_scale=0.01)
    out = list(motion.names), np.asarray(motion.parents), motion.heads @ motion.conversion.T
    return out + (motion.tails @ motion.conversion.T,) if with_tails else out


SAMPLE_EXPECTED = {
    "Hips": "Hips", "Spine": "Chest", "Chest": "Chest2", "UpperChest": "Chest4",
    "Neck": "Neck", "Head": "Head",
    **{s + j: s + b for s, _ in SIDES for j, b in (
        ("Shoulder", "Collar"), ("UpperArm", "Shoulder"), ("LowerArm", "Elbow"),
        ("Hand", "Wrist"), ("UpperLeg", "Hip"), ("LowerLeg", "Knee"), ("Foot", "Ankle"),
        ("Toes", "Toe"))},
}


def test_sample_take_maps_fully_by_names():
    names, parents, heads = sample_skeleton()
    assert heads[names.index("LeftWrist"), 0] > 0.5      # left is +X
    m = humanoid_map.auto_map(names, parents, heads)
    assert_maps(m, SAMPLE_EXPECTED)
    assert m.from_hierarchy == []


def renamed_and_shuffled(names, parents, heads, seed):
    """The same skeleton with meaningless names, bones in a random order."""
    perm = np.random.default_rng(seed).permutation(len(names))   # new j <- old perm[j]
    new_of_old = np.argsort(perm)
    new_names = ["bone_%03d" % j for j in range(len(names))]
    new_parents = np.array([new_of_old[parents[o]] if parents[o] >= 0 else -1 for o in perm])
    rename = {names[o]: new_names[j] for j, o in enumerate(perm)}
    return new_names, new_parents, heads[perm], rename


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_tails", [False, True])
def test_sample_hierarchy_fallback_with_meaningless_names(seed, with_tails):
    names, parents, heads, tails = sample_skeleton(with_tails=True)
    new_names, new_parents, new_heads, rename = renamed_and_shuffled(names, parents, heads, seed)
    new_tails = None
    if with_tails:
        new_tails = tails[[names.index(o) for o in sorted(rename, key=rename.get)]]
    m = humanoid_map.auto_map(new_names, new_parents, new_heads, new_tails)
    assert_maps(m, {k: rename[v] for k, v in SAMPLE_EXPECTED.items()}, method="hierarchy")


def test_hierarchy_fallback_facing_plus_y_keeps_sides():
    """Turned half a turn (facing +Y), the toes tell the sides apart."""
    names, parents, heads = sample_skeleton()
    turned = heads * np.array([-1.0, -1.0, 1.0])
    new_names, new_parents, new_heads, rename = renamed_and_shuffled(names, parents, turned, 3)
    m = humanoid_map.auto_map(new_names, new_parents, new_heads)
    assert_maps(m, {k: rename[v] for k, v in SAMPLE_EXPECTED.items()}, method="hierarchy")


def test_hierarchy_fallback_skips_cmu_hip_joints():
    rig, exp = cmu()
    names, parents, heads = rig.arrays()
    new_names, new_parents, new_heads, rename = renamed_and_shuffled(names, parents, heads, 4)
    m = humanoid_map.auto_map(new_names, new_parents, new_heads)
    assert rename["LHipJoint"] not in m.values()
    # The hierarchy reads Neck, Neck1, Head as neck, (unmapped) and head, like the names.
    assert_maps(m, {k: rename[v] for k, v in exp.items()}, method="hierarchy")


def test_hierarchy_fallback_mixamo_end_bones():
    """Unnamed Mixamo: the head is below HeadTop_End, the hands before the fingers."""
    rig, exp = biped("Hips", ["Spine", "Spine1", "Spine2"], ["Neck"], "Head",
                     lambda s: [s + "Shoulder", s + "Arm", s + "ForeArm", s + "Hand"],
                     lambda s: [None, s + "UpLeg", s + "Leg", s + "Foot", s + "ToeBase"],
                     pose="A")
    rig.add("HeadTop_End", "Head", (0, -0.01, 1.8))
    for side, s in SIDES:
        hand = rig.head(side + "Hand")
        prev = rig.add(side + "HandIndex1", side + "Hand", hand + (s * 0.05, 0, -0.05))
        rig.add(side + "HandIndex2", prev, hand + (s * 0.08, 0, -0.08))
        rig.add(side + "HandThumb1", side + "Hand", hand + (s * 0.02, -0.03, -0.02))
        rig.add(side + "Toe_End", side + "ToeBase", rig.head(side + "ToeBase") + (0, -0.06, 0))
    new_names, new_parents, new_heads, rename = renamed_and_shuffled(*rig.arrays(), 5)
    m = humanoid_map.auto_map(new_names, new_parents, new_heads)
    assert_maps(m, {k: rename[v] for k, v in exp.items()}, method="hierarchy")


def test_hierarchy_fills_what_names_miss():
    rig, exp = biped("Hips", ["Spine", "Spine1", "Spine2"], ["Neck"], "Head",
                     lambda s: [s + "Shoulder", s + "Arm", s + "ForeArm", s + "Hand"],
                     lambda s: [None, s + "UpLeg", s + "Leg", s + "Foot", "Bone" + s[0] + "7"])
    m = rig.map()
    assert m.method == "names"
    assert m.from_hierarchy == ["LeftToes", "RightToes"]
    assert_maps(m, exp)


def test_unmappable_skeleton_reports_every_missing_joint():
    rig = Rig()
    parent = None
    for k in range(5):
        parent = rig.add("bone_%d" % k, parent, (0, 0, 0.3 * k))
    m = rig.map()
    assert m.missing_required == list(humanoid_joints.REQUIRED)
    with pytest.raises(humanoid_joints.HumanoidError) as err:
        humanoid_joints.check_mapping(m, rig.names)
    assert str(err.value) == "The mapping lacks required joints: %s." % ", ".join(humanoid_joints.REQUIRED)


def test_bad_inputs_are_refused():
    names, parents, heads = sample_skeleton()
    with pytest.raises(humanoid_joints.HumanoidError, match="parents"):
        humanoid_map.auto_map(names, parents[:-1], heads)
    with pytest.raises(humanoid_joints.HumanoidError, match="heads"):
        humanoid_map.auto_map(names, parents, heads[:, :2])
    loop = parents.copy()
    loop[0] = 5
    with pytest.raises(humanoid_joints.HumanoidError, match="loop"):
        humanoid_map.auto_map(names, loop, heads)
    with pytest.raises(humanoid_joints.HumanoidError, match="unique"):
        humanoid_map.auto_map(names[:-1] + ["Hips"], parents, heads)


# ----------------------------------------------------------------------------
# Validation and presets


def test_check_mapping_lists_every_missing_joint():
    m = dict(SAMPLE_EXPECTED)
    del m["LeftFoot"], m["RightFoot"], m["LeftToes"]
    with pytest.raises(humanoid_joints.HumanoidError) as err:
        humanoid_joints.check_mapping(m, list(SAMPLE_EXPECTED.values()))
    assert str(err.value) == "The mapping lacks required joints: LeftFoot, RightFoot."


def test_check_mapping_refuses_double_mapping_and_unknown_bones():
    m = {"LeftUpperLeg": "thigh.L", "LeftLowerLeg": "thigh.L"}
    with pytest.raises(humanoid_joints.HumanoidError) as err:
        humanoid_joints.check_mapping(m, ["thigh.L"])
    msg = str(err.value)
    assert "Bone 'thigh.L' is mapped twice: LeftUpperLeg and LeftLowerLeg." in msg
    assert "lacks required joints: Hips, Spine, Head" in msg
    m = dict(SAMPLE_EXPECTED, LeftHand="LeftPalm", Tail="Tail1")
    with pytest.raises(humanoid_joints.HumanoidError) as err:
        humanoid_joints.check_mapping(m, list(SAMPLE_EXPECTED.values()))
    msg = str(err.value)
    assert "'LeftPalm' (LeftHand)" in msg and "Unknown humanoid joints: 'Tail'" in msg
    humanoid_joints.check_mapping(SAMPLE_EXPECTED, list(SAMPLE_EXPECTED.values()))


def test_preset_round_trip():
    names, parents, heads = sample_skeleton()
    m = humanoid_map.auto_map(names, parents, heads)
    text = humanoid_json.mapping_to_json(m)
    data = json.loads(text)
    assert list(data["joints"]) == [j for j in humanoid_joints.CANONICAL if j in m]
    back = humanoid_json.mapping_from_json(text)
    assert back == m and back.method == "preset" and back.missing_required == []
    assert humanoid_json.mapping_from_json(json.dumps({"Hips": "Hips"})) == {"Hips": "Hips"}


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON (line 1, column 2)"),
    ("[1, 2]", "must be a JSON object"),
    ('{"Hips": "Hips", "Tail": "t", "LeftWing": "w"}',
     "unknown humanoid joints: 'Tail', 'LeftWing'"),
    ('{"Hips": 3}', "bone for Hips must be a name"),
    ('{"format": "other", "joints": {}}', "format"),
    ('{"joints": [1]}', "must be an object"),
])
def test_preset_errors(text, words):
    with pytest.raises(humanoid_joints.HumanoidError, match=re.escape(words)):
        humanoid_json.mapping_from_json(text)


def test_preset_writer_refuses_unknown_joints():
    with pytest.raises(humanoid_joints.HumanoidError, match="Unknown humanoid joints: 'Tail'"):
        humanoid_json.mapping_to_json({"Hips": "a", "Tail": "b"})
