"""Map a skeleton's bones to canonical humanoid joints.

The canonical joints carry Unity's HumanBodyBones names (see ``CANONICAL``).
:func:`auto_map` reads the bone names first and then fills what they did not
give from the shape of the hierarchy; when the names give fewer than half of
the required joints, the hierarchy alone decides.

Reading a name
--------------
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

Several candidates for one joint: FK controls first, then the lowest number
(``DEF-upper_arm.L`` before its twist segment ``DEF-upper_arm.L.001``), then the
shallowest. ``ORG-``/``MCH-``/``VIS_``/``WGT-`` bones and bones with a helper
word (ik, twist, roll, tweak, pole, target, end, corrective...) are never
chosen, by names or by the hierarchy fill.

Deform and control sets: ``DEF-`` bones and the other bones are mapped
separately; ``prefer`` says whose answer wins ("DEF" or "FK"), the other set
fills its gaps.

The spine column: Hips is the hips word (with ``prefer="FK"`` Rigify's
``torso``, which carries the whole body, comes before ``hips``). The spine
chain is the spine-like bones between the hips and the neck, in hierarchy
order: Spine is the first, Chest the second, UpperChest the last when there are
three or more. Neck is the lowest neck bone, Head the head. Without a hips word,
a spine-like bone that is the common ancestor of both upper legs is the hips.
Rigify numbers its column instead (``spine``, ``spine.001``..., with any
prefix or ``_fk``): number 0 is the hips, the bone the shoulders hang from is
the UpperChest (number 3 in the meta-rig), the next one the neck, the highest
number the head; named ``neck``/``head``/``hips``/``torso`` controls win, and
then number 0 (the FK pelvis) is left out.

Hierarchy rules
---------------
Heights are compared with a threshold of a fifth of the skeleton's height. The
hips are the first bone (breadth first from the roots) with two child subtrees
that only go down and one that only goes up. The two down subtrees reaching
lowest are the legs; the up subtree reaching highest holds the spine, whose
path runs to its topmost leaf (the head; when that leaf sits more than 8.5 % of
the height above its parent, it is a skull-top end bone and its parent is the
head). Off that path, the two subtrees
reaching farthest sideways, on opposite sides, are the arms; the deeper bone
they hang from ends the spine chain (UpperChest), the path above it is neck(s)
and head. A limb's chain follows, from its first bone, the child whose subtree
reaches farthest; its two longest consecutive segments are upper and lower
limb, the bone after them the hand or foot, the bone before them (arm) the
shoulder and the bone after the foot the toes; a short hip-joint bone in front
(CMU ``LHipJoint``) is thus skipped. Left is +X: the rest pose faces -Y, unless
the toes point to +Y, in which case the sides are swapped.
"""

import json
import re

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "CANONICAL",
    "REQUIRED",
    "OPTIONAL",
    "HumanoidError",
    "Mapping",
    "auto_map",
    "check_mapping",
    "mapping_to_json",
    "mapping_from_json",
]


class HumanoidError(MotionMatchingError):
    """A humanoid mapping that cannot be made or used."""


CANONICAL = (
    "Hips", "Spine", "Chest", "UpperChest", "Neck", "Head",
    "LeftShoulder", "LeftUpperArm", "LeftLowerArm", "LeftHand",
    "RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",
    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "LeftToes",
    "RightUpperLeg", "RightLowerLeg", "RightFoot", "RightToes",
)
REQUIRED = (
    "Hips", "Spine", "Head",
    "LeftUpperArm", "LeftLowerArm", "LeftHand",
    "RightUpperArm", "RightLowerArm", "RightHand",
    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot",
    "RightUpperLeg", "RightLowerLeg", "RightFoot",
)
OPTIONAL = tuple(j for j in CANONICAL if j not in REQUIRED)

# Each joint's nearest canonical ancestor (used to check hierarchy fills).
_CANON_PARENT = {
    "Hips": None, "Spine": "Hips", "Chest": "Spine", "UpperChest": "Chest",
    "Neck": "UpperChest", "Head": "Neck",
}
for _s in ("Left", "Right"):
    _CANON_PARENT.update({
        _s + "Shoulder": "UpperChest", _s + "UpperArm": _s + "Shoulder",
        _s + "LowerArm": _s + "UpperArm", _s + "Hand": _s + "LowerArm",
        _s + "UpperLeg": "Hips", _s + "LowerLeg": _s + "UpperLeg",
        _s + "Foot": _s + "LowerLeg", _s + "Toes": _s + "Foot",
    })
