"""core.job.replant: the feet of a retargeted bake planted again on the target's
legs, on arrays (a small two-legged skeleton, no Blender)."""

from types import SimpleNamespace

import numpy as np

from core.bake.settings import BakeSettings
from core.job import replant
from leg_skeleton import leg_skeleton

FRAMES = 12
MAP = {"Hips": "hips", "LeftUpperLeg": "l_up", "LeftLowerLeg": "l_low", "LeftFoot": "l_foot", "LeftToes": "l_toe",
       "RightUpperLeg": "r_up", "RightLowerLeg": "r_low", "RightFoot": "r_foot", "RightToes": "r_toe"}


def _case():
    skel = leg_skeleton()
    J = len(skel.names)
    target = SimpleNamespace(names=skel.names, parents=skel.parents, offsets=skel.offsets, scale=1.0)
    plan = SimpleNamespace(target_hips=1, rest_rot=np.tile([1.0, 0.0, 0.0, 0.0], (J, 1)), overridden=[])
    rotations = np.tile([1.0, 0.0, 0.0, 0.0], (FRAMES, J - 1, 1))
    locations = np.zeros((FRAMES, 1, 3))                          # the hips' pose location, from their rest
    locations[:, 0, 1] = np.linspace(0.0, 0.5, FRAMES)
    result = SimpleNamespace(keyed=np.arange(1, J), rotations=rotations, located=np.array([1]), locations=locations)
    return plan, target, result


def _replant(plan, target, result, mapping=MAP, above=None):
    contacts = np.ones((FRAMES, 2), dtype=bool)
    return replant.replant_feet(plan, target, mapping, result, contacts, np.zeros(FRAMES), 24.0, BakeSettings(),
                                toe_above_soles=above)


def test_unmapped_legs_leave_the_keys_and_say_so():
    plan, target, result = _case()
    mapping = {k: v for k, v in MAP.items() if k != "LeftToes"}
    out = _replant(plan, target, result, mapping)
    assert out.rotations is result.rotations and out.locations is result.locations
    assert out.foot_locks is None and out.sole_shift is None and out.warnings == [replant.UNMAPPED_LEGS]


def test_mapped_legs_are_planted_and_the_hips_stand_on_the_soles():
    plan, target, result = _case()
    before = result.locations.copy()
    out = _replant(plan, target, result, above=0.05)
    assert out.warnings == [] and isinstance(out.foot_locks, int) and out.foot_locks >= 0
    assert out.rotations.shape == result.rotations.shape
    # The toes rest at 0.95 - 0.05 - 0.42 - 0.40 - 0.07 = 0.01 m; the toe floor is 1 cm under that.
    assert np.isclose(out.sole_shift, 0.05)
    np.testing.assert_allclose(out.locations[:, 0, 2] - before[:, 0, 2], out.sole_shift)
    np.testing.assert_array_equal(result.locations, before)   # the input is not changed


def test_without_a_mesh_the_hips_stay():
    plan, target, result = _case()
    out = _replant(plan, target, result)
    assert out.sole_shift is None and out.locations is result.locations
