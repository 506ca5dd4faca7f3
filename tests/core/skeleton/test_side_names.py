"""The one side-name rule (core.skeleton.side_names) on the full name lists of
real skeletons: the side each bone names, its counterpart as the mirror pairs
it, and the humanoid joints the mapping gives the main bones.

Each table is a hierarchy written one bone per line (depth = leading spaces);
a ``*`` marks a subtree of the first side, whose other-side copy the table's
own renaming makes under the same parent (written out by hand per convention,
independent of the rule under test). Rest heads are a plain T-pose placed from
the expected mapping (Z up, facing -Y, left +X), other bones near their parent.
"""

import numpy as np
import pytest

from core.io import bvh_parse
from core.skeleton import humanoid_map, mirror, side_names
from sample_paths import SAMPLE_TPOSE

T_POSE = {
    "Hips": (0, 0, 1.0), "Spine": (0, 0, 1.1), "Chest": (0, 0, 1.25), "UpperChest": (0, 0, 1.35),
    "Neck": (0, 0, 1.5), "Head": (0, 0, 1.6), "Shoulder": (0.05, 0, 1.45), "UpperArm": (0.18, 0, 1.45),
    "LowerArm": (0.45, 0, 1.45), "Hand": (0.7, 0, 1.45), "UpperLeg": (0.1, 0, 0.95),
    "LowerLeg": (0.1, 0, 0.5), "Foot": (0.1, 0, 0.08), "Toes": (0.1, -0.12, 0.02),
}

MAIN_ARM = ("Shoulder", "UpperArm", "LowerArm", "Hand")
MAIN_LEG = ("UpperLeg", "LowerLeg", "Foot", "Toes")


def _swap_words(pairs):
    def swap(name):
        for a, b in pairs:
            name = name.replace(a, b)
        return name
    return swap


