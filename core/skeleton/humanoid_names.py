"""What a bone's name says about the humanoid joint it is.

The side, the namespace, the prefix and the tokens come from the rule shared
with the mirror (:mod:`.side_names`: ``LHipJoint`` -> Left; hip, joint;
``DEF-upper_arm.L.001`` -> Left; upper, arm, 001; ``lhumerus`` -> Left; humerus).
Then:

- number: the last digit run (``Spine2`` -> 2, ``thigh.L.001`` -> 1);
- ``fk`` marks an FK control and is dropped;
- the remaining tokens, joined, must equal a known word exactly, first as they
  are and then without filler words (``jnt``, ``joint``, ``bone``, ``bind``...).
  Exact matching is what keeps ``upperarm_twist_01_l``, ``hand_ik.L``,
  ``LeftToe_End``, ``LeftHandIndex1`` or ``clavicle_pec_l`` out;
- a vertebra's name (``L5``, ``L3``, ``T12``, ``T8``, ``C7``: Xsens) is a
  spine-like bone without a side.

Words without a side: hips (hips, hip, pelvis), torso, spine-like (spine,
chest, upperchest, lowerback, back, thorax, abdomen, waist...), neck (neck,
lowerneck, upperneck), head. Words with a
side: shoulder (clavicle, collar), upper arm (upperarm, uparm, humerus), lower
arm (forearm, lowerarm, elbow, radius), hand (hand, wrist), upper leg (upleg, upperleg,
thigh, femur), lower leg (lowerleg, shin, calf, knee), foot (foot, ankle), toes
(toe, toes, toebase, ball), and CMU's ``hipjoint``, never mapped. Three words
depend on the rest of the same side:

- ``shoulder`` is the upper arm when a collar/clavicle exists or no other upper
  arm is named (Collar/Shoulder/Elbow/Wrist), else the clavicle (Mixamo, CMU);
- ``arm`` is the upper arm unless an explicit upper arm exists;
- sided ``hip`` is the upper leg unless an explicit upper leg exists;
- ``leg`` is the lower leg when an upper leg exists (Mixamo ``LeftLeg``), else
  the upper leg when a lower leg is named, else the lower leg.
"""

import re

from .side_names import SideName

RIGIFY_SPINE_RE = re.compile(r"spine(?:_fk)?(?:\.(\d{3}))?")
_VERTEBRA_RE = re.compile(r"[LTCS]\d{1,2}", re.IGNORECASE)

_FILLER = {"jnt", "jt", "joint", "bone", "bn", "bind", "def", "deform", "skin", "ctrl", "ctl"}
_STOP = {
    "ik", "twist", "twst", "roll", "tweak", "pole", "target", "tgt", "end", "nub",
    "tip", "helper", "corrective", "jiggle", "socket", "pivot", "mch", "org", "wgt", "vis",
}

_CENTRAL = {}
for _kind, _words in {
    "hips": ("hips", "hip", "pelvis"),
    "torso": ("torso",),
    "spine": ("spine", "chest", "upperchest", "lowerchest", "lowerback", "upperback", "back",
              "abdomen", "waist", "lowerspine", "midspine", "middlespine", "upperspine",
              "ribcage", "thorax"),
    "neck": ("neck", "lowerneck", "upperneck"),
    "head": ("head",),
}.items():
    _CENTRAL.update(dict.fromkeys(_words, _kind))

SIDED = {}
for _kind, _words in {
    "shoulder": ("clavicle", "clav", "collar", "collarbone", "scapula"),
    "shoulder?": ("shoulder",),
    "upperarm": ("upperarm", "uparm", "humerus"),
    "arm?": ("arm",),
    "lowerarm": ("forearm", "lowerarm", "loarm", "elbow", "radius"),
    "hand": ("hand", "wrist"),
    "upperleg": ("upleg", "upperleg", "thigh", "femur"),
    "hip?": ("hip",),
    "leg?": ("leg",),
    "lowerleg": ("lowerleg", "loleg", "shin", "calf", "knee", "tibia"),
    "foot": ("foot", "ankle"),
    "toes": ("toe", "toes", "toebase", "ball"),
    "hipjoint": ("hipjoint",),
}.items():
    SIDED.update(dict.fromkeys(_words, _kind))

LIMB_JOINT = {
    "shoulder": "Shoulder", "upperarm": "UpperArm", "lowerarm": "LowerArm", "hand": "Hand",
    "upperleg": "UpperLeg", "lowerleg": "LowerLeg", "foot": "Foot", "toes": "Toes",
}


class BoneName:
    """What a bone's name says."""

    __slots__ = ("index", "name", "base", "prefix", "side", "number", "fk", "core", "kind",
                 "stop")

    def __init__(self, index, name):
        self.index = index
        self.name = name
        parts = SideName(name)
        self.prefix, self.base, self.side = parts.prefix, parts.base, parts.side
        toks = parts.tokens
        digits = [t for t in toks if t.isdigit()]
        self.number = int(digits[-1]) if digits else None
        self.fk = "fk" in toks
        words = [t for t in toks if not t.isdigit() and t != "fk"]
        self.stop = any(w in _STOP for w in words)
        self.core, self.kind = "".join(words), None
        if parts.both:          # both sides named: nothing can be said
            return
        if self.side is None and _VERTEBRA_RE.fullmatch(self.base):
            self.core, self.kind = "vertebra", "spine"
            return
        for core in (self.core, "".join(w for w in words if w not in _FILLER)):
            kind = (SIDED if self.side else _CENTRAL).get(core)
            if kind:
                self.core, self.kind = core, kind
                return

    @property
    def eligible(self):
        """May be chosen at all (not a Rigify mechanism/original bone, not a helper)."""
        return self.prefix in ("", "DEF") and not self.stop
