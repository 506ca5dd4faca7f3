"""core.retarget: T-pose correspondence, the computed T-pose, pairing, scale,
root motion and refusals, on synthetic skeletons (Z up, facing -Y, left +X)."""

import numpy as np
import pytest

from core.skeleton import humanoid_joints, humanoid_map
from core.retarget import frames as rt_frames, pairing as rt_pairing, plan as rt_plan, rig as rt_rig, rotations as rt_rotations, tpose as rt_tpose
from core.maths import transforms as tf

SIDES = (("Left", 1.0), ("Right", -1.0))


def frame_from(head, tail, roll_ref=(0.0, 0.0, 1.0)):
    """A bone's rest matrix: Y from head to tail, X perpendicular to Y and
    ``roll_ref``."""
    y = np.asarray(tail, float) - np.asarray(head, float)
    y /= np.linalg.norm(y)
    ref = np.asarray(roll_ref, float)
    if abs(np.dot(ref, y)) > 0.9:
        ref = np.array([0.0, -1.0, 0.0])
    x = np.cross(y, ref)
    x /= np.linalg.norm(x)
    z = np.cross(x, y)
    m = np.eye(4)
    m[:3, :3] = np.stack([x, y, z], axis=1)
    m[:3, 3] = head
    return m


class Rig:
    """Bones added parents first, each with a rest matrix and a length."""

    def __init__(self):
        self.names, self.parents, self.rest, self.lengths = [], [], [], []

    def add(self, name, parent, head, tail, roll_ref=(0.0, 0.0, 1.0)):
        self.names.append(name)
        self.parents.append(self.names.index(parent) if parent else -1)
        self.rest.append(frame_from(head, tail, roll_ref))
        self.lengths.append(float(np.linalg.norm(np.subtract(tail, head))))
        return name

    def index(self, name):
        return self.names.index(name)

    def offsets(self):
        return tf.rest_offsets_from_matrices(np.array(self.parents), np.array(self.rest))

    def transform_subtree(self, name, m):
        """Apply ``m`` (4x4, armature space) to a bone and all below it (edit mode)."""
        top = self.index(name)
        for j in range(len(self.names)):
            k = j
            while k >= 0 and k != top:
                k = self.parents[k]
            if k == top:
                self.rest[j] = m @ self.rest[j]

    def skeleton(self, mapping, label="rig"):
        return rt_rig.RetargetSkeleton(self.names, self.parents, self.offsets(), self.lengths, mapping, label)


def sample_like(names=None, spine_count=4, root=False):
    """A skeleton shaped like the sample take: hips at 0.95 m, four spine
    bones, collars, arms slightly off the horizontal, legs slightly splayed.
    ``names`` renames bones (our name -> theirs)."""
    n = names or {}
    rig = Rig()
    nm = lambda k: n.get(k, k)  # noqa: E731
    parent = None
    if root:
        parent = rig.add(nm("Root"), None, (0, 0, 0), (0, -0.2, 0))
    rig.add(nm("Hips"), parent, (0, 0.01, 0.95), (0, 0.0, 1.05))
    parent = nm("Hips")
    z = 1.05
    for k in range(spine_count):
        top = z + 0.1
        parent = rig.add(nm("Spine%d" % k), parent, (0, 0.0, z), (0, -0.005 * k, top))
        z = top
    chest = parent
    rig.add(nm("Neck"), chest, (0, -0.02, z), (0, -0.03, z + 0.1))
    rig.add(nm("Head"), nm("Neck"), (0, -0.03, z + 0.1), (0, -0.03, z + 0.3))
    for side, s in SIDES:
        rig.add(nm(side + "Collar"), chest, (s * 0.03, -0.01, z - 0.05), (s * 0.17, 0.02, z - 0.03))
        a = np.array([s * 0.17, 0.02, z - 0.03])
        b = a + np.array([s * 0.28, 0.01, -0.03])
        c = b + np.array([s * 0.25, -0.02, 0.01])
        d = c + np.array([s * 0.09, 0.0, -0.01])
        rig.add(nm(side + "Arm"), nm(side + "Collar"), a, b)
        rig.add(nm(side + "ForeArm"), nm(side + "Arm"), b, c)
        rig.add(nm(side + "Hand"), nm(side + "ForeArm"), c, d, roll_ref=(0, -1, 0))
    for side, s in SIDES:
        h = np.array([s * 0.09, 0.01, 0.92])
        k = h + np.array([s * 0.01, -0.01, -0.43])
        f = k + np.array([0.0, 0.03, -0.41])
        t = f + np.array([0.0, -0.13, -0.06])
        e = t + np.array([0.0, -0.06, 0.0])
        rig.add(nm(side + "UpLeg"), nm("Hips"), h, k, roll_ref=(0, -1, 0))
        rig.add(nm(side + "Leg"), nm(side + "UpLeg"), k, f, roll_ref=(0, -1, 0))
        rig.add(nm(side + "Foot"), nm(side + "Leg"), f, t)
        rig.add(nm(side + "Toe"), nm(side + "Foot"), t, e)
    return rig


