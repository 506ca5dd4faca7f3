"""core.io.bvh_parse and bvh_convert without Blender: layouts the parser must accept, and the conversion maths."""

import numpy as np
import pytest

from core.io import bvh_convert, bvh_data, bvh_parse
from core.maths import transforms as tf

TEXT = """HIERARCHY
ROOT My Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 0
\t\tJOINT Spine
\t\t{
\t\t\tOFFSET 0 10 0
\t\t\tCHANNELS 3 Xrotation Zrotation Yrotation
\t\t\tEnd Site Head
\t\t\t{
\t\t\t\tOFFSET 0 5 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.5
1 2 3 90 0 0 0 0 0
1 2 3 0 90 0 0 0 90
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_layouts(newline):
    data = bvh_parse.parse_bvh(TEXT.replace("\n", newline).encode())
    assert data.names == ["My_Hips", "Spine", "Spine.001"]   # spaces joined, duplicates renamed
    assert list(data.parents) == [-1, 0, 1]
    assert data.channels[1] == ()
    assert data.frame_count == 2 and data.fps == 2.0
    assert data.motion.shape == (2, 9)
    assert np.allclose(data.end_sites[2], [0, 5, 0])


def test_euler_listing_order_and_conversion():
    data = bvh_parse.parse_bvh(TEXT.encode())
    m = bvh_convert.to_blender(data, global_scale=0.1)
    # Frame 0: root turned 90 degrees about BVH Y (= Blender Z): the spine, up
    # the BVH Y axis, is unaffected; positions scale and map (x, y, z) -> (x, -z, y).
    pos = m.world_positions()
    assert np.allclose(pos[0, 0], [0.1, -0.3, 0.2])
    assert np.allclose(pos[0, 2], [0.1, -0.3, 0.2 + 2.0])
    # Frame 1: root 90 about X: BVH +Y turns to +Z, which is Blender -Y.
    assert np.allclose(pos[1, 2] - pos[1, 0], [0, -2.0, 0], atol=1e-9)
    # Joint 2 lists X Z Y: R = Rx Rz Ry.
    q = m.rotations[1, 2]
    expect = tf.euler_to_matrix(np.radians([0, 0, 90]), "XZY")
    assert np.allclose(tf.quat_to_matrix(q), expect)


def test_left_handed_mirror_keeps_rotations_proper():
    data = bvh_parse.parse_bvh(TEXT.encode())
    right = bvh_convert.to_blender(data)
    left = bvh_convert.to_blender(data, handedness="LEFT")
    m = np.diag([1.0, 1.0, -1.0])
    r = tf.quat_to_matrix(right.rotations)
    l_ = tf.quat_to_matrix(left.rotations)
    assert np.allclose(l_, m @ r @ m)
    assert np.allclose(np.linalg.det(l_), 1.0)


def test_frame_time_variants():
    for line in ("Frame Time: 0.5", "Frame Time : 0.5", "Frame time:0.5", "FRAME TIME: 0.5"):
        assert bvh_parse.parse_bvh(TEXT.replace("Frame Time: 0.5", line).encode()).frame_time == 0.5


@pytest.mark.parametrize("bad,words", [
    ("Frame Time: 0", "positive"),
    ("Frame Time: -1", "positive"),
    ("Frame Time: abc", "not a number"),
])
def test_bad_frame_time(bad, words):
    with pytest.raises(bvh_data.BvhError, match=words):
        bvh_parse.parse_bvh(TEXT.replace("Frame Time: 0.5", bad).encode())


def test_bad_scale_and_axes():
    data = bvh_parse.parse_bvh(TEXT.encode())
    with pytest.raises(bvh_data.BvhError, match="scale"):
        bvh_convert.to_blender(data, global_scale=0.0)
    with pytest.raises(Exception, match="different axes"):
        bvh_convert.to_blender(data, axis_forward="Y", axis_up="-Y")
