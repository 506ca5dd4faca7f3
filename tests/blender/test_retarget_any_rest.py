"""A take whose rest pose is no T-pose (every bone along its parent's X axis,
no T-pose file) retargets onto a character: its T-pose is built from its bone
directions and a note says so; the character then moves as it does from the
same motion written with a T-pose rest."""

import os

import bpy
import numpy as np
import pytest

from tools import convention_takes as ct, rigs
import bl_helpers as H

FRAMES = 240


@pytest.fixture(scope="module")
def takes(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("any_rest"))
    sample = ct.read_take(ct.SAMPLE).cut(0, FRAMES)
    return {rest: ct.bandai_takes(sample, os.path.join(out, rest), clip_frames=FRAMES, rest=rest)[0]
            for rest in ("x", "sample")}


def _retarget(path, name):
    """The Hero character retargeted from the take at ``path``: (character, warnings)."""
    src = H.import_ours(path, global_scale=0.01)
    tgt, _mesh = rigs.build(name)
    bpy.ops.object.select_all(action="DESELECT")
    src.select_set(True)
    tgt.select_set(True)
    bpy.context.view_layer.objects.active = tgt
    assert bpy.ops.motion_matching.retarget() == {"FINISHED"}
    return src, tgt


def _heads(obj, frames):
    out = np.empty((len(frames), len(obj.pose.bones), 3))
    buf = np.empty(len(obj.pose.bones) * 3, dtype=np.float32)
    mw = np.array(obj.matrix_world)
    for i, f in enumerate(frames):
        bpy.context.scene.frame_set(int(f))
        obj.pose.bones.foreach_get("head", buf)
        out[i] = buf.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]
    return out


def test_a_rest_along_x_is_read_by_its_bone_directions(takes):
    bpy.ops.wm.read_homefile(use_empty=True)
    plan = H.addon_module("bridge.retarget.plan")
    src = H.import_ours(takes["x"], global_scale=0.01)
    tgt, _mesh = rigs.build("Hero")
    setup = plan.plan_for(bpy.context, src, tgt)
    assert setup.tpose_words[0] == "T-pose built from the bone directions"
    assert any("is not a T-pose (its head is not above its hips)" in w for w in setup.warnings), setup.warnings
    # The same skeleton with a T-pose rest needs no such note.
    bpy.ops.wm.read_homefile(use_empty=True)
    src = H.import_ours(takes["sample"], global_scale=0.01)
    tgt, _mesh = rigs.build("Hero")
    setup = plan.plan_for(bpy.context, src, tgt)
    assert setup.tpose_words[0] == "rest pose"
    assert not any("is not a T-pose" in w for w in setup.warnings)


def test_the_character_moves_as_from_a_tpose_rest(takes):
    bpy.ops.wm.read_homefile(use_empty=True)
    _src_x, hero_x = _retarget(takes["x"], "HeroX")
    _src_t, hero_t = _retarget(takes["sample"], "HeroT")
    frames = np.arange(1, FRAMES // 2, 7)
    a, b = _heads(hero_x, frames), _heads(hero_t, frames)
    names = [pb.name for pb in hero_x.pose.bones]
    hips = names.index(rigs.PREFIX + "Hips")
    # The take's rest puts its hip joints on the hips bone's X axis, above
    # it once the spine stands, so the whole body sits higher by one even
    # amount; its path and its pose are the T-pose rest's.
    lift = a[:, hips] - b[:, hips]
    assert np.abs(lift - lift.mean(axis=0)).max() < 0.02, lift
    gap = np.linalg.norm((a - a[:, hips:hips + 1]) - (b - b[:, hips:hips + 1]), axis=-1).max(axis=0)
    worst = {n: round(float(g), 3) for n, g in zip(names, gap)}
    # Knees, feet, hands and head where the T-pose rest puts them (the built
    # T-pose's straight spine, level arms and set foot pitch against the
    # sample's own).
    for key in ("LeftLeg", "RightLeg", "LeftFoot", "RightFoot", "Head", "LeftHand", "RightHand"):
        name = rigs.PREFIX + key
        assert worst[name] < 0.05, sorted(worst.items(), key=lambda kv: -kv[1])