def sample_mapping(names=None, spine_count=4):
    n = names or {}
    nm = lambda k: n.get(k, k)  # noqa: E731
    m = {"Hips": nm("Hips"), "Spine": nm("Spine0"), "Chest": nm("Spine1"),
         "UpperChest": nm("Spine%d" % (spine_count - 1)), "Neck": nm("Neck"), "Head": nm("Head")}
    for side, _ in SIDES:
        for joint, bone in (("Shoulder", "Collar"), ("UpperArm", "Arm"), ("LowerArm", "ForeArm"),
                            ("Hand", "Hand"), ("UpperLeg", "UpLeg"), ("LowerLeg", "Leg"),
                            ("Foot", "Foot"), ("Toes", "Toe")):
            m[side + joint] = nm(side + bone)
    return m


def random_motion(rig, frames, seed=0, amplitude=0.6):
    """Smooth random local rotations for every bone and a walking hips path."""
    rng = np.random.default_rng(seed)
    J = len(rig.names)
    t = np.linspace(0.0, 1.0, frames)[:, None]
    rv = np.zeros((frames, J, 3))
    for k in range(3):
        a, f, ph = rng.normal(size=(3, J))
        rv[:, :, k] = amplitude * a * np.sin(2 * np.pi * (1 + abs(f)) * t + ph)
    basis = np.zeros((frames, J, 4, 4))
    basis[:] = np.eye(4)
    basis[..., :3, :3] = tf.quat_to_matrix(tf.quat_from_rotvec(rv))
    top = 1 if rig.names[0].endswith("Root") else 0
    basis[:, top, :3, 3] = np.concatenate([2 * t, np.sin(3 * t), 0.05 * np.sin(9 * t)], axis=1)
    return basis


def pose_of(rig, basis):
    return tf.pose_fk(np.array(rig.parents), np.array(rig.rest), basis, rig.offsets())


def run(src_rig, src_map, tgt_rig, tgt_map, basis, src_tpose=None, tgt_tpose=None, **kw):
    src, tgt = src_rig.skeleton(src_map, "source"), tgt_rig.skeleton(tgt_map, "target")
    if src_tpose is None:
        src_tpose = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(src)[1])
    if tgt_tpose is None:
        tgt_tpose = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(tgt)[1])
    plan = rt_plan.prepare(src, tgt, src_tpose, tgt_tpose, **kw)
    pose = pose_of(src_rig, basis)
    root = kw.get("source_root")
    res = rt_frames.retarget_frames(plan, tf.matrix_to_quat(pose[..., :3, :3]), pose[:, src.joints["Hips"], :3, 3],
                            pose[:, root] if root is not None else None)
    return plan, res, pose, rt_frames.target_pose(plan, res)


MIXAMO = {"Hips": "mixamorig:Hips", "Spine0": "mixamorig:Spine", "Spine1": "mixamorig:Spine1",
          "Spine2": "mixamorig:Spine2", "Spine3": "mixamorig:Spine3", "Neck": "mixamorig:Neck",
          "Head": "mixamorig:Head"}
for _side, _ in SIDES:
    MIXAMO.update({_side + a: "mixamorig:" + _side + b for a, b in (
        ("Collar", "Shoulder"), ("Arm", "Arm"), ("ForeArm", "ForeArm"), ("Hand", "Hand"),
        ("UpLeg", "UpLeg"), ("Leg", "Leg"), ("Foot", "Foot"), ("Toe", "ToeBase"))})