_CANON_CHILDREN = {j: [c for c in CANONICAL if _CANON_PARENT[c] == j] for j in CANONICAL}


class Mapping(dict):
    """``{canonical joint: bone name}`` in canonical order.

    ``method`` is "names", "hierarchy" or "preset"; ``from_hierarchy`` lists the
    joints the hierarchy added to a name mapping; ``missing_required`` is
    worked out from the current contents.
    """

    def __init__(self, joints=(), method="names", from_hierarchy=()):
        joints = dict(joints)
        ordered = [(j, joints.pop(j)) for j in CANONICAL if j in joints]
        super().__init__(ordered + list(joints.items()))
        self.method = method
        self.from_hierarchy = [j for j in CANONICAL if j in set(from_hierarchy)]

    @property
    def missing_required(self):
        return [j for j in REQUIRED if not self.get(j)]

    def __repr__(self):
        return "Mapping(%s, method=%r)" % (dict.__repr__(self), self.method)


# ----------------------------------------------------------------------------
# Names

_PREFIX_RE = re.compile(r"^(ORG|MCH|DEF|VIS|WGT)[-_]", re.IGNORECASE)
_TOKEN_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_RIGIFY_SPINE_RE = re.compile(r"spine(?:_fk)?(?:\.(\d{3}))?")

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

_SIDED = {}
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
    _SIDED.update(dict.fromkeys(_words, _kind))

_LIMB_JOINT = {
    "shoulder": "Shoulder", "upperarm": "UpperArm", "lowerarm": "LowerArm", "hand": "Hand",
    "upperleg": "UpperLeg", "lowerleg": "LowerLeg", "foot": "Foot", "toes": "Toes",
}


class _Bone:
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
            kind = (_SIDED if self.side else _CENTRAL).get(core)
            if kind:
                self.core, self.kind = core, kind
                return
        # A lone l/r glued to a known word: "lthigh", "RHand".
        if self.side is None and len(core) > 2 and core[0] in "lr" and core[1:] in _SIDED:
            self.side = "Left" if core[0] == "l" else "Right"
            self.core, self.kind = core[1:], _SIDED[core[1:]]

    @property
    def eligible(self):
        """May be chosen at all (not a Rigify mechanism/original bone, not a helper)."""
        return self.prefix in ("", "DEF") and not self.stop


class _Tree:
    """Parents, children, depths and rest points of a skeleton."""

    def __init__(self, parents, heads, tails):
        self.parents = parents
        self.heads = heads
        self.tails = tails
        J = len(parents)
        self.children = [[] for _ in range(J)]
        for j, p in enumerate(parents):
            if p >= 0:
                self.children[p].append(j)
        self.depth = np.full(J, -1, dtype=int)
        self.order = []                       # breadth first from the roots
        queue = [j for j in range(J) if parents[j] < 0]
        for j in queue:
            self.depth[j] = 0
        while queue:
            self.order.extend(queue)
            nxt = []
            for j in queue:
                for c in self.children[j]:
                    self.depth[c] = self.depth[j] + 1
                    nxt.append(c)
            queue = nxt
        if len(self.order) != J:
            stuck = [j for j in range(J) if self.depth[j] < 0]
            raise HumanoidError("The parent indices form a loop (bone %d is its own ancestor)."
                                % stuck[0])
        # Points of each subtree: heads, and tails when known.
        self.subtree = [None] * J
        for j in reversed(self.order):
            self.subtree[j] = [j] + [k for c in self.children[j] for k in self.subtree[c]]

    def points(self, bones):
        bones = list(bones)
        pts = self.heads[bones]
        return pts if self.tails is None else np.concatenate([pts, self.tails[bones]])

    def is_ancestor(self, a, b):
        """True when bone ``a`` is a strict ancestor of bone ``b``."""
        p = self.parents[b]
        while p >= 0:
            if p == a:
                return True
            p = self.parents[p]
        return False

    def common_ancestor(self, a, b):
        seen = set()
        while a >= 0:
            seen.add(a)
            a = self.parents[a]
        while b >= 0:
            if b in seen:
                return b
            b = self.parents[b]
        return -1


