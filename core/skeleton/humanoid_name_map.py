"""Bones mapped to canonical joints by their names (see :mod:`.humanoid_names`
for how a name is read): the limbs of each side, then the column.

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
"""

from .humanoid_joints import spine_positions
from .humanoid_names import LIMB_JOINT, RIGIFY_SPINE_RE, SIDED


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
            if b.side == side and b.kind in SIDED.values():
                by_kind.setdefault(b.kind, []).append(b)
        has = lambda *kinds: any(by_kind.get(k) for k in kinds)
        roles = {k: list(v) for k, v in by_kind.items() if k in LIMB_JOINT}
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
            out[side + LIMB_JOINT[kind]] = best.index
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
    out.update(spine_positions(chain))
    return out


def _rigify_upper_chest(parsed, tree):
    """Number of the Rigify spine bone the shoulders hang from, or None."""
    found = []
    for b in parsed:
        if b.side and b.kind in ("shoulder", "shoulder?", "upperarm"):
            p = tree.parents[b.index]
            while p >= 0:
                q = parsed[p]
                if q.side is None and q.core == "spine" and RIGIFY_SPINE_RE.fullmatch(q.base):
                    found.append(q.number or 0)
                    break
                p = tree.parents[p]
    return max(set(found), key=found.count) if found else None


def _map_rigify_column(bones, parsed, tree, prefer):
    """The column of a Rigify rig, numbered spine, spine.001, ..."""
    spines = {}
    for b in bones:
        if b.side is None and b.core == "spine" and RIGIFY_SPINE_RE.fullmatch(b.base):
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
    out.update(spine_positions(chain))
    return out


def map_by_names(parsed, tree, prefer):
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