def a_pose(rig, names=None, arm=45.0, elbow=15.0, leg=6.0):
    """Bend a rig's rest into an A-pose: arms down, elbows bent, legs apart."""
    n = names or {}
    for side, s in SIDES:
        for bone, axis, deg in ((side + "Arm", (0, 1, 0), s * arm), (side + "ForeArm", (0, 0, 1), s * elbow),
                                (side + "UpLeg", (0, 1, 0), -s * leg)):
            j = rig.index(n.get(bone, bone))
            p = rig.rest[j][:3, 3]
            m = np.eye(4)
            m[:3, :3] = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array(axis, float), np.radians(deg)))
            m[:3, 3] = p - m[:3, :3] @ p
            rig.transform_subtree(n.get(bone, bone), m)
            if bone.endswith("UpLeg"):
                # Feet stay flat on the ground, as in any A-pose rig.
                foot = n.get(side + "Foot", side + "Foot")
                f = rig.rest[rig.index(foot)][:3, 3]
                back = np.eye(4)
                back[:3, :3] = m[:3, :3].T
                back[:3, 3] = f - back[:3, :3] @ f
                rig.transform_subtree(foot, back)


def test_shortest_arc():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 50, 3))
    q = rt_rotations.shortest_arc(a, b)
    ua, ub = a / np.linalg.norm(a, axis=1)[:, None], b / np.linalg.norm(b, axis=1)[:, None]
    assert np.allclose(tf.quat_rotate(q, ua), ub, atol=1e-12)
    # Smallest: the axis is perpendicular to both directions.
    assert np.allclose(np.sum(q[:, 1:] * ua, axis=1), 0, atol=1e-12)
    # Opposite and equal directions.
    q = rt_rotations.shortest_arc([[1.0, 0, 0], [0, 0, 2.0]], [[-3.0, 0, 0], [0, 0, 1.0]])
    assert np.allclose(tf.quat_rotate(q[0], [1, 0, 0]), [-1, 0, 0], atol=1e-12)
    assert np.allclose(q[1], [1, 0, 0, 0])


def test_compute_tpose_turns_limbs_of_an_a_pose():
    rig = sample_like()
    a_pose(rig)
    sk = rig.skeleton(sample_mapping())
    basis, pose = rt_tpose.compute_tpose(sk)
    heads = pose[:, :3, 3]
    h = {n: heads[rig.index(n)] for n in rig.names}
    for side, s in SIDES:
        for a, b in ((side + "Arm", side + "ForeArm"), (side + "ForeArm", side + "Hand")):
            d = (h[b] - h[a]) / np.linalg.norm(h[b] - h[a])
            assert np.allclose(d, [s, 0, 0], atol=1e-9)
        hand_axis = pose[rig.index(side + "Hand"), :3, 1]
        assert np.allclose(hand_axis, [s, 0, 0], atol=1e-9)
        for a, b in ((side + "UpLeg", side + "Leg"), (side + "Leg", side + "Foot")):
            d = (h[b] - h[a]) / np.linalg.norm(h[b] - h[a])
            assert np.allclose(d, [0, 0, -1], atol=1e-9)
        # Feet keep their rest orientation; collars and the spine are untouched.
        f = rig.index(side + "Foot")
        assert np.allclose(pose[f, :3, :3], rig.rest[f][:3, :3], atol=1e-9)
        c = rig.index(side + "Collar")
        assert np.allclose(pose[c], rig.rest[c], atol=1e-9)
    for name in ("Hips", "Spine0", "Spine3", "Neck", "Head"):
        assert np.allclose(basis[rig.index(name)], [1, 0, 0, 0])
    # The arm was turned by the shortest arc: no twist about the bone.
    j = rig.index("LeftArm")
    rel = tf.matrix_to_quat(pose[j, :3, :3] @ rig.rest[j][:3, :3].T)
    old_dir = h["LeftForeArm"] - rig.rest[j][:3, 3]
    assert abs(np.dot(rel[1:], [1, 0, 0])) < 1e-9 and abs(np.dot(rel[1:], old_dir)) < 1e-9


