"""core.retarget in an object's body frame: a rig stored Y up in
centimetres inside an object turned +90 degrees about X and scaled 0.01 gives
the same motion as the same rig stored Z up in metres; the object matrix
splits into ground and body; uneven scale is refused; a rig on its side is
refused; core.measure.retarget_checks names a wrong result."""

import numpy as np
import pytest

from core.retarget import frames as rt_frames, plan as rt_plan, rig as rt_rig, tpose as rt_tpose
from core.measure import retarget_checks as checks
from core.maths import transforms as tf

from test_retarget import pose_of, random_motion, sample_like, sample_mapping

# The importer's frame: +90 degrees about X, scale 0.01 (Y-up bones in centimetres).
TILT = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
BODY = TILT @ np.diag([0.01, 0.01, 0.01, 1.0])


def _y_up_cm(rig):
    """The same rig stored as the importer stores it: rest matrices taken
    out of the body frame (Y up, centimetres)."""
    inv = np.linalg.inv(BODY)
    rest = []
    for m in rig.rest:
        out = inv @ m
        out[:3, :3] /= np.cbrt(np.linalg.det(out[:3, :3]))      # rotation only, head in centimetres
        rest.append(out)
    rig.rest = rest
    rig.lengths = [100.0 * n for n in rig.lengths]
    return rig


def test_a_y_up_centimetre_rig_in_its_object_frame_moves_as_the_z_up_one():
    src_rig, tgt_rig = sample_like(), sample_like()
    y_rig = _y_up_cm(sample_like())
    m = sample_mapping()
    basis = random_motion(src_rig, 30)
    src = src_rig.skeleton(m, "source")
    plain = tgt_rig.skeleton(m, "target")
    tilted = rt_rig.RetargetSkeleton(y_rig.names, y_rig.parents, y_rig.offsets(), y_rig.lengths, m, "target",
                                frame=BODY)
    np.testing.assert_allclose(tilted.rest, plain.rest, atol=1e-9)
    src_tp = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(src)[1])
    pose = pose_of(src_rig, basis)
    q, hips = tf.matrix_to_quat(pose[..., :3, :3]), pose[:, src.joints["Hips"], :3, 3]
    out = []
    for tgt in (plain, tilted):
        tp = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(tgt)[1])        # armature space: Y up, cm for the tilted
        plan = rt_plan.prepare(src, tgt, src_tp, tp)
        assert plan.scale == pytest.approx(1.0)
        res = rt_frames.retarget_frames(plan, q, hips)
        out.append((res, rt_frames.target_frame_pose(plan, res), rt_frames.target_pose(plan, res)))
    (a, fa, _pa), (b, fb, pb) = out
    np.testing.assert_allclose(fb, fa, atol=1e-9)                      # the same motion in the frame
    np.testing.assert_allclose(tf.quat_to_matrix(b.rotations), tf.quat_to_matrix(a.rotations),
                               atol=1e-9)                              # the same local keys
    np.testing.assert_allclose(b.locations, 100.0 * a.locations, atol=1e-7)  # in the rig's centimetres
    np.testing.assert_allclose(pb[..., :3, 3] * 0.01 @ TILT[:3, :3].T, fa[..., :3, 3], atol=1e-9)


def test_split_object_matrix_keeps_the_ground_turn_and_the_body_tilt():
    turn = np.eye(4)
    c, s = np.cos(0.5), np.sin(0.5)
    turn[:2, :2] = [[c, -s], [s, c]]
    turn[:3, 3] = (2.0, -1.0, 0.3)
    ground, body = rt_rig.split_object_matrix(turn @ BODY)
    np.testing.assert_allclose(ground, turn, atol=1e-12)
    np.testing.assert_allclose(body, BODY, atol=1e-12)


def test_uneven_object_scale_is_refused():
    names, parents = ["a"], [-1]
    with pytest.raises(rt_rig.RetargetError, match="scaled unevenly or mirrored: apply its scale"):
        rt_rig.RetargetSkeleton(names, parents, np.eye(4)[None], [1.0], {}, "target 'X'",
                           frame=np.diag([1.0, 2.0, 1.0, 1.0]))


def test_a_rig_on_its_side_is_refused():
    rig = sample_like()
    m = sample_mapping()
    side = np.array([[0.0, 0, 1, 0], [0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1]])   # head along +X
    sk = rt_rig.RetargetSkeleton(rig.names, rig.parents, rig.offsets(), rig.lengths, m, "target 'Lying'", frame=side)
    with pytest.raises(rt_rig.RetargetError, match="target 'Lying' does not stand upright"):
        rt_tpose.standing_height(sk, rt_rig.TPose.from_matrices(rig.skeleton(m).rest))


def test_result_checks_name_what_is_wrong():
    F = 10
    toes = np.zeros((F, 2, 3))
    good = {"pelvis": np.tile([0.0, 0, 0.9], (F, 1)), "hips": np.tile([0.0, 0, 0.95], (F, 1)),
            "head": np.tile([0.0, 0, 1.6], (F, 1)), "toes": toes}
    assert checks.result_warnings("C", 0.9, good, np.zeros((F, 3))) == []
    low = dict(good, pelvis=np.tile([0.0, 0, 0.2], (F, 1)))
    assert "hips of C are 0.20 m above its feet" in checks.result_warnings("C", 0.9, low)[0]
    lying = dict(good, head=np.tile([0.7, 0, 0.9], (F, 1)))
    assert "C does not stand upright (its head is 90 degrees" in checks.result_warnings("C", 0.9, lying)[0]
    far = checks.result_warnings("C", 0.9, good, np.tile([3.0, 4.0, 0.0], (F, 1)))
    assert far and "stay 5.00 m from the controller" in far[0]
