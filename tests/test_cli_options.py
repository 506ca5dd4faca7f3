"""The command line's bake options are made from core.bake's knobs (no Blender)."""

import math

import os

import pytest

from core.bake import settings as bake
from addon_package import addon

bake_args = addon("cli.bake_args")
scene_inputs = addon("cli.scene_inputs")

BVH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples", "jl_mm_run.bvh")


def test_every_knob_is_an_option(tmp_path):
    args = bake_args.parse(["--bvh", BVH, "--out", str(tmp_path / "o")])
    for k in bake.knobs():
        assert getattr(args, k.name) is None, k.name     # not given: the scene's setting stays


def test_options_reach_the_scene_settings(tmp_path):
    args = bake_args.parse(["--bvh", BVH, "--out", str(tmp_path / "o"), "--no-use-foot-lock", "--search-interval", "0.25",
                         "--keep-window", "12", "--clamp-angle", "30"])
    assert args.use_foot_lock is False and args.search_interval == 0.25 and args.keep_window == 12

    class Settings:
        pass

    s = Settings()
    bake_args.set_bake_settings(s, args)
    assert s.use_foot_lock is False and s.search_interval == 0.25 and s.keep_window == 12
    assert math.isclose(s.clamp_angle, math.radians(30))
    assert not hasattr(s, "lock_speed")


@pytest.mark.parametrize("option, value", [("--search-interval", "nan"), ("--search-interval", "0"),
                                           ("--keep-window", "-3"), ("--clamp-angle", "400"),
                                           ("--clamp-distance", "inf")])
def test_bad_bake_options_are_refused_in_a_sentence(tmp_path, option, value):
    with pytest.raises(bake_args.Failure, match=option):
        bake_args.parse(["--bvh", BVH, "--out", str(tmp_path / "o"), option, value])


def _refusal(tmp_path, *args):
    with pytest.raises(bake_args.Failure) as info:
        bake_args.parse(list(args))
    return str(info.value)


def test_bad_characters_exports_and_sources_are_refused_before_blender_starts(tmp_path):
    out = str(tmp_path / "o")
    base = ("--bvh", BVH, "--out", out)
    assert _refusal(tmp_path, *base, "--character", str(tmp_path / "hero.glb")) == (
        "--character file not found: %s" % (tmp_path / "hero.glb"))
    assert "unknown kind of file '.bvh'" in _refusal(tmp_path, *base, "--character", BVH)
    blend = tmp_path / "cast.blend"
    blend.write_bytes(b"BLENDER")
    assert "name the armature in the .blend as FILE.blend:Object" in _refusal(tmp_path, *base, "--character",
                                                                               str(blend))
    assert "the object name after ':' is empty" in _refusal(tmp_path, *base, "--character", str(blend) + ":")
    assert _refusal(tmp_path, *base, "--character", str(tmp_path / "gone.blend") + ":Hero") == (
        "--character file not found: %s" % (tmp_path / "gone.blend"))
    assert "unknown extension '.obj'" in _refusal(tmp_path, *base, "--export", str(tmp_path / "a.obj"))
    assert "one of the two" in _refusal(tmp_path, "--out", out)
    assert "one of the two" in _refusal(tmp_path, *base, "--database", BVH)
    assert "--database needs --character" in _refusal(tmp_path, "--database", BVH, "--out", out)
    assert "--speed-scale must be from" in _refusal(tmp_path, *base, "--speed-scale", "0")
    assert "--start-frame must be from" in _refusal(tmp_path, *base, "--start-frame", "-4")
    assert "not both" in _refusal(tmp_path, *base, "--scenario", "showcase", "--controller", str(blend) + ":C")
    assert "keeps its own keys" in _refusal(tmp_path, *base, "--controller", str(blend) + ":C", "--speed-scale", "2")


def test_a_blend_object_argument_splits_at_the_last_blend_colon():
    assert scene_inputs.split_blend("C:/cast.v2.blend:Hero.001") == ("C:/cast.v2.blend", "Hero.001")
    assert scene_inputs.split_blend("/a/hero.glb") == ("/a/hero.glb", None)
    assert scene_inputs.EXPORT_FORMATS[".gltf"] == "GLTF_SEPARATE"


def test_a_faster_scenario_divides_its_times(tmp_path):
    fast = bake_args.load_scenario("straight_walk", 2.0)
    slow = bake_args.load_scenario("straight_walk")
    assert [p[0] * 2.0 for p in fast.points] == [p[0] for p in slow.points]
    assert [p[1:] for p in fast.points] == [p[1:] for p in slow.points]
