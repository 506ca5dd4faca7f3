"""Bones mapped to canonical joints from the shape of the hierarchy alone.

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

import numpy as np

from .humanoid_joints import HumanoidError, spine_positions


class Tree:
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


def segments(tree, chain):
    segs = [np.linalg.norm(tree.heads[b] - tree.heads[a]) for a, b in zip(chain, chain[1:])]
    return np.asarray(segs)


def _split_limb(tree, chain):
    """Index of the upper limb in a chain: start of its two longest segments."""
    if len(chain) < 3:
        return None
    segs = segments(tree, chain)
    return int(np.argmax(segs[:-1] + segs[1:])) if len(segs) >= 2 else None


def map_by_hierarchy(tree):
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
            segments(tree, above[-2:])[0] > 0.085 * height:
        above = above[:-1]
    out["Head"] = above[-1]
    if len(above) >= 2:
        out["Neck"] = above[0]
    out.update(spine_positions(chain))
