"""core.bake.pipeline.BakeSettings is the one definition of the bake's options: every
field a user may turn carries how an interface shows it."""

import dataclasses

import numpy as np
import pytest

from core.bake import pipeline as bake
from core.measure.joints import Take
from core.measure.report import low_foot_sliding

UNITS = {None, "time", "length", "velocity", "angle", "factor"}


def test_every_setting_but_the_computed_floor_is_a_knob():
    names = [f.name for f in dataclasses.fields(bake.BakeSettings)]
    knobs = bake.knobs()
    assert [k.name for k in knobs] == [n for n in names if n != "toe_floor"]
    defaults = bake.BakeSettings()
    for k in knobs:
        assert k.label and k.description and k.unit in UNITS, k.name
        assert k.type in (bool, int, float), k.name
        assert k.default == getattr(defaults, k.name)
        if k.min is not None:
            assert k.default >= k.min, k.name
    ui = [k.ui_name for k in knobs]
    assert len(set(ui)) == len(ui)
    assert dict((k.name, k.ui_name) for k in knobs)["foot_lock"] == "use_foot_lock"


def test_settings_from_knob_values_round_trip():
    values = {k.name: k.default for k in bake.knobs()}
    values["search_interval"] = 0.3
    s = bake.BakeSettings(**values)
    assert s.search_interval == 0.3 and s.toe_floor is None
    s.check()
    with pytest.raises(bake.BakeError, match="search interval"):
        bake.BakeSettings(search_interval=0.0).check()
    with pytest.raises(bake.BakeError, match="jump margin"):
        bake.BakeSettings(jump_cost_margin=-1.0).check()


def test_sliding_report_measures_take_and_bake_alike():
    """A bake that plays the take itself slides exactly as much as the take."""
    rng = np.random.default_rng(3)
    T = 200
    root = np.zeros((T, 3))
    root[:, 1] = -np.linspace(0, 4, T)                      # 1.2 m/s at 60 fps
    toes = np.zeros((T, 2, 3))
    toes[:, :, :2] = root[:, None, :2] + rng.normal(0, 0.01, (T, 2, 2))
    toes[:, :, 2] = np.where(rng.random((T, 2)) < 0.5, 0.03, 0.2)
    ankles = toes + [0.0, 0.05, 0.08]
    contacts = toes[:, :, 2] < 0.1
    take = Take(clip_offsets=np.array([0, T]), clip_fps=np.array([60.0]), mirrored=np.zeros(1, bool),
                clip_index=np.zeros(T, np.int64), contacts=contacts, toe_positions=toes, foot_positions=ankles,
                root_positions=root, root_quats=None, pose_locations=None, pose_rotations=None)
    r = low_foot_sliding(take, toes, ankles, root, 60.0)
    assert r["foot_sliding_m"] == r["raw_foot_sliding_m"] and r["foot_sliding_m"]["left"] > 0
    assert r["ankle_sliding_cm_per_foot_per_moving_s"] == r["raw_ankle_sliding_cm_per_foot_per_moving_s"]
    assert r["planted_toe_height_m"] == pytest.approx(0.03)
    assert r["moving_s"] == pytest.approx((T - 1) / 60.0)
    none = low_foot_sliding(take, None, None, root, 60.0)
    assert none["foot_sliding_m"] == {"left": 0.0, "right": 0.0} and none["raw_foot_sliding_m"]["left"] > 0
