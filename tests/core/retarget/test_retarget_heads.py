"""Joints are bone heads: the standing height that sets the retarget's
size ratio does not depend on where an importer put the tails."""

import numpy as np
import pytest

from core.retarget import plan as rt_plan, rig as rt_rig, tpose as rt_tpose
from test_retarget import sample_like, sample_mapping


def _height(rig, mapping):
    sk = rig.skeleton(mapping)
    return rt_tpose.standing_height(sk, rt_rig.TPose.from_matrices(sk.rest))


def test_standing_height_is_measured_from_heads():
    rig = sample_like()
    m = sample_mapping()
    height, floor = _height(rig, m)
    heads = np.array(rig.rest)[:, :3, 3]
    pelvis = 0.5 * (heads[rig.index("LeftUpLeg"), 2] + heads[rig.index("RightUpLeg"), 2])
    toes = min(heads[rig.index(s + b), 2] for s in ("Left", "Right") for b in ("Foot", "Toe"))
    assert floor == pytest.approx(toes) and height == pytest.approx(pelvis - toes)


def test_tails_metres_away_change_nothing():
    """glTF's default bone direction puts a foot's tail metres from its head
    (and FBX without automatic orientation may turn it sideways or down):
    the height and so the scale stay what the heads say."""
    rig = sample_like()
    m = sample_mapping()
    want = _height(rig, m)
    for s in ("Left", "Right"):
        for b in ("Foot", "Toe"):
            j = rig.index(s + b)
            rig.lengths[j] = 9.0            # the tail 9 m along the bone, below the floor for the foot
    assert _height(rig, m) == pytest.approx(want, abs=1e-12)
    src = sample_like()
    plan = rt_plan.prepare(src.skeleton(m, "source"), rig.skeleton(m, "target"),
                     rt_rig.TPose.from_matrices(src.skeleton(m).rest), rt_rig.TPose.from_matrices(rig.skeleton(m).rest))
    assert plan.scale == pytest.approx(1.0, abs=1e-12)
