import numpy as np
import pytest

from core.errors import MotionMatchingError
from core.bake.legs.foot_lock import FootLock, FootLockError, ankle_target, run_foot_lock, with_touchdowns

DT = 1.0 / 60.0


def sliding_toe(frames, speed, start=(0.1, 0.2, 0.018)):
    """A toe sliding along +X at ``speed`` m/s."""
    toes = np.tile(np.asarray(start, dtype=float), (frames, 1))
    toes[:, 0] += speed * DT * np.arange(frames)
    return toes


# The rule these tests follow: a foot locks on contact only while its toe is slow,
# and is released 20 cm from its pin (the bake's own defaults are FootLockSettings').
SPEED_GATED = {"unlock_distance": 0.2, "on_contact": False}


def test_locks_on_slow_contact_and_pins_the_touchdown_point():
    lock = FootLock(**SPEED_GATED)
    toe = np.array([0.1, 0.2, 0.018])
    wanted, locked = lock.step(True, toe, 0.0, DT)
    assert locked and lock.lock_count == 1
    np.testing.assert_array_equal(wanted, toe)
    # The animated toe wanders (up to 5 cm, rising too): the wanted toe stays put.
    for k in range(1, 30):
        moved = toe + np.array([0.001, -0.0005, 0.001]) * k
        wanted, locked = lock.step(True, moved, 0.05, DT)
        assert locked
        np.testing.assert_array_equal(wanted, toe)
    assert wanted[2] == 0.018 and lock.lock_count == 1


def test_no_lock_when_fast_or_without_contact():
    toes = sliding_toe(60, 0.5)
    for contacts, speeds in ((np.ones(60, bool), np.full(60, 0.2)),
                             (np.zeros(60, bool), np.zeros(60)),
                             (np.ones(60, bool), None)):  # measured: 0.5 m/s
        wanted, locked, count = run_foot_lock(contacts, toes, speeds, DT, **SPEED_GATED)
        assert count == 0 and not locked.any()
        np.testing.assert_array_equal(wanted, toes)
    # Just under the threshold locks; the threshold is a constructor argument.
    assert run_foot_lock([True], toes[:1], [0.149], DT, **SPEED_GATED)[2] == 1
    assert run_foot_lock([True], toes[:1], [0.149], DT, **dict(SPEED_GATED, lock_speed=0.1))[2] == 0


def test_releases_at_twenty_centimetres_and_blends_out_without_a_pop():
    n, speed = 300, 0.09
    toes = sliding_toe(n, speed)
    wanted, locked, count = run_foot_lock(np.ones(n, bool), toes, np.full(n, speed), DT, **SPEED_GATED)
    # Locked from frame 0; the drift speed * k * dt first exceeds 0.2 m at k = 134.
    release = int(np.argmin(locked))
    assert locked[:release].all() and release == 134
    assert 0.2 < speed * release * DT < 0.2 + speed * DT
    # On the release frame the output is still on the pinned point...
    np.testing.assert_array_equal(wanted[release], toes[0])
    np.testing.assert_array_equal(wanted[release - 1], toes[0])
    # ...then catches up with the animation smoothly: it starts at rest and never
    # jumps (a pop would be the 0.2 m offset in one frame).
    steps = np.linalg.norm(np.diff(wanted, axis=0), axis=1)
    assert steps[release] < 0.005
    assert steps.max() < 0.025
    offset = np.linalg.norm(wanted - toes, axis=1)
    # It locks again only once the offset has died down under 2 cm (no lock/unlock
    # flicker), and the offset shrinks all the way until then.
    relock = release + int(np.argmax(locked[release:]))
    assert relock > release + 10 and offset[relock] < 0.02 <= offset[relock - 1]
    assert np.all(np.diff(offset[release:relock + 1]) < 0.0)
    np.testing.assert_allclose(wanted[relock + 1:relock + 30],  # pinned
                               np.broadcast_to(wanted[relock], (29, 3)))
    assert count == 1 + np.count_nonzero(np.diff(locked.astype(int)) == 1)
    assert count <= 3


