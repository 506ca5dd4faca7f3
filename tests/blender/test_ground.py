"""motion_matching.bake on a Ground mesh (rolling hills, a flight of stairs) made
with bpy, measured against the same path's flat bake with Blender's ray casts."""

import bpy
import numpy as np
import pytest

from tools import ground_scenes as gs
from tools import path_measure




def _bake_flat_then(take_on_path, bake, make):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    flat_report = bake(name="flat.json")
    flat = gs.measure(obj, None, path_measure)
    ground = make()
    bpy.context.scene.motion_matching.ground = ground
    report = bake(name="ground.json")
    return flat_report, flat, report, gs.measure(obj, ground, path_measure), obj


@pytest.mark.parametrize("make", [gs.make_hills, gs.make_stairs], ids=["hills", "stairs"])
def test_the_feet_stand_on_the_ground_and_the_hips_follow_it(take_on_path, bake, make):
    flat_report, flat, report, on, obj = _bake_flat_then(take_on_path, bake, make)
    assert on["under_cm"] <= 1.5, on["under_cm"]
    assert abs(on["planted_toe_cm"]) <= 3.0 and abs(on["planted_ankle_cm"] - flat["planted_ankle_cm"]) <= 3.0, on
    assert abs(on["hips_m"] - flat["hips_m"]) <= 0.1 * flat["hips_m"], (on["hips_m"], flat["hips_m"])
    # The report's sliding measures feet near the flat floor; the toes' own planted travel is measured here.
    assert on["slide_cm_s"] <= 1.2 * flat["slide_cm_s"], (on["slide_cm_s"], flat["slide_cm_s"])
    assert report["frames"] == flat_report["frames"]
    # The body climbed: at the end the hips are over the top of the ground.
    assert on["hips"][-1, 2] > flat["hips"][-1, 2] + (0.5 if make is gs.make_stairs else -1.0)


def test_a_ground_that_is_not_a_mesh_is_refused_and_nothing_is_keyed(take_on_path):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    empty = bpy.data.objects.new("NotGround", None)
    bpy.context.scene.collection.objects.link(empty)
    action = obj.animation_data.action if obj.animation_data else None
    with pytest.raises(RuntimeError, match=r"The ground 'NotGround' is not a mesh"):
        bpy.ops.motion_matching.bake(ground="NotGround")
    assert (obj.animation_data.action if obj.animation_data else None) == action


def test_a_ground_beside_the_path_or_far_above_it_is_refused(take_on_path):
    obj, _ctrl = take_on_path(fps=30, scenario="straight_walk")
    action = obj.animation_data.action if obj.animation_data else None
    beside = gs.make_hills("Beside", x=(10.0, 14.0))
    with pytest.raises(RuntimeError, match=r"The ground 'Beside' has no faces under"):
        bpy.ops.motion_matching.bake(ground="Beside")
    high = gs.make_stairs("High")
    high.location.z = 2.5
    with pytest.raises(RuntimeError, match=r"The ground 'High' lies .* m from the controller's path height"):
        bpy.ops.motion_matching.bake(ground="High")
    assert (obj.animation_data.action if obj.animation_data else None) == action