SKELETONS = {
    "CMU BVH": dict(side="Left", swap=_swap_words([("Left", "Right"), ("LHip", "RHip"), ("LThumb", "RThumb")]),
                    tree="""
Hips
 *LHipJoint
  LeftUpLeg
   LeftLeg
    LeftFoot
     LeftToeBase
 LowerBack
  Spine
   Spine1
    Neck
     Neck1
      Head
    *LeftShoulder
     LeftArm
      LeftForeArm
       LeftHand
        LeftFingerBase
         LeftHandIndex1
        LThumb
""", expected=dict(Hips="Hips", Spine="LowerBack", Chest="Spine", UpperChest="Spine1", Neck="Neck", Head="Head",
                   Shoulder="LeftShoulder", UpperArm="LeftArm", LowerArm="LeftForeArm", Hand="LeftHand",
                   UpperLeg="LeftUpLeg", LowerLeg="LeftLeg", Foot="LeftFoot", Toes="LeftToeBase")),
    "CMU 131 export": dict(side="Left", swap=_swap_words([("Left", "Right"), ("LHip", "RHip"), ("lhand", "rhand"),
                                                          ("LFingers", "RFingers"), ("LThumb", "RThumb")]),
                           tree="""
Hips
 *LHipJoint
  LeftHip
   LeftKnee
    LeftAnkle
     LeftToe
 LowerBack
  Spine
   Spine1
    Neck
     Neck1
      Head
    *LeftCollar
     LeftShoulder
      LeftElbow
       LeftWrist
        lhand
         LFingers
        LThumb
""", expected=dict(Hips="Hips", Spine="LowerBack", Neck="Neck", Head="Head",
                   Shoulder="LeftCollar", UpperArm="LeftShoulder", LowerArm="LeftElbow", Hand="LeftWrist",
                   UpperLeg="LeftHip", LowerLeg="LeftKnee", Foot="LeftAnkle", Toes="LeftToe")),
    "CMU ASF": dict(side="Left", swap=lambda n: "r" + n[1:], tree="""
root
 *lhipjoint
  lfemur
   ltibia
    lfoot
     ltoes
 lowerback
  upperback
   thorax
    lowerneck
     upperneck
      head
    *lclavicle
     lhumerus
      lradius
       lwrist
        lhand
         lfingers
        lthumb
""", expected=dict(Hips="root", Spine="lowerback", Chest="upperback", UpperChest="thorax", Neck="lowerneck",
                   Head="head", Shoulder="lclavicle", UpperArm="lhumerus", LowerArm="lradius", Hand="lwrist",
                   UpperLeg="lfemur", LowerLeg="ltibia", Foot="lfoot", Toes="ltoes")),
    "Bandai Namco 2": dict(side="Left", swap=_swap_words([("_L", "_R")]), tree="""
joint_Root
 Hips
  Spine
   Chest
    Neck
     Head
    *Shoulder_L
     UpperArm_L
      LowerArm_L
       Hand_L
  *UpperLeg_L
   LowerLeg_L
    Foot_L
     Toes_L
""", expected=dict(Hips="Hips", Spine="Spine", Chest="Chest", Neck="Neck", Head="Head", Shoulder="Shoulder_L",
                   UpperArm="UpperArm_L", LowerArm="LowerArm_L", Hand="Hand_L", UpperLeg="UpperLeg_L",
                   LowerLeg="LowerLeg_L", Foot="Foot_L", Toes="Toes_L")),
    "Mixamo": dict(side="Left", swap=_swap_words([("Left", "Right")]), tree="""
mixamorig:Hips
 mixamorig:Spine
  mixamorig:Spine1
   mixamorig:Spine2
    mixamorig:Neck
     mixamorig:Head
      mixamorig:HeadTop_End
    *mixamorig:LeftShoulder
     mixamorig:LeftArm
      mixamorig:LeftForeArm
       mixamorig:LeftHand
        mixamorig:LeftHandThumb1
        mixamorig:LeftHandIndex1
         mixamorig:LeftHandIndex2
 *mixamorig:LeftUpLeg
  mixamorig:LeftLeg
   mixamorig:LeftFoot
    mixamorig:LeftToeBase
     mixamorig:LeftToe_End
""", expected={k: "mixamorig:" + v for k, v in dict(
        Hips="Hips", Spine="Spine", Chest="Spine1", UpperChest="Spine2", Neck="Neck", Head="Head",
        Shoulder="LeftShoulder", UpperArm="LeftArm", LowerArm="LeftForeArm", Hand="LeftHand",
        UpperLeg="LeftUpLeg", LowerLeg="LeftLeg", Foot="LeftFoot", Toes="LeftToeBase").items()}),
    "Unreal mannequin": dict(side="Left", swap=lambda n: n[:-2] + "_r", tree="""
root
 pelvis
  spine_01
   spine_02
    spine_03
     neck_01
      head
     *clavicle_l
      upperarm_l
       lowerarm_l
        hand_l
         index_01_l
         thumb_01_l
        lowerarm_twist_01_l
       upperarm_twist_01_l
  *thigh_l
   calf_l
    foot_l
     ball_l
    calf_twist_01_l
   thigh_twist_01_l
 ik_foot_root
  *ik_foot_l
 ik_hand_root
  ik_hand_gun
   *ik_hand_l
""", expected=dict(Hips="pelvis", Spine="spine_01", Chest="spine_02", UpperChest="spine_03", Neck="neck_01",
                   Head="head", Shoulder="clavicle_l", UpperArm="upperarm_l", LowerArm="lowerarm_l", Hand="hand_l",
                   UpperLeg="thigh_l", LowerLeg="calf_l", Foot="foot_l", Toes="ball_l")),
    "Rigify DEF": dict(side="Left", swap=_swap_words([(".L", ".R")]), tree="""
DEF-spine
 DEF-spine.001
  DEF-spine.002
   DEF-spine.003
    DEF-spine.004
     DEF-spine.005
      DEF-spine.006
    *DEF-shoulder.L
     DEF-upper_arm.L
      DEF-upper_arm.L.001
       DEF-forearm.L
        DEF-forearm.L.001
         DEF-hand.L
          DEF-thumb.01.L
    *DEF-breast.L
 *DEF-pelvis.L
 *DEF-thigh.L
  DEF-thigh.L.001
   DEF-shin.L
    DEF-shin.L.001
     DEF-foot.L
      DEF-toe.L
""", expected=dict(Hips="DEF-spine", Spine="DEF-spine.001", Chest="DEF-spine.002", UpperChest="DEF-spine.003",
                   Neck="DEF-spine.004", Head="DEF-spine.006", Shoulder="DEF-shoulder.L",
                   UpperArm="DEF-upper_arm.L", LowerArm="DEF-forearm.L", Hand="DEF-hand.L",
                   UpperLeg="DEF-thigh.L", LowerLeg="DEF-shin.L", Foot="DEF-foot.L", Toes="DEF-toe.L")),
    "Xsens MVN": dict(side="Right", swap=_swap_words([("Right", "Left")]), tree="""
Pelvis
 L5
  L3
   T12
    T8
     Neck
      Head
     *RightShoulder
      RightUpperArm
       RightForeArm
        RightHand
 *RightUpperLeg
  RightLowerLeg
   RightFoot
    RightToe
""", expected=dict(Hips="Pelvis", Spine="L5", Chest="L3", UpperChest="T8", Neck="Neck", Head="Head",
                   Shoulder="RightShoulder", UpperArm="RightUpperArm", LowerArm="RightForeArm", Hand="RightHand",
                   UpperLeg="RightUpperLeg", LowerLeg="RightLowerLeg", Foot="RightFoot", Toes="RightToe")),
    "Rokoko": dict(side="Left", swap=_swap_words([("Left", "Right")]), tree="""
Hips
 Spine1
  Spine2
   Spine3
    Spine4
     Neck
      Head
     *LeftShoulder
      LeftArm
       LeftForeArm
        LeftHand
         LeftFinger1Metacarpal
          LeftFinger1Proximal
 *LeftThigh
  LeftShin
   LeftFoot
    LeftToe
     LeftToeEnd
""", expected=dict(Hips="Hips", Spine="Spine1", Chest="Spine2", UpperChest="Spine4", Neck="Neck", Head="Head",
                   Shoulder="LeftShoulder", UpperArm="LeftArm", LowerArm="LeftForeArm", Hand="LeftHand",
                   UpperLeg="LeftThigh", LowerLeg="LeftShin", Foot="LeftFoot", Toes="LeftToe")),
    "Perception Neuron": dict(side="Right", swap=_swap_words([("Right", "Left")]), tree="""
Hips
 *RightUpLeg
  RightLeg
   RightFoot
 Spine
  Spine1
   Spine2
    Spine3
     Neck
      Head
     *RightShoulder
      RightArm
       RightForeArm
        RightHand
         RightHandThumb1
          RightHandThumb2
         RightInHandIndex
          RightHandIndex1
""", expected=dict(Hips="Hips", Spine="Spine", Chest="Spine1", UpperChest="Spine3", Neck="Neck", Head="Head",
                   Shoulder="RightShoulder", UpperArm="RightArm", LowerArm="RightForeArm", Hand="RightHand",
                   UpperLeg="RightUpLeg", LowerLeg="RightLeg", Foot="RightFoot")),
    "3ds Max Biped": dict(side="Left", swap=_swap_words([(" L ", " R ")]), tree="""
Bip01
 Bip01 Pelvis
  Bip01 Spine
   Bip01 Spine1
    Bip01 Neck
     Bip01 Head
     *Bip01 L Clavicle
      Bip01 L UpperArm
       Bip01 L Forearm
        Bip01 L Hand
         Bip01 L Finger0
  *Bip01 L Thigh
   Bip01 L Calf
    Bip01 L Foot
     Bip01 L Toe0
""", expected=dict(Hips="Bip01 Pelvis", Spine="Bip01 Spine", Chest="Bip01 Spine1", Neck="Bip01 Neck",
                   Head="Bip01 Head", Shoulder="Bip01 L Clavicle", UpperArm="Bip01 L UpperArm",
                   LowerArm="Bip01 L Forearm", Hand="Bip01 L Hand", UpperLeg="Bip01 L Thigh",
                   LowerLeg="Bip01 L Calf", Foot="Bip01 L Foot", Toes="Bip01 L Toe0")),
}