def _rank(bone, tree):
    # FK controls first, then unnumbered/lowest number, then shallowest.
    return (0 if bone.fk else 1,
            -1 if bone.number is None else bone.number,
            tree.depth[bone.index], bone.index)


def _map_limbs(bones, tree):
    """Sided joints of one bone set by names: {canonical: bone index}."""
    out = {}
    for side in ("Left", "Right"):
        by_kind = {}
        for b in bones:
            if b.side == side and b.kind in _SIDED.values():
                by_kind.setdefault(b.kind, []).append(b)
        has = lambda *kinds: any(by_kind.get(k) for k in kinds)
        roles = {k: list(v) for k, v in by_kind.items() if k in _LIMB_JOINT}
        for b in by_kind.get("arm?", ()):
            if not has("upperarm"):
                roles.setdefault("upperarm", []).append(b)
        for b in by_kind.get("shoulder?", ()):
            explicit_ua = has("upperarm", "arm?")
            if has("shoulder") and not explicit_ua:
                roles.setdefault("upperarm", []).append(b)
            elif not has("shoulder") and explicit_ua:
                roles.setdefault("shoulder", []).append(b)
            elif not has("shoulder") and not explicit_ua:
                roles.setdefault("upperarm", []).append(b)
        for b in by_kind.get("hip?", ()):
            if not has("upperleg"):
                roles.setdefault("upperleg", []).append(b)
        upper_leg_known = bool(roles.get("upperleg"))
        for b in by_kind.get("leg?", ()):
            if upper_leg_known:
                roles.setdefault("lowerleg", []).append(b)
            elif has("lowerleg"):
                roles.setdefault("upperleg", []).append(b)
            else:
                roles.setdefault("lowerleg", []).append(b)
        for kind, cands in roles.items():
            best = min(cands, key=lambda b: _rank(b, tree))
            out[side + _LIMB_JOINT[kind]] = best.index
    return out


def _spine_positions(chain):
    out = {}
    if chain:
        out["Spine"] = chain[0]
    if len(chain) >= 2:
        out["Chest"] = chain[1]
    if len(chain) >= 3:
        out["UpperChest"] = chain[-1]
    return out


def _pick_hips(bones, tree, prefer):
    order = ("torso", "hips") if prefer == "FK" else ("hips", "torso")
    for kind in order:
        cands = [b for b in bones if b.kind == kind]
        if cands:
            return min(cands, key=lambda b: (tree.depth[b.index], b.index)).index
    return None


def _shallowest(bones, tree, kind, under=None):
    cands = [b for b in bones if b.kind == kind]
    if under is not None:
        cands = [b for b in cands if tree.is_ancestor(under, b.index)] or cands
    return min(cands, key=lambda b: (tree.depth[b.index], b.index)).index if cands else None


def _map_column(bones, tree, prefer, limbs):
    """Hips, spine chain, neck and head of one bone set, by names."""
    out = {}
    hips = _pick_hips(bones, tree, prefer)
    head = _shallowest(bones, tree, "head", hips)
    neck_cands = [b for b in bones if b.kind == "neck"]
    if head is not None:
        neck_cands = [b for b in neck_cands if tree.is_ancestor(b.index, head)] or neck_cands
    neck = min(neck_cands, key=lambda b: (tree.depth[b.index], b.number or 0)).index \
        if neck_cands else None
    top = neck if neck is not None else head
    chain = [b for b in bones if b.kind == "spine"]
    if hips is not None:
        chain = [b for b in chain if tree.is_ancestor(hips, b.index)] or chain
    if top is not None:
        chain = [b for b in chain if tree.is_ancestor(b.index, top)] or chain
    chain = [b.index for b in sorted(chain, key=lambda b: (tree.depth[b.index],
                                                           b.number or 0, b.index))]
    legs = limbs.get("LeftUpperLeg"), limbs.get("RightUpperLeg")
    if hips is None and chain and None not in legs:
        anc = tree.common_ancestor(*legs)
        if anc in chain:
            hips = anc
            chain.remove(anc)
    for joint, j in (("Hips", hips), ("Neck", neck), ("Head", head)):
        if j is not None:
            out[joint] = j
    out.update(_spine_positions(chain))
    return out


def _rigify_upper_chest(parsed, tree):
    """Number of the Rigify spine bone the shoulders hang from, or None."""
    found = []
    for b in parsed:
        if b.side and b.kind in ("shoulder", "shoulder?", "upperarm"):
            p = tree.parents[b.index]
            while p >= 0:
                q = parsed[p]
                if q.side is None and q.core == "spine" and _RIGIFY_SPINE_RE.fullmatch(q.base):
                    found.append(q.number or 0)
                    break
                p = tree.parents[p]
    return max(set(found), key=found.count) if found else None


