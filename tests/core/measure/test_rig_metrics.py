"""core.measure.rig_metrics: world-space figures of a character against its source."""

import numpy as np
import pytest

from core.measure import rig_metrics as rm
from core.maths import transforms as tf
from core.errors import MotionMatchingError

# A T-posed skeleton in metres, Z up, facing -Y: {joint: head}.
TPOSE = {
    "Hips": (0, 0, 1.0), "Spine": (0, 0, 1.1), "Neck": (0, 0, 1.5), "Head": (0, 0, 1.6),
    "LeftUpperArm": (0.2, 0, 1.45), "LeftLowerArm": (0.5, 0, 1.45), "LeftHand": (0.75, 0, 1.45),
    "RightUpperArm": (-0.2, 0, 1.45), "RightLowerArm": (-0.5, 0, 1.45), "RightHand": (-0.75, 0, 1.45),
    "LeftUpperLeg": (0.1, 0, 0.95), "LeftLowerLeg": (0.1, 0, 0.5), "LeftFoot": (0.1, 0, 0.08),
    "RightUpperLeg": (-0.1, 0, 0.95), "RightLowerLeg": (-0.1, 0, 0.5), "RightFoot": (-0.1, 0, 0.08),
}


def _frames(pose, F):
    return {k: np.tile(np.asarray(v, dtype=float), (F, 1)) for k, v in pose.items()}


def _rot_z(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])


def test_to_world_one_matrix_and_per_frame():
    m = np.eye(4)
    m[:3, :3] = np.diag([0.01, 0.01, 0.01]) @ np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0.0]])  # +90 deg about X
    m[:3, 3] = (1, 2, 3)
    p = np.array([[0.0, 100.0, 0.0], [0.0, 0.0, 100.0]])      # 1 m up and 1 m forward (Y up, +Z front)
    np.testing.assert_allclose(rm.to_world(m, p), [[1, 2, 4], [1, 1, 3]], atol=1e-12)
    per = np.stack([m, np.eye(4)])
    pts = np.stack([p, p])
    out = rm.to_world(per, pts)
    np.testing.assert_allclose(out[0], [[1, 2, 4], [1, 1, 3]], atol=1e-12)
    np.testing.assert_allclose(out[1], p)
    with pytest.raises(MotionMatchingError):
        rm.to_world(per, pts[:1])


def test_pose_heads_through_the_object_matrix():
    pose = np.tile(np.eye(4), (3, 2, 1, 1))
    pose[:, 1, :3, 3] = (0, 50, 0)
    m = np.eye(4)
    m[:3, :3] = 0.01 * np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0.0]])
    heads = rm.pose_heads(pose, m)
    assert heads.shape == (3, 2, 3)
    np.testing.assert_allclose(heads[:, 1], [[0, 0, 0.5]] * 3, atol=1e-12)


def test_identical_motion_has_no_excess_and_a_turned_limb_has_its_angle():
    src = _frames(TPOSE, 4)
    tgt = _frames(TPOSE, 4)
    out = rm.angle_excess(src, tgt, TPOSE, TPOSE)
    assert out["excess_deg"] == pytest.approx(0.0, abs=1e-9)
    assert len(out["per_segment"]) == len(rm.SEGMENTS)
    # The target's left forearm points 30 degrees off on every frame: its segment
    # (elbow to wrist) shows 30, the mean over ten segments 3.
    elbow = np.asarray(TPOSE["LeftLowerArm"], dtype=float)
    tgt["LeftHand"] = np.tile(elbow + _rot_z(30) @ (np.asarray(TPOSE["LeftHand"]) - elbow), (4, 1))
    out = rm.angle_excess(src, tgt, TPOSE, TPOSE)
    assert out["per_segment"]["left forearm"] == pytest.approx(30.0, abs=1e-6)
    assert out["excess_deg"] == pytest.approx(3.0, abs=1e-6)
    assert out["max_deg"] == pytest.approx(30.0, abs=1e-6)