def build(spec):
    """(names, parents, heads, sides, counterparts, mapping) of a table's skeleton."""
    first, other = spec["side"], "Right" if spec["side"] == "Left" else "Left"
    lines = [line for line in spec["tree"].splitlines() if line.strip()]
    rows = []    # (depth, name, starred)
    for line in lines:
        depth = len(line) - len(line.lstrip(" "))
        name = line.strip()
        rows.append((depth, name.lstrip("*"), name.startswith("*")))
    names, parents, sides, stack = [], [], [], []

    def add(block, swap, side):
        local = []   # stack of (depth, index) inside the block
        for depth, name, _star in block:
            while local and local[-1][0] >= depth:
                local.pop()
            parent = local[-1][1] if local else block_parent
            names.append(swap(name) if swap else name)
            parents.append(parent)
            sides.append(side)
            local.append((depth, len(names) - 1))

    k = 0
    while k < len(rows):
        depth, name, star = rows[k]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        block_parent = stack[-1][1] if stack else -1
        if star:
            end = k + 1
            while end < len(rows) and rows[end][0] > depth:
                end += 1
            block = rows[k:end]
            start = len(names)
            add(block, None, first)
            stack.append((depth, start))   # later siblings hang beside the block
            mirror_start = len(names)
            add(block, spec["swap"], other)
            counterpart = {start + i: mirror_start + i for i in range(end - k)}
            spec.setdefault("_pairs", {}).update(counterpart)
            stack.pop()
            k = end
            continue
        names.append(name)
        parents.append(block_parent)
        sides.append(None)
        stack.append((depth, len(names) - 1))
        k += 1
    pairs = np.arange(len(names))
    for a, b in spec.pop("_pairs").items():
        pairs[a], pairs[b] = b, a
    mapping = {}
    for joint, bone in spec["expected"].items():
        if joint in MAIN_ARM + MAIN_LEG:
            mapping[first + joint] = bone
            mapping[other + joint] = names[pairs[names.index(bone)]]
        else:
            mapping[joint] = bone
    heads = _heads(names, parents, sides, mapping)
    return names, np.array(parents), heads, sides, pairs, mapping