def _map_rigify_column(bones, parsed, tree, prefer):
    """The column of a Rigify rig, numbered spine, spine.001, ..."""
    spines = {}
    for b in bones:
        if b.side is None and b.core == "spine" and _RIGIFY_SPINE_RE.fullmatch(b.base):
            spines.setdefault(b.number or 0, b.index)
    named = [b for b in bones if b.kind in ("hips", "torso", "neck", "head")]
    hips = _pick_hips(named, tree, prefer)
    if hips is None:
        hips = spines.get(0)
    spines.pop(0, None)
    highest = max(spines) if spines else 0
    upper = _rigify_upper_chest(parsed, tree)
    if upper is None:
        upper = highest - 3 if highest >= 4 else highest - 1
    head = _shallowest(named, tree, "head")
    if head is None and highest > upper:
        head = spines[highest]
    neck = _shallowest(named, tree, "neck")
    if neck is None and upper + 1 in spines and spines[upper + 1] != head:
        neck = spines[upper + 1]
    chain = [spines[n] for n in sorted(spines) if 1 <= n <= upper]
    if not chain:
        chain = [b.index for b in sorted((b for b in bones if b.kind == "spine"),
                                         key=lambda b: (tree.depth[b.index], b.index))]
    out = {j: i for j, i in (("Hips", hips), ("Neck", neck), ("Head", head)) if i is not None}
    out.update(_spine_positions(chain))
    return out


def _map_by_names(parsed, tree, prefer):
    rigify = ({b.base for b in parsed if b.prefix in ("", "DEF", "ORG")}
              >= {"spine", "spine.001"})
    usable = [b for b in parsed if b.eligible and b.kind]
    sets = {"DEF": [b for b in usable if b.prefix == "DEF"],
            "": [b for b in usable if b.prefix == ""]}
    result = {}
    for key in (("DEF", "") if prefer == "DEF" else ("", "DEF")):
        bones = sets[key]
        if not bones:
            continue
        found = _map_limbs(bones, tree)
        if rigify:
            found.update(_map_rigify_column(bones, parsed, tree, prefer))
        else:
            found.update(_map_column(bones, tree, prefer, found))
        used = set(result.values())
        for joint, j in found.items():
            if joint not in result and j not in used:
                result[joint] = j
    return result


# ----------------------------------------------------------------------------
# Hierarchy


def _limb_chain(tree, start):
    """From ``start``, follow the child whose subtree reaches farthest."""
    chain = [start]
    cur = start
    while tree.children[cur]:
        origin = tree.heads[cur]
        cur = max(tree.children[cur], key=lambda c: np.max(
            np.linalg.norm(tree.points(tree.subtree[c]) - origin, axis=1)))
        chain.append(cur)
    return chain


def _segments(tree, chain):
    segs = [np.linalg.norm(tree.heads[b] - tree.heads[a]) for a, b in zip(chain, chain[1:])]
    return np.asarray(segs)


def _split_limb(tree, chain):
    """Index of the upper limb in a chain: start of its two longest segments."""
    if len(chain) < 3:
        return None
    segs = _segments(tree, chain)
    return int(np.argmax(segs[:-1] + segs[1:])) if len(segs) >= 2 else None


def _map_by_hierarchy(tree):
    """{canonical: bone index} from the shape of the skeleton alone."""
    z_all = tree.points(range(len(tree.heads)))[:, 2]
    height = float(np.ptp(z_all)) if len(z_all) else 0.0
    if not height > 0:
        return {}
    thr = 0.2 * height
    # 1. The hips: the first bone with two limbs going down and one going up.
    hips, downs, ups = _find_hips(tree, thr)
    if hips is None:
        return {}
    out = {"Hips": hips}
    # 2. The legs, which also say which way the skeleton faces.
    side_sign = _map_legs(tree, downs, out)
    # 3. The spine path: from the up child to the topmost leaf of its subtree.
    path = _spine_path(tree, ups[1])
    # 4. The arms, and where they leave the spine.
    junction = _map_arms(tree, path, hips, thr, side_sign, out)
    # 5. Head and neck above the arms, spine joints below.
    _map_head_and_spine(tree, path, junction, height, out)
    return out