def test_compute_tpose_straightens_the_spine_on_request():
    rig = sample_like()
    sk = rig.skeleton(sample_mapping())
    _, pose = rt_tpose.compute_tpose(sk, straighten_spine=True)
    heads = pose[:, :3, 3]
    chain = ["Hips", "Spine0", "Spine1", "Spine2", "Spine3", "Neck", "Head"]
    for a, b in zip(chain[1:-1], chain[2:]):
        d = heads[rig.index(b)] - heads[rig.index(a)]
        assert np.allclose(d / np.linalg.norm(d), [0, 0, 1], atol=1e-9), a
    assert np.allclose(pose[rig.index("Head"), :3, 1], [0, 0, 1], atol=1e-9)


def test_compute_tpose_of_a_rig_facing_plus_y_keeps_arms_on_their_sides():
    rig = sample_like()
    turn = np.diag([-1.0, -1.0, 1.0, 1.0])
    rig.transform_subtree("Hips", turn)
    _, pose = rt_tpose.compute_tpose(rig.skeleton(sample_mapping()))
    hand = pose[rig.index("LeftHand"), :3, 3]
    assert hand[0] < -0.5            # the left arm stays on the left (-X when facing +Y)


def test_retarget_onto_itself_reproduces_the_pose():
    rig = sample_like()
    m = sample_mapping()
    basis = random_motion(rig, 40)
    plan, res, pose, out = run(rig, m, rig, m, basis)
    assert plan.scale == pytest.approx(1.0)
    assert np.abs(out - pose).max() < 1e-9
    # The in-between spine bone was paired too.
    assert "UpperChest-1" in plan.labels


@pytest.mark.parametrize("names", [MIXAMO, {}], ids=["mixamo", "same-names"])
def test_done_when_renamed_a_pose_copy_matches_every_joint(names):
    """The sample-like skeleton renamed and bent into an A-pose; both T-poses
    computed: every joint (heads and tails) lands where the source's does."""
    src = sample_like(root=True)
    src_map = sample_mapping()
    tgt = sample_like(names)
    a_pose(tgt, names)
    tgt_map = sample_mapping(names)
    if names:
        auto = humanoid_map.auto_map(tgt.names, np.array(tgt.parents), np.array([m[:3, 3] for m in tgt.rest]))
        assert auto["UpperChest"] == "mixamorig:Spine3" and auto["LeftUpperArm"] == "mixamorig:LeftArm"
        tgt_map = dict(auto)
    basis = random_motion(src, 120, seed=5)
    plan, res, pose, out = run(src, src_map, tgt, tgt_map, basis)
    assert plan.scale == pytest.approx(1.0, abs=1e-12)
    for name in src.names[1:]:
        s, t = src.index(name), tgt.index(names.get(name, name))
        assert np.abs(out[:, t, :3, 3] - pose[:, s, :3, 3]).max() < 1e-9, name
        tail_s = pose[:, s, :3, 3] + pose[:, s, :3, 1] * src.lengths[s]
        tail_t = out[:, t, :3, 3] + out[:, t, :3, 1] * tgt.lengths[t]
        assert np.abs(tail_s - tail_t).max() < 1e-9, name
    # Not trivially so: the target's local rotations differ from the source's.
    j = tgt.index(names.get("LeftArm", "LeftArm"))
    k = list(res.keyed).index(j)
    src_local = tf.matrix_to_quat(basis[:, src.index("LeftArm"), :3, :3])
    assert np.abs(np.abs(np.sum(res.rotations[:, k] * src_local, axis=1)) - 1).max() > 0.05


def test_random_rolls_and_a_rotated_rest_do_not_matter():
    """Target bones rolled about their own axes: the same joint positions."""
    src = sample_like()
    tgt = sample_like()
    a_pose(tgt)
    rng = np.random.default_rng(11)
    for j in range(len(tgt.names)):
        roll = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), rng.uniform(-3, 3)))
        tgt.rest[j] = tgt.rest[j].copy()
        tgt.rest[j][:3, :3] = tgt.rest[j][:3, :3] @ roll
    m = sample_mapping()
    basis = random_motion(src, 60, seed=2)
    _, _, pose, out = run(src, m, tgt, m, basis)
    assert np.abs(out[..., :3, 3] - pose[..., :3, 3]).max() < 1e-9