def _heads(names, parents, sides, mapping):
    where = {}
    for joint, bone in mapping.items():
        key = joint[4:] if joint.startswith("Left") else joint[5:] if joint.startswith("Right") else joint
        x, y, z = T_POSE[key]
        where[bone] = (-x if joint.startswith("Right") else x, y, z)
    heads = np.zeros((len(names), 3))
    for j, name in enumerate(names):
        if name in where:
            heads[j] = where[name]
        elif parents[j] >= 0:
            step = {"Left": (0.03, 0, 0), "Right": (-0.03, 0, 0)}.get(sides[j], (0, 0, 0.03))
            heads[j] = heads[parents[j]] + step
    return heads


@pytest.mark.parametrize("convention", sorted(SKELETONS))
def test_real_skeletons_sides_counterparts_and_mapping(convention):
    names, parents, heads, sides, pairs, mapping = build(dict(SKELETONS[convention]))
    assert sum(s is not None for s in sides) >= 8    # the table does hold sided bones
    for name, side in zip(names, sides):
        assert side_names.side_of(name) == side, name
    np.testing.assert_array_equal(mirror.pair_bones(names, parents), pairs)
    for j, name in enumerate(names):
        assert mirror.counterpart_name(name, names) == names[pairs[j]], name
    found = humanoid_map.auto_map(names, parents, heads)
    assert found.missing_required == []
    for joint, bone in mapping.items():
        assert found.get(joint) == bone, (convention, joint)
    # The mirror's pairs agree with the mapping's sides.
    np.testing.assert_array_equal(mirror.pair_bones(names, parents, mapping=found), pairs)


def test_sample_take_skeleton():
    bvh = bvh_parse.read_bvh(SAMPLE_TPOSE)
    names = list(bvh.names)
    parents = list(bvh.parents)
    pairs = mirror.pair_bones(names, parents)
    for j, name in enumerate(names):
        want = "Left" if name.startswith("Left") else "Right" if name.startswith("Right") else None
        assert side_names.side_of(name) == want
        other = name.replace("Left", "#").replace("Right", "Left").replace("#", "Right")
        assert names[pairs[j]] == other


@pytest.mark.parametrize("name, side, other", [
    ("lhand", "Left", "rhand"), ("LThumb", "Left", "RThumb"), ("LHipJoint", "Left", "RHipJoint"),
    ("hand_l", "Left", "hand_r"), ("Hand_L", "Left", "Hand_R"), ("hand.L", "Left", "hand.R"),
    ("hand-l", "Left", "hand-r"), ("thigh_l", "Left", "thigh_r"), ("l_hand", "Left", "r_hand"),
    ("L_Hand", "Left", "R_Hand"), ("RHAND", "Right", "LHAND"), ("HandRight", "Right", "HandLeft"),
    ("leftupleg", "Left", "rightupleg"), ("LEFT_FOOT", "Left", "RIGHT_FOOT"), ("Bip001 R Toe0", "Right", "Bip001 L Toe0"),
    ("mixamorig:RightHandIndex1", "Right", "mixamorig:LeftHandIndex1"), ("DEF-upper_arm.L.001", "Left",
                                                                           "DEF-upper_arm.R.001"),
    ("Character1_LeftUpLeg", "Left", "Character1_RightUpLeg"), ("foot_lft", "Left", "foot_rgt"),
    ("rig:DEF-hand.L", "Left", "rig:DEF-hand.R"), ("Armature|ORG-l_thigh", "Left", "Armature|ORG-r_thigh"),
    ("rradius", "Right", "lradius"), ("lfingers", "Left", "rfingers"),
])
def test_side_styles(name, side, other):
    assert side_names.side_of(name) == side
    assert side_names.counterpart_candidate(name) == other


@pytest.mark.parametrize("name", [
    "Calf", "Ball", "Clavicle", "Pelvis", "L5", "L3", "T12", "ROOT", "Root", "LowerBack",
    "lowerarm", "Ribs", "radius", "ring_01", "Rib", "Leg", "Reference", "Lumbar", "Left_R", "LeftHandRight",
])
def test_no_side_from_inside_a_word(name):
    assert side_names.side_of(name) is None
    assert mirror.counterpart_name(name, [name]) == name


def test_prefix_after_a_namespace():
    parts = side_names.SideName("rig:DEF-upper_arm.L.001")
    assert (parts.prefix, parts.base, parts.side, parts.tokens) == ("DEF", "upper_arm.L.001", "Left",
                                                                     ["upper", "arm", "001"])