def test_release_when_contact_ends_is_continuous():
    n = 120
    toes = np.tile([0.0, 0.0, 0.02], (n, 1))
    toes[40:, 1] = -1.2 * DT * np.arange(1, n - 39)  # lifts off at 1.2 m/s along -Y
    contacts = np.arange(n) < 40
    wanted, locked, count = run_foot_lock(contacts, toes, None, DT, **SPEED_GATED)
    # Speeds measured from the positions: nothing to measure on frame 0, so the
    # lock starts on frame 1.
    assert count == 1 and not locked[0] and locked[1:40].all() and not locked[40:].any()
    np.testing.assert_array_equal(wanted[40], toes[0])
    steps = np.linalg.norm(np.diff(wanted, axis=0), axis=1)
    assert steps[40] < 0.005 and steps.max() < 1.5 * 1.2 * DT + 0.01
    np.testing.assert_allclose(wanted[-1], toes[-1], atol=1e-3)  # blended out


def test_lock_count_over_steps():
    # Three steps: each contact starts with the toe still, then it swings 0.6 m on.
    toes, contacts = [], []
    x = 0.0
    for _ in range(3):
        for _ in range(30):
            toes.append([x, 0.0, 0.018])
            contacts.append(True)
        for k in range(1, 31):
            toes.append([x + 0.6 * k / 30.0, 0.0, 0.018 + 0.1 * np.sin(np.pi * k / 30)])
            contacts.append(False)
        x += 0.6
    toes = np.array(toes)
    wanted, locked, count = run_foot_lock(contacts, toes, None, DT, **SPEED_GATED)
    assert count == 3
    starts = np.flatnonzero(np.diff(np.concatenate([[0], locked.astype(int)])) == 1)
    np.testing.assert_array_equal(starts, [1, 60, 120])  # frame 0: speed unknown
    # Pinned where the toe touched down, up to what is left of the last release's
    # blend (it locks where the output is, so that locking never pops).
    np.testing.assert_allclose(wanted[starts], toes[starts], atol=1e-3)
    assert np.all(np.linalg.norm(np.diff(wanted, axis=0), axis=1) < 0.05)


def test_bad_settings_and_input_are_refused():
    for kwargs in ({"lock_speed": 0.0}, {"unlock_distance": -1.0},
                   {"blend_halflife": float("nan")}):
        with pytest.raises(FootLockError) as info:
            FootLock(**kwargs)
        assert isinstance(info.value, MotionMatchingError)
    with pytest.raises(FootLockError):
        FootLock().step(True, np.zeros(3), 0.0, 0.0)
    with pytest.raises(FootLockError):
        run_foot_lock([True, False], np.zeros((3, 3)), None, DT)


def test_ankle_target_moves_the_ankle_by_the_toe_correction():
    ankle = np.array([0.0, 0.05, 0.1])
    toe = np.array([0.0, -0.1, 0.02])
    wanted = np.array([0.03, -0.12, 0.018])
    target = ankle_target(ankle, toe, wanted)
    np.testing.assert_allclose(target - ankle, wanted - toe)
    np.testing.assert_allclose(wanted - target, toe - ankle)


def test_a_contact_begins_where_the_toe_came_down_just_before():
    contacts = np.zeros(60, dtype=bool)
    contacts[12:20] = contacts[30:36] = contacts[50:55] = True
    heights = np.full(60, 0.10)
    heights[8:20] = 0.025         # down (within 1 cm of 0.018) 4 steps before the first contact
    heights[22:36] = 0.02         # down 8 steps before the second: longer than 0.1 s (6 steps)
    heights[55:58] = heights[58:] = 0.02   # after the last contact: no contact follows
    heights[45:50] = 0.02         # down 5 steps before the third
    heights[46] = 0.10            # ... but up again between: down for the last 3
    out = with_touchdowns(contacts, heights, 0.018, DT, height=0.01, ahead=0.1)
    assert out[8:20].all() and not out[:8].any()
    np.testing.assert_array_equal(out[20:36], contacts[20:36])
    assert out[47:55].all() and not out[40:47].any() and not out[55:].any()
    # A toe that stays down from one contact to the next (a pivot, a drag) is left alone.
    heights[20:30] = 0.02
    np.testing.assert_array_equal(with_touchdowns(contacts, heights, 0.018, DT, ahead=1.0)[20:30], False)
    # The flags given are not changed; a take whose toes never come down is left alone.
    assert contacts.sum() == 19
    np.testing.assert_array_equal(with_touchdowns(contacts, np.full(60, 0.1), 0.018, DT), contacts)


def test_a_lock_made_without_settings_uses_the_bakes_defaults():
    from core.bake.settings import FootLockSettings

    lock, s = FootLock(), FootLockSettings()
    assert (lock.lock_speed, lock.unlock_distance, lock.blend_halflife, lock.on_contact) == (
        s.lock_speed, s.unlock_distance, s.lock_blend_halflife, s.lock_on_contact)
