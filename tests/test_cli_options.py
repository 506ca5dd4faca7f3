"""The command line's bake options are made from core.bake's knobs (no Blender)."""

import math

import os

import pytest

from core.bake import settings as bake
from tools import mm_cli

BVH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples", "jl_mm_run.bvh")


def test_every_knob_is_an_option(tmp_path):
    args = mm_cli.parse(["--bvh", BVH, "--out", str(tmp_path / "o")])
    for k in bake.knobs():
        assert getattr(args, k.name) is None, k.name     # not given: the scene's setting stays


def test_options_reach_the_scene_settings(tmp_path):
    args = mm_cli.parse(["--bvh", BVH, "--out", str(tmp_path / "o"), "--no-foot-lock", "--search-interval", "0.25",
                         "--keep-window", "12", "--clamp-angle", "30"])
    assert args.foot_lock is False and args.search_interval == 0.25 and args.keep_window == 12

    class Settings:
        pass

    s = Settings()
    mm_cli.set_bake_settings(s, args)
    assert s.use_foot_lock is False and s.search_interval == 0.25 and s.keep_window == 12
    assert math.isclose(s.clamp_angle, math.radians(30))
    assert not hasattr(s, "lock_speed")


@pytest.mark.parametrize("option, value", [("--search-interval", "nan"), ("--search-interval", "0"),
                                           ("--keep-window", "-3"), ("--clamp-angle", "400"),
                                           ("--clamp-distance", "inf")])
def test_bad_bake_options_are_refused_in_a_sentence(tmp_path, option, value):
    with pytest.raises(mm_cli.Failure, match=option):
        mm_cli.parse(["--bvh", BVH, "--out", str(tmp_path / "o"), option, value])