def test_source_in_its_tpose_puts_the_target_in_its_tpose():
    src = sample_like()
    tgt = sample_like()
    a_pose(tgt)
    m = sample_mapping()
    s_sk, t_sk = src.skeleton(m), tgt.skeleton(m)
    s_basis, s_pose = rt_tpose.compute_tpose(s_sk)
    t_basis, t_pose = rt_tpose.compute_tpose(t_sk)
    # Deliberately different stored T-poses: the source's own rest pose.
    plan = rt_plan.prepare(s_sk, t_sk, rt_rig.TPose.from_matrices(src.rest), rt_rig.TPose.from_matrices(t_pose))
    frames = np.zeros((3, len(src.names), 4, 4))
    frames[:] = np.eye(4)
    pose = pose_of(src, frames)
    res = rt_frames.retarget_frames(plan, tf.matrix_to_quat(pose[..., :3, :3]), pose[:, 0, :3, 3])
    out = rt_frames.target_pose(plan, res)
    for j in plan.target_index:
        assert np.allclose(out[:, j, :3, :3], t_pose[j, :3, :3], atol=1e-9)


def test_scale_follows_hips_height_and_floors():
    src = sample_like()
    tgt = sample_like()
    big = np.diag([1.5, 1.5, 1.5, 1.0])
    tgt.rest = [m.copy() for m in tgt.rest]
    for j in range(len(tgt.rest)):
        tgt.rest[j][:3, 3] = big[:3, :3] @ tgt.rest[j][:3, 3]
    tgt.lengths = [1.5 * x for x in tgt.lengths]
    m = sample_mapping()
    basis = random_motion(src, 50, seed=4)
    plan, _, pose, out = run(src, m, tgt, m, basis)
    assert plan.scale == pytest.approx(1.5)
    assert np.abs(out[..., :3, 3] - 1.5 * pose[..., :3, 3]).max() < 1e-9
    # Where a T-pose stands does not matter (a BVH rest has its hips at the
    # origin): the ratio compares heights above each T-pose's feet.
    src_tp = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(src.skeleton(m))[1])
    src_tp.heads[:, 2] -= 0.95
    plan2, _, _, out2 = run(src, m, tgt, m, basis, src_tpose=src_tp)
    assert plan2.scale == pytest.approx(1.5)
    assert plan2.source_height == pytest.approx(plan.source_height)
    # A forced scale.
    plan, _, pose, out = run(src, m, tgt, m, basis, scale=1.0)
    assert plan.scale == 1.0
    # The pelvis points (midpoints of the hip joints) coincide; the hips heads do not.
    legs = [src.index("LeftUpLeg"), src.index("RightUpLeg")]
    assert np.allclose(out[:, legs][..., :3, 3].mean(axis=1), pose[:, legs][..., :3, 3].mean(axis=1), atol=1e-12)
    hips = src.index("Hips")
    assert np.abs(out[:, hips, :3, 3] - pose[:, hips, :3, 3]).max() > 0.01


def test_root_motion_onto_a_target_root_bone():
    src = sample_like(root=True)
    tgt = sample_like(root=True, names={"Root": "root"})
    # The target's root points backwards (+Y) like Rigify's.
    tgt.rest[0] = frame_from((0, 0, 0), (0, 0.3, 0))
    tgt.rest[1:] = [m for m in tgt.rest[1:]]
    m = sample_mapping()
    basis = random_motion(src, 80, seed=9)
    # A ground-only root for the source, as the virtual root is.
    yaw = np.linspace(0, 2.0, 80)
    basis[:, 0] = np.eye(4)
    basis[:, 0, :3, :3] = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0, 0, 1.0]), yaw))
    basis[:, 0, :2, 3] = np.stack([np.linspace(0, 3, 80), np.linspace(0, -1, 80)], axis=1)
    plan, res, pose, out = run(src, m, tgt, m, basis, root_motion="ROOT", source_root=0)
    assert plan.target_root == 0 and 0 in res.keyed and 0 in res.located
    assert np.abs(out[..., 1:, :3, 3] - pose[..., 1:, :3, 3]).max() < 1e-9
    # The root turns about Z like the source's and stays on its rest height.
    assert np.allclose(out[:, 0, :3, 2], [0, 0, 1], atol=1e-9)
    assert np.allclose(out[:, 0, :2, 3], pose[:, 0, :2, 3], atol=1e-9)
    turn_t = out[:, 0, :3, :3] @ tgt.rest[0][:3, :3].T
    turn_s = pose[:, 0, :3, :3] @ src.rest[0][:3, :3].T
    assert np.allclose(turn_t, turn_s, atol=1e-9)
    # Without a bone above the hips, or without a source root: refused.
    with pytest.raises(rt_rig.RetargetError, match="no bone above its hips"):
        run(src, m, sample_like(), m, basis, root_motion="ROOT", source_root=0)
    with pytest.raises(rt_rig.RetargetError, match="virtual root"):
        run(src, m, tgt, m, basis, root_motion="ROOT")


