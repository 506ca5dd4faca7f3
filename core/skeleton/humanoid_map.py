"""Map a skeleton's bones to canonical humanoid joints.

The canonical joints carry Unity's HumanBodyBones names (see ``CANONICAL``).
:func:`auto_map` reads the bone names first and then fills what they did not
give from the shape of the hierarchy; when the names give fewer than half of
the required joints, the hierarchy alone decides.
The name rules are in :mod:`.humanoid_names` and :mod:`.humanoid_name_map`,
the hierarchy rules in :mod:`.humanoid_hierarchy`.
"""

import numpy as np

from .humanoid_hierarchy import Tree, map_by_hierarchy
from .humanoid_joints import CANON_CHILDREN, CANON_PARENT, CANONICAL, REQUIRED, HumanoidError, Mapping
from .humanoid_name_map import map_by_names
from .humanoid_names import BoneName


def _fill_is_consistent(joint, names_map, hier_map):
    """A hierarchy joint may fill a gap only if the hierarchy agrees with the
    names on its nearest mapped canonical ancestor and descendants."""
    anc = CANON_PARENT[joint]
    while anc is not None and anc not in names_map:
        anc = CANON_PARENT[anc]
    if anc is not None and hier_map.get(anc) != names_map[anc]:
        return False
    stack = list(CANON_CHILDREN[joint])
    while stack:
        c = stack.pop()
        if c in names_map:
            if hier_map.get(c) != names_map[c]:
                return False
        else:
            stack.extend(CANON_CHILDREN[c])
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
    tree = Tree(parents, heads, tails)
    parsed = [BoneName(j, n) for j, n in enumerate(names)]
    by_names = map_by_names(parsed, tree, prefer)
    by_hier = map_by_hierarchy(tree)
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
