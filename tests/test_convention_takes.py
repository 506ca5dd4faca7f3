"""The convention test takes (tools/convention_takes.py) read back with the
add-on's BVH parser and forward kinematics: every joint where the sample's is."""

import os

import numpy as np
import pytest

from core.io import bvh_parse
from core.maths import transforms as tf
from tools import bvh_writer, convention_takes as ct, thin_takes as tt

TOL_CM = 1e-3     # the files hold six decimals


@pytest.fixture(scope="module")
def sample():
    return ct.read_take(ct.SAMPLE)


@pytest.fixture(scope="module")
def written(sample, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("conventions"))
    return {
        "cmu": ct.cmu_take(sample, os.path.join(out, "cmu.bvh"))[0],
        "bandai": ct.bandai_takes(sample, os.path.join(out, "bandai")),
        "unreal": ct.unreal_take(sample, os.path.join(out, "unreal.bvh"))[0],
    }


def _same(take, sample, pairs, frames=slice(None), scale=1.0):
    for name, src in pairs:
        got = take.pos_of(name)
        want = sample.pos_of(src)[frames] * scale
        assert np.abs(got - want).max() < TOL_CM, (name, src, np.abs(got - want).max())


def test_euler_decomposition_gives_the_rotation_back():
    rng = np.random.default_rng(3)
    m = tf.quat_to_matrix(tf.quat_normalize(rng.normal(size=(200, 4))))
    for order in ("ZYX", "ZXY"):
        back = tf.euler_to_matrix(np.radians(bvh_writer.matrix_to_euler(m, order)), order)
        assert np.abs(back - m).max() < 1e-9


def test_unreal_joints_where_the_sample_has_them_and_root_on_the_ground(sample, written):
    take = ct.read_take(written["unreal"])
    assert take.names[:3] == ["root", "pelvis", "spine_01"] and "ball_l" in take.names
    assert len(take.pos) == len(sample.pos)
    _same(take, sample, [("pelvis", "Hips"), ("head", "Head"), ("hand_l", "LeftWrist"), ("foot_r", "RightAnkle"),
                         ("ball_l", "LeftToe"), ("clavicle_r", "RightCollar"), ("spine_04", "Chest4")])
    root = take.pos_of("root")
    assert np.abs(root[:, 1]).max() < TOL_CM                     # on the ground (Y up)
    assert np.abs(root[:, [0, 2]] - sample.pos_of("Hips")[:, [0, 2]]).max() < TOL_CM
    # The root turns with the hips: its +Z (forward at rest) is the hips' facing on the ground.
    facing = sample.rot_of("Hips") @ ct.hips_forward(sample)
    facing[:, 1] = 0.0
    facing /= np.linalg.norm(facing, axis=1, keepdims=True)
    assert np.abs(take.rot_of("root")[:, :, 2] - facing).max() < 1e-5
    assert np.ptp(root[:, 0]) > 100.0                            # it does travel


def test_bandai_clips_static_root_six_channels_rest_along_x(sample, written):
    paths = written["bandai"]
    assert len(paths) >= 30
    seen = 0
    for k, path in enumerate(paths):
        bvh = bvh_parse.read_bvh(path)
        assert bvh.fps == pytest.approx(30.0)
        assert 3.0 <= bvh.frame_count / bvh.fps <= 10.0, path
        assert all(len(c) == 6 for c in bvh.channels)
        assert np.all(bvh.offsets[:, 1:] == 0.0) and np.all(bvh.offsets[:, 0] >= 0.0)
        if k in (0, len(paths) - 1):
            take = ct.Take(bvh)
            frames = slice(2 * seen, 2 * (seen + bvh.frame_count), 2)
            _same(take, sample, [("Hips", "Hips"), ("UpperLeg_L", "LeftHip"), ("Foot_R", "RightAnkle"),
                                 ("Toes_L", "LeftToe"), ("Hand_R", "RightWrist"), ("Head", "Head"),
                                 ("Shoulder_L", "LeftCollar"), ("Chest3", "Chest4")], frames)
            assert np.abs(take.pos_of("joint_Root")).max() == 0.0
            # The joints' rotations are not the sample's (the rest differs).
            assert np.abs(take.rot_of("LowerLeg_L") - sample.rot_of("LeftKnee")[frames]).max() > 0.5
        seen += bvh.frame_count
    assert seen == len(sample.pos[::2])