def _find_hips(tree, thr):
    """(hips, the two longest limbs down [(reach, child)], the limb up (reach,
    child)): the first bone in order with at least three children of which two
    reach more than ``thr`` down and one more than ``thr`` up; Nones if none."""
    heads = tree.heads

    def reach(j, c):
        z = tree.points(tree.subtree[c])[:, 2] - heads[j, 2]
        return -min(z.min(), 0.0), max(z.max(), 0.0)     # down, up

    for j in tree.order:
        if len(tree.children[j]) < 3:
            continue
        d, u = [], []
        for c in tree.children[j]:
            down, up = reach(j, c)
            if down > thr and up < thr:
                d.append((down, c))
            elif up > thr and down < thr:
                u.append((up, c))
        if len(d) >= 2 and u:
            return j, sorted(d, reverse=True)[:2], max(u)
    return None, None, None


def _map_legs(tree, downs, out):
    """Thigh, shin, foot and toes of each leg into ``out``; returns the side
    sign (1 when the skeleton faces -Y, as the toes say)."""
    heads = tree.heads
    legs = []
    for _, c in downs:
        chain = _limb_chain(tree, c)
        i = _split_limb(tree, chain)
        if i is not None:
            legs.append(chain[i:i + 4])
    # Facing: toes point forward; forward is -Y unless the toes say +Y.
    side_sign = 1.0
    fwd = [heads[lg[3], 1] - heads[lg[2], 1] for lg in legs if len(lg) == 4]
    if fwd and np.mean(fwd) > 0:
        side_sign = -1.0
    if len(legs) == 2:
        legs.sort(key=lambda lg: -side_sign * np.mean(tree.points(tree.subtree[lg[0]])[:, 0]))
        for side, lg in zip(("Left", "Right"), legs):
            for name, j in zip(("UpperLeg", "LowerLeg", "Foot", "Toes"), lg):
                out[side + name] = j
    return side_sign


def _spine_path(tree, up_child):
    """Bones from ``up_child`` to the topmost leaf of its subtree."""
    sub = tree.subtree[up_child]
    leaves = [j for j in sub if not tree.children[j]]
    top_z = [tree.points([j])[:, 2].max() for j in leaves]
    path = [leaves[int(np.argmax(top_z))]]
    while path[-1] != up_child:
        path.append(tree.parents[path[-1]])
    path.reverse()
    return path


def _map_arms(tree, path, hips, thr, side_sign, out):
    """The arms into ``out``: the off-path subtrees reaching farthest sideways, on
    opposite sides. Returns the index in ``path`` where the arms leave it (a
    guess below the top when no arms are found)."""
    on_path = set(path)
    x0 = tree.heads[hips, 0]
    offs = []
    for k, j in enumerate(path):
        for c in tree.children[j]:
            if c in on_path:
                continue
            x = tree.points(tree.subtree[c])[:, 0] - x0
            offs.append((float(np.abs(x).max()), float(x.mean()), k, c))
    offs.sort(key=lambda o: -o[0])
    arms = []
    if offs and offs[0][0] > 0.5 * thr:
        first = offs[0]
        other = next((o for o in offs[1:] if o[1] * first[1] < 0 and o[0] > 0.5 * thr), None)
        if other is not None:
            arms = [first, other]
    if not arms:
        return max(len(path) - 3, 0)
    junction = max(a[2] for a in arms)
    arms.sort(key=lambda a: -side_sign * a[1])
    for side, (_, _, _, c) in zip(("Left", "Right"), arms):
        chain = _limb_chain(tree, c)
        i = _split_limb(tree, chain)
        if i is None:
            continue
        if i >= 1:
            out[side + "Shoulder"] = chain[i - 1]
        for name, j in zip(("UpperArm", "LowerArm", "Hand"), chain[i:i + 3]):
            out[side + name] = j
    return junction


def _map_head_and_spine(tree, path, junction, height, out):
    """Head and neck (the path above ``junction``) and the spine joints (up to
    it) into ``out``."""
    above = path[junction + 1:]
    chain = path[:junction + 1]
    if not above:
        above, chain = path[-1:], path[:-1]
    # A long last segment above a neck is the skull, ending in an end bone
    # (Mixamo's HeadTop_End): the head is the bone before it.
    if len(above) >= 2 and len(tree.children[above[-2]]) == 1 and \
            _segments(tree, above[-2:])[0] > 0.085 * height:
        above = above[:-1]
    out["Head"] = above[-1]
    if len(above) >= 2:
        out["Neck"] = above[0]
    out.update(_spine_positions(chain))


