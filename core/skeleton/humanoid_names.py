"""What a bone's name says about the humanoid joint it is.

A name loses its namespace (``mixamorig:``, anything up to the last ``:`` or
``|``), a Rigify-style prefix (``DEF-``, ``ORG-``, ``MCH-``, ``VIS_``, ``WGT-``)
and a 3ds Max ``Bip01`` lead, then is cut into lower-case tokens at separators,
camelCase humps and digit runs (``LHipJoint`` -> l, hip, joint;
``DEF-upper_arm.L.001`` -> upper, arm, l, 001). Then:

- side: a token ``l``/``left``/``lft`` or ``r``/``right``/``rgt`` anywhere, a
  token starting with ``left``/``right`` (``leftupleg``), or a lone ``l``/``r``
  glued to a known word (``lthigh``); both sides at once means no side;
- number: the last digit run (``Spine2`` -> 2, ``thigh.L.001`` -> 1);
- ``fk`` marks an FK control and is dropped;
- the remaining tokens, joined, must equal a known word exactly, first as they
  are and then without filler words (``jnt``, ``joint``, ``bone``, ``bind``...).
  Exact matching is what keeps ``upperarm_twist_01_l``, ``hand_ik.L``,
  ``LeftToe_End``, ``LeftHandIndex1`` or ``clavicle_pec_l`` out.

Words without a side: hips (hips, hip, pelvis), torso, spine-like (spine,
chest, upperchest, lowerback, back, abdomen, waist...), neck, head. Words with a
side: shoulder (clavicle, collar), upper arm (upperarm, uparm, humerus), lower
arm (forearm, lowerarm, elbow), hand (hand, wrist), upper leg (upleg, upperleg,
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


_PREFIX_RE = re.compile(r"^(ORG|MCH|DEF|VIS|WGT)[-_]", re.IGNORECASE)
_TOKEN_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
RIGIFY_SPINE_RE = re.compile(r"spine(?:_fk)?(?:\.(\d{3}))?")

_LEFT = {"l", "left", "lft"}
_RIGHT = {"r", "right", "rgt"}
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
    "neck": ("neck",),
    "head": ("head",),
}.items():
    _CENTRAL.update(dict.fromkeys(_words, _kind))

SIDED = {}
for _kind, _words in {
    "shoulder": ("clavicle", "clav", "collar", "collarbone", "scapula"),
    "shoulder?": ("shoulder",),
    "upperarm": ("upperarm", "uparm", "humerus"),
    "arm?": ("arm",),
    "lowerarm": ("forearm", "lowerarm", "loarm", "elbow"),
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
        base = re.split(r"[:|]", name)[-1]
        m = _PREFIX_RE.match(base)
        self.prefix = m.group(1).upper() if m else ""
        self.base = base[m.end():] if m else base
        toks = [t.lower() for t in _TOKEN_RE.findall(self.base)]
        if len(toks) >= 2 and toks[0] == "bip" and toks[1].isdigit():
            toks = toks[2:]
        sides = {"Left" for t in toks if t in _LEFT} | {"Right" for t in toks if t in _RIGHT}
        toks = [t for t in toks if t not in _LEFT and t not in _RIGHT]
        if not sides:
            for k, t in enumerate(toks):
                for word, side in (("left", "Left"), ("right", "Right")):
                    if t.startswith(word) and len(t) > len(word) and not t[len(word)].isdigit():
                        sides = {side}
                        toks[k] = t[len(word):]
                        break
                if sides:
                    break
        digits = [t for t in toks if t.isdigit()]
        self.number = int(digits[-1]) if digits else None
        self.fk = "fk" in toks
        words = [t for t in toks if not t.isdigit() and t != "fk"]
        self.stop = any(w in _STOP for w in words)
        self.side = sides.pop() if len(sides) == 1 else None
        self.core, self.kind = "".join(words), None
        if len(sides) > 1:          # both sides named: nothing can be said
            return
        for core in (self.core, "".join(w for w in words if w not in _FILLER)):
            kind = (SIDED if self.side else _CENTRAL).get(core)
            if kind:
                self.core, self.kind = core, kind
                return
        # A lone l/r glued to a known word: "lthigh", "RHand".
        if self.side is None and len(core) > 2 and core[0] in "lr" and core[1:] in SIDED:
            self.side = "Left" if core[0] == "l" else "Right"
            self.core, self.kind = core[1:], SIDED[core[1:]]

    @property
    def eligible(self):
        """May be chosen at all (not a Rigify mechanism/original bone, not a helper)."""
        return self.prefix in ("", "DEF") and not self.stop
