"""Which bones of two skeletons correspond: the canonical joints mapped on
both, and the unmapped bones between two paired joints where both skeletons
have the same number of them."""

import numpy as np

from ..skeleton import humanoid_joints


def path_between(parents, top, bone):
    """Bones strictly between ancestor ``top`` and ``bone`` (top first), or
    None when ``top`` is not an ancestor of ``bone``."""
    out = []
    p = parents[bone]
    while p >= 0 and p != top:
        out.append(p)
        p = parents[p]
    return out[::-1] if p == top else None


def pair_bones(source, target):
    """Bone pairs (labels, source indices, target indices): the canonical
    joints mapped on both skeletons, then the unmapped bones between two
    paired joints where both skeletons have the same number of them (target
    bones with constraints excepted: a constraint would override their keys)."""
    common = [j for j in humanoid_joints.CANONICAL if j in source.joints and j in target.joints]
    labels = list(common)
    src = [source.joints[j] for j in common]
    tgt = [target.joints[j] for j in common]
    s_bone = {source.joints[j]: j for j in common}
    t_bone = {target.joints[j]: j for j in common}
    used_s, used_t = set(src), set(tgt)
    for joint in common:
        s, t = source.joints[joint], target.joints[joint]
        # Walk up to the nearest ancestor that is a paired joint, on each side.
        sp = source.parents[s]
        while sp >= 0 and sp not in s_bone:
            sp = source.parents[sp]
        tp = target.parents[t]
        while tp >= 0 and tp not in t_bone:
            tp = target.parents[tp]
        if sp < 0 or tp < 0 or s_bone[sp] != t_bone[tp]:
            continue
        s_mid = path_between(source.parents, sp, s)
        t_mid = path_between(target.parents, tp, t)
        if not s_mid or s_mid is None or t_mid is None or len(s_mid) != len(t_mid):
            continue
        for k, (a, b) in enumerate(zip(s_mid, t_mid)):
            if a in used_s or b in used_t or b in target.constraints:
                continue
            labels.append("%s-%d" % (joint, len(s_mid) - k))
            src.append(a)
            tgt.append(b)
            used_s.add(a)
            used_t.add(b)
    return labels, np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64)