def _fill_is_consistent(joint, names_map, hier_map):
    """A hierarchy joint may fill a gap only if the hierarchy agrees with the
    names on its nearest mapped canonical ancestor and descendants."""
    anc = _CANON_PARENT[joint]
    while anc is not None and anc not in names_map:
        anc = _CANON_PARENT[anc]
    if anc is not None and hier_map.get(anc) != names_map[anc]:
        return False
    stack = list(_CANON_CHILDREN[joint])
    while stack:
        c = stack.pop()
        if c in names_map:
            if hier_map.get(c) != names_map[c]:
                return False
        else:
            stack.extend(_CANON_CHILDREN[c])
    return True


# ----------------------------------------------------------------------------
# Public API


def _as_inputs(names, parents, heads, tails):
    names = [str(n) for n in names]
    J = len(names)
    if len(set(names)) != J:
        dup = next(n for n in names if names.count(n) > 1)
        raise HumanoidError("Bone names must be unique; '%s' appears more than once." % dup)
    parents = np.asarray(parents)
    if parents.shape != (J,) or (J and not np.issubdtype(parents.dtype, np.integer)):
        raise HumanoidError("The parents must be %d whole numbers, one per bone (got shape %s)."
                            % (J, parents.shape))
    parents = parents.astype(int)
    if J and (parents.min() < -1 or parents.max() >= J):
        raise HumanoidError("A parent index is out of range: each must be -1 or 0 to %d." % (J - 1))
    heads = np.asarray(heads, dtype=float)
    if heads.shape != (J, 3) or not np.all(np.isfinite(heads)):
        raise HumanoidError("The heads must be %d finite points (J, 3) (got shape %s)."
                            % (J, heads.shape))
    if tails is not None:
        tails = np.asarray(tails, dtype=float)
        if tails.shape != (J, 3) or not np.all(np.isfinite(tails)):
            raise HumanoidError("The tails must be %d finite points (J, 3) (got shape %s)."
                                % (J, tails.shape))
    return names, parents, heads, tails


def auto_map(names, parents, heads, tails=None, prefer="DEF"):
    """Map bones to canonical joints; return a :class:`Mapping`.

    ``parents`` (J,) holds parent indices (-1 for a root, any order), ``heads``
    and optional ``tails`` (J, 3) rest positions in armature space (Z up,
    character facing -Y). ``prefer`` picks Rigify's deform bones ("DEF") or
    its FK controls ("FK") when a rig has both; pass "FK" to animate a
    generated Rigify rig, whose deform bones only follow its controls.
    Missing joints are reported in ``missing_required``, not raised.
    """
    if prefer not in ("DEF", "FK"):
        raise HumanoidError("prefer must be \"DEF\" or \"FK\" (got %r)." % (prefer,))
    names, parents, heads, tails = _as_inputs(names, parents, heads, tails)
    if not names:
        return Mapping(method="hierarchy")
    tree = _Tree(parents, heads, tails)
    parsed = [_Bone(j, n) for j, n in enumerate(names)]
    by_names = _map_by_names(parsed, tree, prefer)
    by_hier = _map_by_hierarchy(tree)
    n_names = sum(j in by_names for j in REQUIRED)
    n_hier = sum(j in by_hier for j in REQUIRED)
    if n_names < 0.5 * len(REQUIRED) and n_hier > n_names:
        return Mapping({j: names[i] for j, i in by_hier.items()}, method="hierarchy")
    result = dict(by_names)
    filled = []
    used = set(result.values())
    for joint in CANONICAL:
        j = by_hier.get(joint)
        if (joint in result or j is None or j in used or not parsed[j].eligible
                or not _fill_is_consistent(joint, by_names, by_hier)):
            continue
        result[joint] = j
        used.add(j)
        filled.append(joint)
    return Mapping({j: names[i] for j, i in result.items()}, method="names",
                   from_hierarchy=filled)


def _short(value):
    from ..io.text_input import short_repr

    return short_repr(value)