def test_in_between_bones_pair_only_when_counts_match():
    src = sample_like(spine_count=4)
    tgt = sample_like(spine_count=3)
    m_s, m_t = sample_mapping(spine_count=4), sample_mapping(spine_count=3)
    labels, s, t = rt_pairing.pair_bones(src.skeleton(m_s), tgt.skeleton(m_t))
    assert not any("-" in lab for lab in labels)
    assert len(labels) == len(humanoid_joints.CANONICAL)
    basis = random_motion(src, 30, seed=1)
    plan, res, pose, out = run(src, m_s, tgt, m_t, basis)
    # Every mapped bone still gets the source's rotation (up to the T-pose correction).
    for lab, js, jt in zip(plan.labels, plan.source_index, plan.target_index):
        rs = pose[:, js, :3, :3] @ pose[0, js, :3, :3].T
        rt = out[:, jt, :3, :3] @ out[0, jt, :3, :3].T
        assert np.allclose(rs, rt, atol=1e-9), lab
    # Unkeyed target bones: nothing but the mapped bones, hips location included.
    assert sorted(res.keyed) == sorted(tgt.index(b) for b in m_t.values())


def test_missing_and_double_mapping_are_refused_with_names():
    rig = sample_like()
    m = sample_mapping()
    bad = dict(m)
    del bad["LeftHand"], bad["RightFoot"]
    with pytest.raises(rt_rig.RetargetError, match="lacks required joints: LeftHand, RightFoot"):
        rig.skeleton(bad, "target 'Rig'")
    bad = dict(m, RightHand="LeftHand")
    with pytest.raises(rt_rig.RetargetError, match=r"target 'Rig'.*Bone 'LeftHand' is mapped twice: "
                                              r"LeftHand and RightHand"):
        rig.skeleton(bad, "target 'Rig'")
    with pytest.raises(rt_rig.RetargetError, match="not in the skeleton: 'Nope'"):
        rig.skeleton(dict(m, Neck="Nope"))


def test_tpose_gaps_are_listed():
    rig = sample_like()
    m = sample_mapping()
    sk = rig.skeleton(m, "source")
    tp = rt_rig.TPose.from_matrices(np.array(rig.rest))
    gappy = rt_rig.TPose(tp.rotations.copy(), tp.heads.copy())
    for name in ("LeftHand", "Head"):
        gappy.rotations[rig.index(name)] = np.nan
    with pytest.raises(rt_rig.RetargetError, match=r"lacks Head \(Head of the source\) and "
                                              r"LeftHand \(LeftHand of the source\)"):
        rt_plan.prepare(sk, sk, gappy, tp)


def test_frames_input_is_checked():
    rig = sample_like()
    sk = rig.skeleton(sample_mapping())
    tp = rt_rig.TPose.from_matrices(np.array(rig.rest))
    plan = rt_plan.prepare(sk, sk, tp, tp)
    with pytest.raises(rt_rig.RetargetError, match="source_rotations"):
        rt_frames.retarget_frames(plan, np.zeros((5, 3, 4)), np.zeros((5, 3)))
    with pytest.raises(rt_rig.RetargetError, match="source_hips"):
        rt_frames.retarget_frames(plan, np.tile([1.0, 0, 0, 0], (5, len(rig.names), 1)), np.zeros((4, 3)))
    with pytest.raises(rt_rig.RetargetError, match="root_motion"):
        rt_plan.prepare(sk, sk, tp, tp, root_motion="FEET")


# ----------------------------------------------------------------------------
# Constraints on the target's mechanism bones (the way Rigify's FK controls hang)


