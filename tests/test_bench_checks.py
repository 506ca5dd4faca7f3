"""bench/done_when.py: the path suite's pass/fail checks of a row, and
which frozen glides the report's warnings name; bench/bench_paths.py's
"before" options are bake options (no Blender needed)."""

import copy
import math

from bench import bench_paths, done_when
from core.bake import settings

WARNINGS = [
    "Most searches jump (40 of 41): the pose may freeze and glide at frames 2-60, 300-320; the database lacks ...",
    "The feet do not step while the body travels at frames 100-140, 200-230.",
    "A planted foot slides more than 5 cm during one contact once (worst 6 cm, left foot at frames 400-420): "
    "frames 400-420.",
]


def _row(**over):
    row = {
        "path": "showcase", "fps": 30, "variant": "after", "query": "", "clamp_m": 0.1,
        "sliding_contact_ratio": 0.8, "sliding_contact": {"cm_per_foot_per_moving_s": 1.7},
        "seed": {"m_per_seconds": 2.5}, "facing_travel": {"mean_deg": 4.5}, "facing_asked": None,
        "glides": [(100, 140)], "rotation": {"ratio": 1.2}, "toe_margin_m": 0.03,
        "tracking": {"max_m": 0.116},
        "report": {"contact_sliding_cm_per_foot_per_moving_s": 1.7, "contact_sliding_ratio": 0.8,
                   "seed_ankle_sliding_m_per_14_5_s": 2.5, "facing_error_travel_mean_deg": 4.5,
                   "facing_error_asked_mean_deg": None, "hips_tracking_max_m": 0.116,
                   "real_time_factor": 40.0, "warnings": WARNINGS},
    }
    for k, v in over.items():
        row[k] = v
    return row


def test_glides_are_warned_only_inside_named_frames():
    assert done_when.named_ranges(WARNINGS) == [(2, 60), (300, 320), (100, 140), (200, 230)]
    # Inside a glide warning, inside a frozen-pose warning, one frame past either end
    # (slack), and not inside: a slide's frames do not name a glide.
    glides = [(100, 140), (10, 50), (199, 231), (200, 233), (400, 420), (130, 210)]
    assert done_when.warned_glides(glides, WARNINGS) == 3
    assert done_when.warned_glides(glides[:3], WARNINGS) == 3
    assert done_when.warned_glides([(1, 61)], WARNINGS) == 1
    assert done_when.warned_glides([(1, 61)], WARNINGS, slack=0) == 0
    assert done_when.warned_glides([(100, 140)], []) == 0


def test_checks_pass_a_good_row_and_fail_each_criterion():
    good = done_when.checks(_row())
    assert all(good[k] for k in done_when.CHECKS), good
    assert done_when.checks(_row(path="zigzag"))["seed"] is None
    fails = {
        "c ratio": dict(sliding_contact_ratio=1.6),
        "seed": dict(seed={"m_per_seconds": 3.8}),
        "facing": dict(facing_travel={"mean_deg": 10.5}),
        "glides warned": dict(glides=[(100, 140), (500, 560)]),
        "rot x": dict(rotation={"ratio": 1.51}),
        "toe": dict(toe_margin_m=-0.011),
        "hips max": dict(tracking={"max_m": 0.121}),
        "rt": dict(report=dict(_row()["report"], real_time_factor=29.0)),
    }
    for check, over in fails.items():
        got = done_when.checks(_row(**over))
        assert got[check] is False, check
        # Only that check fails (and the report's agreement, whose measured side moved).
        assert {k for k in done_when.CHECKS if got[k] is False} - {"report"} == {check}, (check, got)


def test_strafe_limits_and_the_asked_facing():
    strafe = _row(path="strafe", sliding_contact_ratio=1.9, facing_travel={"mean_deg": 33.0},
                  facing_asked={"mean_deg": 6.4})
    strafe["report"] = dict(strafe["report"], facing_error_asked_mean_deg=6.4, facing_error_travel_mean_deg=33.0,
                            contact_sliding_ratio=1.9)
    got = done_when.checks(strafe)
    assert got["c ratio"] and got["facing"] and got["report"], got
    assert not done_when.checks(dict(strafe, sliding_contact_ratio=2.1))["c ratio"]


def test_report_agreement_within_a_tenth_and_a_centimetre():
    row = _row()
    assert done_when.report_agrees(row)
    off = copy.deepcopy(row)
    off["report"]["contact_sliding_ratio"] = 0.8 * 1.11
    assert not done_when.report_agrees(off)
    off = copy.deepcopy(row)
    off["report"]["hips_tracking_max_m"] = 0.1 + 0.005    # the clamp, not the hips: 1.1 cm short
    assert not done_when.report_agrees(off)
    nan = _row(facing_travel={"mean_deg": math.nan})
    nan["report"]["facing_error_travel_mean_deg"] = math.nan
    assert done_when.report_agrees(nan)


def test_before_settings_are_core_settings_that_turn_the_last_round_off():
    where = settings.flat_names()
    defaults = settings.BakeSettings().flat()
    assert set(bench_paths.BEFORE) <= set(where)
    for name, value in bench_paths.BEFORE.items():
        assert isinstance(value, bool) == isinstance(defaults[name], bool), name
        assert value != defaults[name] or name == "planted_adjustment", name   # each turns something off
    # The old-behaviour switches are core-only: not knobs the user sees.
    knobs = {k.name for k in settings.knobs()}
    assert not {"lock_on_contact", "strict_tag_query", "release_in_joints", "planted_adjustment"} & knobs
    before = settings.BakeSettings.of(**bench_paths.BEFORE)
    assert before.foot_lock.lock_on_contact is False and before.tags.strict_tag_query is True
    assert before.strafe.strafe_warp == 0.0 < settings.BakeSettings().strafe.strafe_warp