def test_cmu_names_rate_units_and_proportions(sample, written):
    bvh = bvh_parse.read_bvh(written["cmu"])
    assert bvh.fps == pytest.approx(120.0)
    for name in ("LHipJoint", "LeftUpLeg", "LeftToeBase", "LowerBack", "Spine1", "Neck1", "LeftShoulder",
                 "LeftArm", "LeftForeArm", "LThumb", "LeftFingerBase", "RightHandIndex1"):
        assert name in bvh.names
    take = ct.Take(bvh)
    assert len(take.pos) == 2 * len(sample.pos) - 1
    to_cm = ct.CMU_UNIT * 100.0
    even = take.pos[::2] * to_cm
    idx = {n: j for j, n in enumerate(take.names)}
    # The hips travel the sample's path scaled with the legs.
    assert np.abs(even[:, idx["Hips"]] - sample.pos_of("Hips") * ct.LEG_SCALE).max() < TOL_CM * 10
    # Each bone points where the sample's points, its length scaled by its limb's factor.
    for (a, b, sa, sb, scale) in (("LeftUpLeg", "LeftLeg", "LeftHip", "LeftKnee", 1.08),
                                  ("RightLeg", "RightFoot", "RightKnee", "RightAnkle", 1.08),
                                  ("LeftArm", "LeftForeArm", "LeftShoulder", "LeftElbow", 1.05),
                                  ("Spine", "Spine1", "Chest2", "Chest3", 0.92)):
        got = even[:, idx[b]] - even[:, idx[a]]
        want = sample.pos_of(sb) - sample.pos_of(sa)
        assert np.abs(got - want * scale).max() < TOL_CM * 10, (a, b)
    # A joint the sample lacks sits at its parent: LHipJoint on the hips.
    assert np.abs(even[:, idx["LHipJoint"]] - even[:, idx["Hips"]]).max() < TOL_CM
    # The added frames lie between their neighbours.
    mid = take.pos[1:-1:2, idx["LeftFoot"]]
    around = 0.5 * (take.pos[0:-2:2, idx["LeftFoot"]] + take.pos[2::2, idx["LeftFoot"]])
    assert np.abs(mid - around).max() * to_cm < 2.0


def _feet(take):
    """Ankles, hips and toes in metres, Z up (the measures' axes)."""
    z = lambda n: take.pos_of(n)[:, [0, 2, 1]] * 0.01  # noqa: E731
    return np.stack([z("LeftAnkle"), z("RightAnkle")], 1), z("Hips"), np.stack([z("LeftToe"), z("RightToe")], 1)


def test_thin_clips_are_short_moving_one_way_sliding_and_dipping(sample, tmp_path):
    from core.measure import path_metrics as pm

    paths = tt.thin_takes(sample, str(tmp_path / "thin"))
    assert len(paths) >= 3
    clips = [ct.read_take(p) for p in paths]
    feet = [_feet(c) for c in clips]
    for take, (ankles, hips, toes) in zip(clips, feet):
        assert take.frame_time == pytest.approx(1.0 / tt.THIN_FPS, abs=1e-5)
        assert 2.9 <= len(take.pos) * take.frame_time <= 6.1
        speed, heading, off = tt._travel(take)
        inner = slice(8, -8)                                        # the window is whole there
        assert speed[inner].min() > 0.5                             # no stand
        assert np.degrees(np.ptp(heading)) < 150.0                  # no reversal
        assert np.degrees(np.abs(off[inner])).max() < 90.0                 # no turn on the spot, no backing
        assert toes[..., 2].min() < -0.01                           # toes below the floor
    floor = pm.contact_height(np.concatenate([a[..., 2] for a, _h, _t in feet]),
                              np.concatenate([np.linalg.norm(np.gradient(t, axis=0) * tt.THIN_FPS, axis=-1)
                                              < pm.CONTACT_SPEED for _a, _h, t in feet]))
    parts = [pm.ankle_sliding(a, h, tt.THIN_FPS, floor) for a, h, _t in feet]
    cm = 100 * 0.5 * sum(p["left_m"] + p["right_m"] for p in parts) / sum(p["moving_s"] for p in parts)
    assert 5.5 < cm < 9.0                                           # about 7 cm per foot per moving second