def _slerp(a, b, t):
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    th = np.arccos(np.clip(np.abs(d), -1, 1))
    s = np.sin(th)
    near = s < 1e-12
    s = np.where(near, 1.0, s)
    out = np.where(near, (1 - t) * a + t * b, (np.sin((1 - t) * th) * a + np.sin(t * th) * b) / s)
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def evaluate_with_constraints(rig, basis, constraints):
    """An independent forward evaluation: FK, then each bone's constraints,
    blended as Blender blends them, parents and targets first."""
    parents, offsets, rest = np.array(rig.parents), rig.offsets(), np.array(rig.rest)
    F, J = basis.shape[:2]
    P = np.zeros((F, J, 4, 4))
    order, done = [], set()
    while len(order) < J:
        for j in range(J):
            deps = {parents[j]} - {-1} | {c[1] for c in constraints.get(j, ())}
            if j not in done and deps <= done:
                order.append(j)
                done.add(j)
                break
    for j in order:
        p = parents[j]
        frame = offsets[j] if p < 0 else P[:, p] @ offsets[j]
        m = frame @ basis[:, j]
        for kind, t, w, space in constraints.get(j, ()):
            if kind == "ARMATURE":
                sol = P[:, t] @ np.linalg.inv(rest[t]) @ m
            else:
                tgt = P[:, t]
                if space == "LOCAL":
                    pt = parents[t]
                    tframe = offsets[t] if pt < 0 else P[:, pt] @ offsets[t]
                    tgt = frame @ np.linalg.inv(tframe) @ P[:, t]
                sol = m.copy()
                if kind in ("COPY_TRANSFORMS", "COPY_ROTATION"):
                    sol[:, :3, :3] = tgt[:, :3, :3]
                if kind in ("COPY_TRANSFORMS", "COPY_LOCATION"):
                    sol[:, :3, 3] = tgt[:, :3, 3]
            q = _slerp(tf.matrix_to_quat(m[:, :3, :3]), tf.matrix_to_quat(sol[:, :3, :3]), w)
            m = m.copy()
            m[:, :3, :3] = tf.quat_to_matrix(q)
            m[:, :3, 3] += w * (sol[:, :3, 3] - m[:, :3, 3])
        P[:, j] = m
    return P


def rig_with_mechanism():
    """The sample-like rig with a root and a stray control, the hips hanging
    from a parentless bone that follows the root (Armature constraint), and
    a mechanism bone between hips and spine (constrained by the test)."""
    base = sample_like()
    rig = Rig()
    rig.add("root", None, (0, 0, 0), (0, 0.3, 0))
    rig.add("ctrl", None, (0, 0.2, 1.2), (0, 0.4, 1.3))
    rig.add("torso_parent", None, (0, 0.01, 0.95), (0, 0.01, 1.0))
    for j, name in enumerate(base.names):
        parent = base.names[base.parents[j]] if base.parents[j] >= 0 else "torso_parent"
        head = base.rest[j][:3, 3]
        tail = head + base.rest[j][:3, 1] * base.lengths[j]
        if name == "Spine0":
            rig.add("mech", "Hips", head, head + 0.05 * base.rest[j][:3, 1], roll_ref=(1, 0, 0))
            parent = "mech"
        rig.names.append(name)
        rig.parents.append(rig.names.index(parent))
        rig.rest.append(base.rest[j].copy())
        rig.lengths.append(base.lengths[j])
    del tail
    return rig


