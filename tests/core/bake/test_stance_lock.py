"""The stance rule of the foot lock: where the data has neither foot down, one
toe on the ground holds (core.bake.legs.foot_lock.with_stance)."""

import numpy as np

from core.bake.legs.foot_lock import with_stance
from core.bake.settings import BakeSettings

DT = 1.0 / 30.0
PLANTED = 0.02


def feet(frames, speeds, heights):
    """(S, 2, 3) two toes moving along +X at ``speeds`` m/s (per foot), at ``heights``."""
    toes = np.zeros((frames, 2, 3))
    toes[:, :, 0] = np.arange(frames)[:, None] * DT * np.asarray(speeds, dtype=float)[None, :]
    toes[:, 1, 1] = 0.2
    toes[:, :, 2] = heights
    return toes


def test_the_slower_toe_on_the_ground_stands_where_no_foot_is_down():
    toes = feet(6, [0.6, 0.3], PLANTED)
    out = with_stance(np.zeros((6, 2), dtype=bool), toes, np.zeros((6, 2)), PLANTED, DT, after=0.0)
    np.testing.assert_array_equal(out[:, 1], True)
    np.testing.assert_array_equal(out[:, 0], False)


def test_contacts_the_data_has_are_kept_and_nothing_is_added_beside_them():
    given = np.zeros((6, 2), dtype=bool)
    given[:, 0] = True
    out = with_stance(given, feet(6, [0.6, 0.3], PLANTED), np.zeros((6, 2)), PLANTED, DT)
    np.testing.assert_array_equal(out, given)


def test_a_flight_with_both_toes_up_or_fast_is_left_alone():
    none = np.zeros((6, 2), dtype=bool)
    up = with_stance(none, feet(6, [0.3, 0.3], PLANTED + 0.05), np.zeros((6, 2)), PLANTED, DT)
    fast = with_stance(none, feet(6, [3.0, 3.0], PLANTED), np.zeros((6, 2)), PLANTED, DT)
    assert not up.any() and not fast.any()


def test_a_stance_ends_past_its_reach_and_the_foot_waits_to_lift():
    # One toe sliding at 1.3 m/s on the ground: 4.3 cm a step, out of 20 cm reach at the sixth step.
    S = 12
    toes = feet(S, [1.3, 0.0], PLANTED)
    toes[:, 1, 2] = PLANTED + 0.1           # the other foot in the air
    toes[8:, 0, 2] = PLANTED + 0.1          # lifted at step 8, down again at 10
    toes[10:, 0, 2] = PLANTED
    out = with_stance(np.zeros((S, 2), dtype=bool), toes, np.zeros((S, 2)), PLANTED, DT, after=0.0)
    np.testing.assert_array_equal(out[:, 0], [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1])
    assert not out[:, 1].any()


def test_a_stance_ends_when_the_foot_turns_too_far():
    S = 8
    heading = np.zeros((S, 2))
    heading[:, 0] = 0.11 * np.arange(S)      # radians: the foot pivots
    toes = feet(S, [0.0, 0.0], PLANTED)
    toes[:, 1, 2] = PLANTED + 0.1
    out = with_stance(np.zeros((S, 2), dtype=bool), toes, heading, PLANTED, DT, turn=0.3, after=0.0)
    np.testing.assert_array_equal(out[:, 0], [1, 1, 1, 0, 0, 0, 0, 0])


def test_a_short_gap_between_the_datas_contacts_is_left_alone():
    # 0.1 s at 30 fps: the first three steps of a gap with neither foot down stand nobody.
    given = np.zeros((8, 2), dtype=bool)
    given[:2, 0] = True
    out = with_stance(given, feet(8, [0.3, 0.6], PLANTED), np.zeros((8, 2)), PLANTED, DT, after=0.1)
    np.testing.assert_array_equal(out[:, 0], [1, 1, 0, 0, 0, 1, 1, 1])
    assert not out[:, 1].any()


def test_the_bake_plants_a_stance_foot_by_default():
    assert BakeSettings().foot_lock.lock_stance is True