def test_rest_difference_is_subtracted():
    """A target whose arms hang 45 degrees lower at rest and keep that offset
    through the motion differs by nothing beyond its rest."""
    lowered = dict(TPOSE)
    for side, s in (("Left", 1), ("Right", -1)):
        sh = np.asarray(TPOSE[side + "UpperArm"], dtype=float)
        r = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0, 1.0, 0]), np.array(s * np.pi / 4)))
        for j in ("LowerArm", "Hand"):
            lowered[side + j] = tuple(sh + r @ (np.asarray(TPOSE[side + j]) - sh))
    out = rm.angle_excess(_frames(TPOSE, 2), _frames(lowered, 2), TPOSE, lowered)
    assert out["excess_deg"] == pytest.approx(0.0, abs=1e-6)
    assert out["rest_deg"] == pytest.approx(4 * 45.0 / len(rm.SEGMENTS), abs=1e-6)
    # Against its own T-pose as rest, the same motion is 45 degrees off on four segments.
    out = rm.angle_excess(_frames(TPOSE, 2), _frames(lowered, 2), TPOSE, TPOSE)
    assert out["excess_deg"] == pytest.approx(18.0, abs=1e-6)


def test_segments_missing_on_one_side_are_left_out_and_none_known_is_refused():
    src = _frames(TPOSE, 2)
    tgt = _frames({k: v for k, v in TPOSE.items() if k != "Neck"}, 2)
    out = rm.angle_excess(src, tgt, TPOSE, {k: v for k, v in TPOSE.items() if k != "Neck"})
    assert "spine" not in out["per_segment"] and "neck" not in out["per_segment"]
    assert len(out["per_segment"]) == len(rm.SEGMENTS) - 2
    with pytest.raises(MotionMatchingError):
        rm.angle_excess({"Hips": src["Hips"]}, {"Hips": src["Hips"]}, TPOSE, TPOSE)
    with pytest.raises(MotionMatchingError):
        rm.angle_excess(src, _frames(TPOSE, 3), TPOSE, TPOSE)


def test_travel_and_distance():
    t = np.linspace(0, 1, 101)
    ctrl = np.column_stack([9.0 * t, np.zeros_like(t), np.zeros_like(t)])
    hips = ctrl + [0.0, 0.05, 0.9]                      # 5 cm to the side, 90 cm up
    out = rm.travel(hips, ctrl)
    assert out["controller_m"] == pytest.approx(9.0)
    assert out["percent"] == pytest.approx(100.0)
    assert out["distance_mean_m"] == pytest.approx(0.05) and out["distance_max_m"] == pytest.approx(0.05)
    still = np.tile([0.0, 0.0, 0.9], (101, 1))          # a character that lies at the origin
    out = rm.travel(still, ctrl)
    assert out["percent"] == 0.0 and out["distance_max_m"] == pytest.approx(9.0)
    assert rm.path_length(ctrl[:1]) == 0.0


def test_lowest_standing_and_soles():
    pts = np.zeros((4, 3, 3))
    pts[:, :, 2] = [[0.5, 0.01, 1.0], [0.4, -0.3, 1.0], [0.2, 0.02, 0.3], [0.0, 0.03, 0.9]]
    np.testing.assert_allclose(rm.lowest_heights(pts), [0.01, -0.3, 0.02, 0.0])
    fps = 10.0
    x = np.array([0.0, 0.0, 0.0, 0.5, 1.0, 1.5, 1.5, 1.5, 1.5])
    pos = np.column_stack([x, np.zeros_like(x), np.ones_like(x)])
    standing = rm.standing_frames(pos, fps)
    np.testing.assert_array_equal(standing, [True, True, False, False, False, False, True, True, True])
    lowest = np.array([0.0, 0.01, -0.2, -0.2, -0.2, -0.2, 0.0, 0.02, 0.03])
    assert rm.soles_height(lowest, standing) == pytest.approx(0.01)
    assert np.isnan(rm.soles_height(lowest, np.zeros(9, dtype=bool)))