@pytest.mark.parametrize("space", ["WORLD", "LOCAL"])
def test_constraints_of_mechanism_bones_are_followed(space):
    src = sample_like(root=True)
    tgt = rig_with_mechanism()
    ix = tgt.index
    # Half of a keyed bone's rotation, so that following it matters in either space.
    cons = {ix("mech"): [("COPY_ROTATION", ix("LeftUpLeg"), 0.5, space)],
            ix("torso_parent"): [("ARMATURE", ix("root"), 1.0, "WORLD")]}
    core_cons = {j: [rt_rig.Constraint(k, [(t, 1.0)], w, sp) for k, t, w, sp in stack] for j, stack in cons.items()}
    m = sample_mapping()
    s_sk = src.skeleton(m, "source")
    basis = random_motion(src, 60, seed=21)
    pose = pose_of(src, basis)
    yaw = np.linspace(0, 1.5, 60)
    basis[:, 0] = np.eye(4)
    basis[:, 0, :3, :3] = tf.quat_to_matrix(tf.quat_from_axis_angle(np.array([0, 0, 1.0]), yaw))
    basis[:, 0, :2, 3] = np.stack([np.linspace(0, 2, 60), np.linspace(0, 1, 60)], axis=1)
    pose = pose_of(src, basis)
    s_tp = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(s_sk)[1])
    names = [n for n in src.names if n != "Root"]
    for follow in (True, False):
        t_sk = rt_rig.RetargetSkeleton(tgt.names, tgt.parents, tgt.offsets(), tgt.lengths, m, "target",
                          core_cons if follow else None)
        t_tp = rt_rig.TPose.from_matrices(rt_tpose.compute_tpose(t_sk)[1])
        plan = rt_plan.prepare(s_sk, t_sk, s_tp, t_tp, root_motion="ROOT", source_root=0)
        # Found through the Armature constraint; blind to it, the hips' top ancestor.
        assert tgt.names[plan.target_root] == ("root" if follow else "torso_parent")
        res = rt_frames.retarget_frames(plan, tf.matrix_to_quat(pose[..., :3, :3]), pose[:, 1, :3, 3], pose[:, 0])
        b = np.zeros((60, len(tgt.names), 4, 4))
        b[:] = np.eye(4)
        b[:, res.keyed, :3, :3] = tf.quat_to_matrix(res.rotations)
        b[..., 3][:, res.located, :3] = res.locations
        out = evaluate_with_constraints(tgt, b, cons)
        err = max(np.abs(out[:, ix(n), :3, 3] - pose[:, src.index(n), :3, 3]).max() for n in names)
        if follow:
            assert err < 1e-9
        else:
            assert err > 0.01


def test_constrained_bones_are_not_keyed_in_between():
    src = sample_like()
    tgt = sample_like()
    m = sample_mapping()
    s_sk = src.skeleton(m)
    free = tgt.skeleton(m)
    labels, _s, t = rt_pairing.pair_bones(s_sk, free)
    assert "UpperChest-1" in labels
    chest3 = tgt.index("Spine2")
    held = rt_rig.RetargetSkeleton(tgt.names, tgt.parents, tgt.offsets(), tgt.lengths, m,
                      constraints={chest3: [rt_rig.Constraint("OTHER")]})
    labels, _s, t = rt_pairing.pair_bones(s_sk, held)
    assert "UpperChest-1" not in labels and chest3 not in t
    with pytest.raises(rt_rig.RetargetError, match="exactly one target"):
        rt_rig.Constraint("COPY_ROTATION", [], 1.0)
    with pytest.raises(rt_rig.RetargetError, match="not followed"):
        rt_rig.Constraint("IK", [(0, 1.0)])


def test_mapped_bones_that_hang_elsewhere_are_kept_under_their_joint():
    """Legs hanging from a parentless bone instead of the hips (as Rigify's
    DEF-thigh hangs from ORG-spine): location keys keep them under the hips."""
    src = sample_like()
    base = sample_like()
    tgt = Rig()
    tgt.add("org_pelvis", None, (0, 0.01, 0.95), (0, 0.01, 1.05))
    for j, name in enumerate(base.names):
        parent = base.names[base.parents[j]] if base.parents[j] >= 0 else None
        if name.endswith("UpLeg"):
            parent = "org_pelvis"
        tgt.names.append(name)
        tgt.parents.append(tgt.names.index(parent) if parent else -1)
        tgt.rest.append(base.rest[j].copy())
        tgt.lengths.append(base.lengths[j])
    m = sample_mapping()
    basis = random_motion(src, 50, seed=8)
    plan, res, pose, out = run(src, m, tgt, m, basis)
    assert sorted(tgt.names[j] for j in plan.anchor) == ["LeftUpLeg", "RightUpLeg"]
    assert sorted(res.bone_names("located")) == ["Hips", "LeftUpLeg", "RightUpLeg"]
    for name in src.names:
        assert np.abs(out[:, tgt.index(name), :3, 3] - pose[:, src.index(name), :3, 3]).max() < 1e-9, name
