"""core.measure.path_metrics on synthetic motions whose answers are known."""

import math

import numpy as np
import pytest

from core.measure import path_metrics as pm
from core.errors import MotionMatchingError

FPS = 60.0
FLOOR = 0.10   # planted ankle height used by the synthetic feet


def straight_hips(seconds, speed, fps=FPS):
    """Hips walking along -Y at ``speed`` (T, 3)."""
    t = np.arange(int(round(seconds * fps)) + 1) / fps
    return np.stack([np.zeros_like(t), -speed * t, np.full_like(t, 0.95)], axis=1)


def feet(T, left=(0.1, 0.0, FLOOR), right=(-0.1, 0.0, 0.5)):
    out = np.empty((T, 2, 3))
    out[:, 0] = left
    out[:, 1] = right
    return out


# --------------------------------------------------------------------------- sliding

def test_planted_foot_dragged_10_cm_gives_10_cm():
    hips = straight_hips(1.0, 1.0)
    T = len(hips)
    ankles = feet(T)
    ankles[:, 0, 0] += np.linspace(0.0, 0.10, T)    # dragged 10 cm in 1 s (0.1 m/s): still planted
    s = pm.ankle_sliding(ankles, hips, FPS, FLOOR)
    assert s["left_m"] == pytest.approx(0.10)
    assert s["right_m"] == 0.0                        # lifted 40 cm: not planted
    assert s["moving_s"] == pytest.approx(1.0)
    assert s["cm_per_foot_per_moving_s"] == pytest.approx(5.0)   # 10 cm and 0 cm over two feet, 1 s


def test_only_horizontal_travel_counts():
    hips = straight_hips(1.0, 1.0)
    ankles = feet(len(hips))
    ankles[:, 0, 2] = FLOOR + np.linspace(0.0, 0.02, len(hips))   # rises 2 cm, still low
    ankles[:, 0, 1] -= np.linspace(0.0, 0.06, len(hips))
    assert pm.ankle_sliding(ankles, hips, FPS, FLOOR)["left_m"] == pytest.approx(0.06)


def test_swinging_or_high_feet_are_not_planted():
    hips = straight_hips(1.0, 1.5)
    T = len(hips)
    swing = feet(T)
    swing[:, 0, 1] -= np.linspace(0.0, 1.5, T)        # low but 1.5 m/s: a swing, not a slide
    assert pm.ankle_sliding(swing, hips, FPS, FLOOR)["left_m"] == 0.0
    high = feet(T, left=(0.1, 0.0, FLOOR + 0.031))    # just above floor + 3 cm
    high[:, 0, 1] -= np.linspace(0.0, 0.1, T)
    assert pm.ankle_sliding(high, hips, FPS, FLOOR)["left_m"] == 0.0
    low = feet(T, left=(0.1, 0.0, FLOOR + 0.029))
    low[:, 0, 1] -= np.linspace(0.0, 0.1, T)
    assert pm.ankle_sliding(low, hips, FPS, FLOOR)["left_m"] == pytest.approx(0.1)


