"""core.bake.settings.BakeSettings is the one definition of the bake's options: every
field a user may turn carries how an interface shows it."""

import dataclasses

import numpy as np
import pytest

from core.bake import pipeline as bake, settings
from core.measure.joints import Take
from core.measure.report import low_foot_sliding

UNITS = {None, "time", "length", "velocity", "angle", "factor"}


def test_every_knob_is_a_stage_field_with_how_to_show_it():
    knobs = bake.knobs()
    defaults = bake.BakeSettings()
    stages = settings.stage_classes()
    for k in knobs:
        assert k.label and k.description and k.unit in UNITS, k.name
        assert k.type in (bool, int, float), k.name
        assert k.stage in stages and k.field in {f.name for f in dataclasses.fields(stages[k.stage])}, k.name
        assert k.default == getattr(getattr(defaults, k.stage), k.field) == defaults.flat()[k.name]
        if k.min is not None:
            assert k.default >= k.min, k.name
    assert len(set(k.name for k in knobs)) == len(knobs)   # one name each, from the panel to the command line


def test_every_knob_has_a_short_tooltip_a_unit_and_a_default_that_does_something():
    for k in bake.knobs():
        assert len(k.description.split()) <= 20, (k.name, len(k.description.split()))
        assert k.label[0].isupper() and not k.description.endswith("."), k.name
        if k.type in (int, float) and k.name not in ("keep_window", "jump_cost_margin"):
            assert k.unit is not None, k.name          # counts and a cost margin have none
        if k.is_switch:
            assert k.type is bool and k.advanced is False, k.name
        elif k.type is not bool and k.name != "jump_cost_margin":
            assert k.default != 0, k.name              # 0 is each amount's "off"


def test_each_stage_that_can_be_off_has_one_switch_and_old_behaviour_is_core_only():
    switches = {k.stage: k.name for k in bake.knobs() if k.is_switch}
    assert switches == {"look_ahead": "use_look_ahead", "strafe": "use_strafe", "time_warp": "use_time_warp",
                        "foot_lock": "use_foot_lock", "stride_warp": "use_stride_warp"}
    names = {k.name for k in bake.knobs()}
    for old in ("lock_on_contact", "lock_on_touchdown", "planted_adjustment", "strict_tag_query", "release_in_joints", "toe_floor_rate",
                "knee_min_bend", "strafe_warp_rate", "turn_like_data", "stride_warp_rate"):
        assert old not in names and old in settings.flat_names(), old
    assert bake.BakeSettings().root.planted_adjustment == 1.0


def test_settings_from_flat_names_round_trip():
    values = {k.name: k.default for k in bake.knobs()}
    values["search_interval"] = 0.3
    s = bake.BakeSettings.of(**values)
    assert s.search.search_interval == 0.3 and s.toe_floor is None
    assert s.replaced(lock_on_contact=False).foot_lock.lock_on_contact is False and s.foot_lock.lock_on_contact
    assert bake.BakeSettings.of(**s.flat()) == s
    s.check()
    with pytest.raises(bake.BakeError, match="search interval"):
        bake.BakeSettings.of(search_interval=0.0).check()
    with pytest.raises(bake.BakeError, match="jump margin"):
        bake.BakeSettings.of(jump_cost_margin=-1.0).check()
    with pytest.raises(bake.BakeError, match="Unknown bake setting: made_up"):
        bake.BakeSettings.of(made_up=1)


def test_a_switch_off_turns_its_stage_off():
    s = bake.BakeSettings()
    assert s.look_ahead.on and s.time_warp.on
    assert not s.replaced(use_look_ahead=False).look_ahead.on and not s.replaced(look_ahead=0.0).look_ahead.on
    assert not s.replaced(use_time_warp=False).time_warp.on and not s.replaced(time_warp=0.0).time_warp.on


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