def _join(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def check_mapping(mapping, names):
    """Raise :class:`HumanoidError` unless ``mapping`` is usable on a skeleton
    with bone ``names``: every problem is listed in one message (unknown
    joints, bones not in the skeleton, a bone used twice, missing required
    joints)."""
    names = set(names)
    problems = []
    unknown = [k for k in mapping if k not in CANONICAL]
    if unknown:
        problems.append("Unknown humanoid joints: %s (the joints are %s)."
                        % (", ".join(map(_short, unknown)), ", ".join(CANONICAL)))
    bad = [k for k in mapping if k in CANONICAL and mapping[k] is not None
           and not isinstance(mapping[k], str)]
    for k in bad:
        problems.append("The bone for %s must be a name, not %s." % (k, _short(mapping[k])))
    pairs = [(k, mapping[k]) for k in CANONICAL if isinstance(mapping.get(k), str) and mapping[k]]
    absent = [(k, b) for k, b in pairs if b not in names]
    if absent:
        problems.append("These bones are not in the skeleton: %s."
                        % ", ".join("'%s' (%s)" % (b if len(b) <= 64 else b[:64] + "...", k) for k, b in absent))
    joints_of = {}
    for k, b in pairs:
        joints_of.setdefault(b, []).append(k)
    for b, joints in joints_of.items():
        if len(joints) > 1:
            times = "twice" if len(joints) == 2 else "%d times" % len(joints)
            problems.append("Bone '%s' is mapped %s: %s." % (b, times, _join(joints)))
    missing = [j for j in REQUIRED if not (isinstance(mapping.get(j), str) and mapping[j])]
    if missing:
        problems.append("The mapping lacks required joints: %s." % ", ".join(missing))
    if problems:
        raise HumanoidError(" ".join(problems))


_FORMAT = "humanoid-mapping"


def mapping_to_json(mapping):
    """A preset: JSON text with the joints in canonical order."""
    unknown = [k for k in mapping if k not in CANONICAL]
    if unknown:
        raise HumanoidError("Unknown humanoid joints: %s." % ", ".join(map(repr, unknown)))
    joints = {}
    for k in CANONICAL:
        v = mapping.get(k)
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise HumanoidError("The bone for %s must be a name, not %r." % (k, v))
        joints[k] = v
    return json.dumps({"format": _FORMAT, "version": 1, "joints": joints}, indent=2)


def mapping_from_json(text):
    """Read a preset written by :func:`mapping_to_json` (or a plain
    ``{joint: bone}`` object), given as text or as the file's bytes (UTF-8,
    UTF-16 or UTF-32); return a :class:`Mapping` with method "preset"."""
    from ..io import text_input
    from ..io.text_input import short_repr

    if isinstance(text, (bytes, bytearray)):
        try:
            text = text_input.decode(bytes(text), "The mapping preset", allow_utf16=True)
        except MotionMatchingError as ex:
            raise HumanoidError(str(ex)) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise HumanoidError("The mapping preset nests lists or objects too deeply to read.") from None
    except (TypeError, ValueError) as ex:
        where = " (line %d, column %d)" % (ex.lineno, ex.colno) if hasattr(ex, "lineno") else ""
        raise HumanoidError("The mapping preset is not valid JSON%s." % where) from None
    try:
        text_input.check_depth(data, "The mapping preset")
    except MotionMatchingError as ex:
        raise HumanoidError(str(ex)) from None
    if not isinstance(data, dict):
        raise HumanoidError("The mapping preset must be a JSON object of joint: bone pairs.")
    if "joints" in data:
        if data.get("format", _FORMAT) != _FORMAT:
            raise HumanoidError("The preset's format is %s, not %r."
                                % (short_repr(data.get("format")), _FORMAT))
        if data.get("version", 1) != 1:
            raise HumanoidError("The preset is version %s; this add-on reads version 1."
                                % (short_repr(data.get("version")),))
        data = data["joints"]
        if not isinstance(data, dict):
            raise HumanoidError("The preset's \"joints\" must be an object of joint: bone pairs.")
    unknown = [k for k in data if k not in CANONICAL]
    if unknown:
        shown = ", ".join(short_repr(k) for k in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        raise HumanoidError("The preset names unknown humanoid joints: %s (the joints are %s)."
                            % (shown, ", ".join(CANONICAL)))
    joints = {}
    for k, v in data.items():
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise HumanoidError("The preset's bone for %s must be a name, not %s." % (k, short_repr(v)))
        joints[k] = v
    return Mapping(joints, method="preset")