def test_contact_flags_restrict_planted_steps():
    hips = straight_hips(1.0, 1.0)
    T = len(hips)
    ankles = feet(T)
    ankles[:, 0, 0] += np.linspace(0.0, 0.12, T)
    contacts = np.zeros((T, 2), dtype=bool)
    contacts[: T // 2 + 1, 0] = True                  # the data says contact for the first half only
    s = pm.ankle_sliding(ankles, hips, FPS, FLOOR, contacts=contacts)
    assert s["left_m"] == pytest.approx(0.06)
    with pytest.raises(MotionMatchingError, match="contacts"):
        pm.ankle_sliding(ankles, hips, FPS, FLOOR, contacts=contacts[:-1])


def test_standing_hips_give_no_moving_seconds():
    hips = straight_hips(1.0, 0.0)
    ankles = feet(len(hips))
    ankles[:, 0, 0] += np.linspace(0.0, 0.05, len(hips))
    s = pm.ankle_sliding(ankles, hips, FPS, FLOOR)
    assert s["left_m"] == pytest.approx(0.05)         # a shuffle while standing still counts in metres
    assert s["moving_s"] == 0.0 and s["cm_per_foot_per_moving_s"] == 0.0


def test_moving_seconds_count_steps_over_0_2_m_s():
    hips = np.concatenate([straight_hips(1.0, 0.1), straight_hips(2.0, 1.0)[1:] + [0, -0.1, 0]])
    assert pm.moving_seconds(hips, FPS) == pytest.approx(2.0)


def test_seed_measure_sums_both_feet_and_scales_to_14_5_s():
    T = int(2 * FPS) + 1
    ankles = feet(T, left=(0, 0, 0.12), right=(0, 0, 0.125))
    ankles[:, :, 0] += np.linspace(0.0, 1.0, T)[:, None]   # both 1 m in 2 s, under 13 cm
    s = pm.seed_sliding(ankles, FPS)
    assert s["total_m"] == pytest.approx(2.0)
    assert s["duration_s"] == pytest.approx(2.0)
    assert s["m_per_seconds"] == pytest.approx(2.0 * 14.5 / 2.0)
    ankles[:, 1, 2] = 0.14                                  # over 13 cm: not counted
    assert pm.seed_sliding(ankles, FPS)["total_m"] == pytest.approx(1.0)


def test_planted_height_is_the_median_ankle_height_of_still_toes():
    T = 120
    ankles = feet(T, left=(0, 0, 0.10), right=(0, 0, 0.10))
    toes = feet(T, left=(0, -0.15, 0.02), right=(0, -0.15, 0.02))
    # Second half: the left foot swings (toe fast, ankle high).
    ankles[60:, 0, 2] = 0.3
    toes[60:, 0, 1] -= np.arange(60) * 2.0 / FPS
    assert pm.planted_height(ankles, toes, FPS) == pytest.approx(0.10)


# --------------------------------------------------------------------------- facing and tracking

def hip_joints_facing(yaw, T):
    """Left and right hip joints (T, 2, 3) of a body turned ``yaw`` (0 faces -Y)."""
    c, s = math.cos(yaw), math.sin(yaw)
    left = np.array([0.1 * c, 0.1 * s, 0.9])   # +X turned by yaw
    out = np.empty((T, 2, 3))
    out[:, 0] = left
    out[:, 1] = left * [-1, -1, 1]
    return out


@pytest.mark.parametrize("yaw_deg, expect", [(0, (0, -1)), (90, (1, 0)), (180, (0, 1)), (-90, (-1, 0))])
def test_body_facing_follows_the_hip_joints(yaw_deg, expect):
    j = hip_joints_facing(math.radians(yaw_deg), 3)
    assert pm.body_facing(j[:, 0], j[:, 1]) == pytest.approx(np.tile(expect, (3, 1)), abs=1e-12)


def test_facing_error_against_travel():
    hips = straight_hips(2.0, 1.0)                    # travels -Y
    T = len(hips)
    ahead = hip_joints_facing(0.0, T)
    f = pm.body_facing(ahead[:, 0], ahead[:, 1])
    assert pm.travel_facing_error(f, hips, FPS)["mean_deg"] == pytest.approx(0.0, abs=1e-9)
    crab = hip_joints_facing(math.radians(30.0), T)
    e = pm.travel_facing_error(pm.body_facing(crab[:, 0], crab[:, 1]), hips, FPS)
    assert e["mean_deg"] == pytest.approx(30.0) and e["frames"] == T


def test_facing_error_ignores_slow_frames_and_sways():
    T = int(4 * FPS) + 1
    t = np.arange(T) / FPS
    # 1.2 m/s along -Y with the hips swaying 2.5 cm to each side once a stride
    # (1 s): the 0.5 s window leaves a wobble of about +-5 degrees.
    hips = np.stack([0.025 * np.sin(2 * np.pi * t), -1.2 * t, np.full(T, 0.9)], axis=1)
    j = hip_joints_facing(0.0, T)
    e = pm.travel_facing_error(pm.body_facing(j[:, 0], j[:, 1]), hips, FPS)
    assert 2.0 < e["mean_deg"] < 4.0 and e["max_deg"] < 5.5
    # A sway as long as the window cancels (but for the ends, where the window is cut short).
    hips[:, 0] = 0.025 * np.sin(2 * np.pi * t / 0.5)
    e = pm.travel_facing_error(pm.body_facing(j[:, 0], j[:, 1]), hips, FPS)
    assert e["mean_deg"] < 0.5
    still = straight_hips(2.0, 0.3)
    e = pm.travel_facing_error(pm.body_facing(*hip_joints_facing(1.0, len(still)).transpose(1, 0, 2)), still, FPS)
    assert e["frames"] == 0 and math.isnan(e["mean_deg"])


def test_asked_facing_error():
    j = hip_joints_facing(math.radians(10.0), 5)
    f = pm.body_facing(j[:, 0], j[:, 1])
    asked = np.tile([0.0, -1.0], (5, 1))
    assert pm.asked_facing_error(f, asked)["mean_deg"] == pytest.approx(10.0)


def test_tracking_measures_the_hips_horizontally():
    hips = straight_hips(1.0, 1.0)
    path = hips[:, :2].copy()
    path[:, 0] += 0.05
    path[30, 0] += 0.065
    tr = pm.tracking(hips, path)
    assert tr["max_m"] == pytest.approx(0.115) and tr["max_frame"] == 30
    assert tr["mean_m"] == pytest.approx(0.05 + 0.065 / len(hips))


# --------------------------------------------------------------------------- glides

def walking_feet(hips, fps, step_s):
    """Ankles that take turns: in each period of ``step_s`` one foot stands still
    (where the hips were when it landed) and the other swings 15 cm up, so a
    foot lands and the other lifts every ``step_s`` seconds."""
    n = int(round(step_s * fps))
    out = np.empty((len(hips), 2, 3))
    for side, x in ((0, 0.1), (1, -0.1)):
        for i in range(len(hips)):
            if (i // n + side) % 2 == 0:
                out[i, side] = [x, hips[(i // n) * n, 1], FLOOR]
            else:
                out[i, side] = [x, hips[i, 1], FLOOR + 0.15]
    return out


def test_a_stepping_walk_has_no_glide_and_a_frozen_pose_has_one():
    hips = straight_hips(4.0, 1.2)
    walk = walking_feet(hips, FPS, 0.4)
    assert pm.frozen_glides(pm.planted(walk, FPS, FLOOR), hips, FPS) == []
    # Frozen pose: both feet carried with the hips, low, for the middle 2 s.
    frozen = walk.copy()
    a, b = int(1 * FPS), int(3 * FPS)
    frozen[a:b, :, :2] = hips[a:b, None, :2] + [[0.1, 0.0], [-0.1, 0.0]]
    frozen[a:b, :, 2] = FLOOR
    glides = pm.frozen_glides(pm.planted(frozen, FPS, FLOOR), hips, FPS)
    assert len(glides) == 1
    first, last = glides[0]
    assert first <= a + 1 and last >= b - 2 and (last - first) / FPS > 1.9


def test_no_glide_while_standing():
    hips = straight_hips(3.0, 0.0)
    still = feet(len(hips), right=(-0.1, 0.0, FLOOR))
    assert pm.frozen_glides(pm.planted(still, FPS, FLOOR), hips, FPS) == []


def test_glide_needs_more_than_half_a_second():
    hips = straight_hips(3.0, 1.0)
    walk = walking_feet(hips, FPS, step_s=0.4)
    assert pm.frozen_glides(pm.planted(walk, FPS, FLOOR), hips, FPS) == []
    slow = walking_feet(hips, FPS, step_s=0.6)       # 0.6 s between landings and lifts
    assert len(pm.frozen_glides(pm.planted(slow, FPS, FLOOR), hips, FPS)) > 0


# --------------------------------------------------------------------------- rotations and toes

def quats_about_z(angles):
    a = np.asarray(angles, dtype=np.float64)
    return np.stack([np.cos(a / 2), np.zeros_like(a), np.zeros_like(a), np.sin(a / 2)], axis=-1)


def test_rotation_steps_ignore_the_quaternion_sign():
    q = quats_about_z(np.radians([0.0, 1.0, 2.0, 3.0]))[:, None]
    q[2] *= -1.0
    assert np.degrees(pm.rotation_steps(q))[:, 0] == pytest.approx([1.0, 1.0, 1.0])


def test_rotation_change_against_the_raw_percentile():
    raw = np.stack([quats_about_z(np.radians(np.arange(1000) * 1.0)),
                    quats_about_z(np.radians(np.arange(1000) * 0.5)),
                    quats_about_z(np.zeros(1000))], axis=1)          # third joint never moves
    bake_angles = np.radians(np.arange(100) * 1.0)
    bake_angles[50:] += np.radians(4.0)                              # one 5-degree step on the first joint
    bake = np.stack([quats_about_z(bake_angles), quats_about_z(np.radians(np.arange(100) * 0.5)),
                     quats_about_z(np.radians(np.arange(100) * 3.0))], axis=1)
    r = pm.rotation_change(bake, raw, names=["a", "b", "c"])
    assert r["joint"] == "a" and r["frame"] == 50
    assert r["ratio"] == pytest.approx(5.0) and r["max_deg"] == pytest.approx(5.0) and r["raw_deg"] == pytest.approx(1.0)
    with pytest.raises(MotionMatchingError, match="same joints"):
        pm.rotation_change(bake[:, :2], raw)


def test_lowest_toe():
    toes = feet(10, left=(0, 0, 0.02), right=(0, 0, 0.03))
    toes[4, 1, 2] = -0.007
    assert pm.lowest(toes) == pytest.approx(-0.007)


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, match", [
    (lambda: pm.ankle_sliding(np.zeros((5, 3)), np.zeros((5, 3)), FPS, FLOOR), r"\(T, 2, 3\)"),
    (lambda: pm.ankle_sliding(np.zeros((5, 2, 3)), np.zeros((4, 3)), FPS, FLOOR), "as many samples"),
    (lambda: pm.ankle_sliding(np.zeros((1, 2, 3)), np.zeros((1, 3)), FPS, FLOOR), "at least two"),
    (lambda: pm.ankle_sliding(np.full((3, 2, 3), np.nan), np.zeros((3, 3)), FPS, FLOOR), "NaN"),
    (lambda: pm.seed_sliding(np.zeros((3, 2, 3)), 0), "frame rate"),
    (lambda: pm.moving_seconds(np.zeros((3, 3)), -24), "frame rate"),
    (lambda: pm.tracking(np.zeros((3, 3)), np.zeros((4, 2))), "as many samples"),
    (lambda: pm.frozen_glides(np.zeros((3, 2), dtype=bool), np.zeros((3, 3)), FPS), "as many samples"),
])
def test_bad_arrays_are_refused_with_a_sentence(call, match):
    with pytest.raises(MotionMatchingError, match=match):
        call()


def test_steps_between_segments_are_not_counted():
    """A jump between two clips (segments) is neither sliding nor movement."""
    T = 20
    hips = np.zeros((T, 3))
    hips[:, 1] = -np.arange(T) * 0.02           # 1.2 m/s at 60 fps
    ankles = np.zeros((T, 2, 3)) + [0.0, 0.0, 0.08]
    ankles[10:, :, 0] += 0.5                    # the second clip starts half a metre aside
    hips[10:, 0] += 0.5
    seg = np.repeat([0, 1], 10)
    whole = pm.ankle_sliding(ankles, hips, 60.0, 0.08, max_speed=None)
    split = pm.ankle_sliding(ankles, hips, 60.0, 0.08, max_speed=None, segments=seg)
    assert whole["left_m"] == pytest.approx(0.5) and split["left_m"] == 0.0
    assert split["moving_s"] == pytest.approx(whole["moving_s"] - 1 / 60.0)
    assert pm.planted(ankles, 60.0, 0.08, max_speed=None, segments=seg)[:, 0].tolist() == [True] * 9 + [False] + [True] * 9
    # With the speed condition on, the 30 m/s jump is not planted either.
    assert not pm.planted(ankles, 60.0, 0.08)[9].any()
    with pytest.raises(pm.PathMetricsError):
        pm.planted(ankles, 60.0, 0.08, segments=seg[:5])


def test_unsupported_stretch_counts_travel_with_no_still_ankle():
    from core.measure import path_metrics as pm

    fps = 10.0
    t = np.arange(41) / fps
    hips = np.stack([t * 1.0, np.zeros_like(t), np.full_like(t, 0.9)], axis=1)   # 1 m/s
    ankles = np.zeros((41, 2, 3))
    # Left ankle still until 1 s, then both ankles glide with the hips for 1.5 s,
    # then the right ankle stands still again.
    ankles[:, 0, 0] = np.where(t <= 1.0, 0.0, t - 1.0)
    ankles[:, 1, 0] = np.where(t <= 2.5, np.maximum(t - 1.0, 0.0) + 0.0, 1.5)
    assert pm.unsupported_stretch(ankles, hips, fps) == pytest.approx(1.5)
    assert pm.unsupported_stretch(ankles, hips * [0.2, 1, 1], fps) == 0.0    # the body barely moves


def test_glides_count_stretches_of_0_4_s_or_more_with_no_still_ankle():
    from core.measure import path_metrics as pm

    fps = 10.0
    t = np.arange(61) / fps
    hips = np.stack([t * 1.0, np.zeros_like(t), np.full_like(t, 0.9)], axis=1)   # 1 m/s throughout
    # Both ankles move with the hips except over the steps from frames 10, 24,
    # 28 and 34, where they stand: stretches of 1.0, 1.3, 0.3 (too short), 0.5 and 2.5 s.
    still = np.zeros(61, dtype=bool)
    still[[10, 24, 28, 34]] = True
    ankles = np.zeros((61, 2, 3))
    ankles[:, 0, 0] = ankles[:, 1, 0] = np.concatenate([[0.0], np.cumsum(np.where(still[:-1], 0.0, 0.1))])
    got = pm.glides(ankles, hips, fps)
    assert got["count"] == 4
    assert got["total_s"] == pytest.approx(1.0 + 1.3 + 0.5 + 2.5)
    assert got["longest_s"] == pytest.approx(2.5) == pytest.approx(pm.unsupported_stretch(ankles, hips, fps))
    assert pm.glides(ankles, hips * [0.3, 1, 1], fps)["count"] == 0   # the body barely moves
    assert pm.glides(ankles, hips, fps, seconds=5.0) == {"count": 0, "total_s": 0.0, "longest_s": 0.0}


def test_rotation_change_of_a_take_in_clips_counts_no_step_across_two():
    # One take cut in two clips that do not join (the second starts 90 degrees on):
    # the steps are those within each clip, so the raw percentile stays 1 degree.
    whole = quats_about_z(np.radians(np.arange(1000) * 1.0))[:, None]
    clips = [whole[:500], quats_about_z(np.radians(90.0 + np.arange(500) * 1.0))[:, None]]
    bake = quats_about_z(np.radians(np.arange(100) * 1.5))[:, None]
    r = pm.rotation_change(bake, clips)
    assert r["raw_deg"] == pytest.approx(1.0) and r["ratio"] == pytest.approx(1.5)
    joined = pm.rotation_change(bake, np.concatenate(clips))
    assert joined["raw_deg"] > 1.0                    # the 90-degree seam counts when the clips are joined
    with pytest.raises(MotionMatchingError, match="same joints"):
        pm.rotation_change(bake, [clips[0], np.concatenate([clips[1]] * 2, axis=1)])
