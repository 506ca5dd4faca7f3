"""The command line's bake options are made from core.bake's knobs (no Blender)."""

import math

from core import bake
from tools import mm_cli


def test_every_knob_is_an_option():
    args = mm_cli.parse(["--bvh", "x.bvh", "--out", "o"])
    for k in bake.knobs():
        assert getattr(args, k.name) is None, k.name     # not given: the scene's setting stays


def test_options_reach_the_scene_settings():
    args = mm_cli.parse(["--bvh", "x.bvh", "--out", "o", "--no-foot-lock", "--search-interval", "0.25",
                         "--keep-window", "12", "--clamp-angle", "30"])
    assert args.foot_lock is False and args.search_interval == 0.25 and args.keep_window == 12

    class Settings:
        pass

    s = Settings()
    mm_cli.set_bake_settings(s, args)
    assert s.use_foot_lock is False and s.search_interval == 0.25 and s.keep_window == 12
    assert math.isclose(s.clamp_angle, math.radians(30))
    assert not hasattr(s, "lock_speed")
