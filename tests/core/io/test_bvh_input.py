"""The BVH reader (core.io.bvh_*) on hostile input: sane bounds, the byte-order mark, a joint named
Motion, chunked reading, and a deterministic fuzz of the parser."""

import numpy as np
import pytest

from bvh_fuzz import TEXT, TEXT_B, mutate
from core.io import bvh_channels, bvh_convert, bvh_data, bvh_motion, bvh_parse

# Lines: OFFSET of Hips 4, OFFSET of Leg 8, End Site OFFSET 12, Frame Time 18, frames 19-21.


def _variant(old, new):
    assert old in TEXT
    return TEXT.replace(old, new, 1)


def _refused(text, scale=1.0):
    with pytest.raises(bvh_data.BvhError) as info:
        bvh_convert.to_blender(bvh_parse.parse_bvh(text.encode("utf-8"), source="take.bvh"), scale)
    return str(info.value)


# ---------------------------------------------------------------------------
# Finding 6: a byte-order mark, a joint named Motion


def test_utf8_byte_order_mark_is_accepted():
    data = bvh_parse.parse_bvh(b"\xef\xbb\xbf" + TEXT.encode())
    assert data.names == ["Hips", "Leg"] and data.motion.shape == (3, 9)


@pytest.mark.parametrize("name", ["Motion", "MOTION", "motion capture"])
def test_a_joint_named_motion(name):
    data = bvh_parse.parse_bvh(_variant("JOINT Leg", "JOINT " + name).encode())
    assert data.names == ["Hips", name.replace(" ", "_")]
    assert data.motion.shape == (3, 9)
    assert np.array_equal(data.motion[2], [0, 92, 0, 2, 0, 0, 12, 0, 0])


def test_an_end_site_named_motion():
    data = bvh_parse.parse_bvh(_variant("End Site\n", "End Site Motion\n").encode())
    assert data.names == ["Hips", "Leg"] and data.frame_count == 3


def test_motion_keyword_still_checked():
    assert "stand alone" in pytest.raises(
        bvh_data.BvhError, bvh_parse.parse_bvh, _variant("MOTION\n", "MOTION Frames: 3\n").encode()).value.args[0]
    # MOTION inside an open joint is still the keyword's wrong place, not a name.
    message = str(pytest.raises(bvh_data.BvhError, bvh_parse.parse_bvh,
                                _variant("    }\n  }\n}\nMOTION", "    }\n  }\nMOTION").encode()).value)
    assert "unclosed" in message


def test_utf16_file_is_named():
    with pytest.raises(bvh_data.BvhError, match="UTF-16"):
        bvh_parse.parse_bvh(TEXT.encode("utf-16"))


# ---------------------------------------------------------------------------
# Finding 4: numbers must be finite and within sane bounds, named by line


@pytest.mark.parametrize("old, new, scale, words", [
    ("0 91 0 1 0 0 11 0 0", "1e39 91 0 1 0 0 11 0 0", 1.0, ["Line 20", "Xposition", "Hips", "1e+39"]),
    ("0 91 0 1 0 0 11 0 0", "0 1e300 0 1 0 0 11 0 0", 0.01, ["Line 20", "Yposition", "scaled by 0.01"]),
    ("0 92 0 2 0 0 12 0 0", "0 92 0 2 0 0 1e39 0 0", 1.0, ["Line 21", "Zrotation", "Leg", "degrees"]),
    ("0 92 0 2 0 0 12 0 0", "0 92 0 2 0 0 12 0 2e6", 1.0, ["Line 21", "Yrotation"]),
    ("OFFSET 0 -40 0\n    CHANNELS", "OFFSET 0 1e30 0\n    CHANNELS", 1.0, ["Line 8", "OFFSET of joint Leg"]),
    ("OFFSET 0 -40 0\n    CHANNELS", "OFFSET 0 -4e8 0\n    CHANNELS", 0.01, ["Line 8", "scaled by 0.01"]),
    ("      OFFSET 0 -40 0\n    }", "      OFFSET 0 -1e300 0\n    }", 1.0, ["Line 12", "End Site"]),
])
def test_numbers_beyond_the_bounds_are_refused(old, new, scale, words):
    message = _refused(_variant(old, new), scale)
    for w in words:
        assert w in message, (w, message)


def test_joint_chain_beyond_the_bounds_is_refused():
    # Each offset is allowed, their sum along the chain is not.
    text = _variant("OFFSET 0 0 0\n", "OFFSET 0 900000 0\n").replace("OFFSET 0 -40 0\n    CHANNELS",
                                                                      "OFFSET 0 900000 0\n    CHANNELS")
    assert "Leg" in _refused(text) and "1e+06" in _refused(text)


@pytest.mark.parametrize("frame_time, fine", [
    ("1e-300", False), ("0.00005", False), ("11", False), ("1e300", False),
    ("0.0001", True), ("10", True), ("0.0333333", True),
])
def test_frame_time_bounds(frame_time, fine):
    text = _variant("Frame Time: 0.0333333", "Frame Time: " + frame_time)
    if fine:
        assert bvh_parse.parse_bvh(text.encode()).frame_time == float(frame_time)
    else:
        with pytest.raises(bvh_data.BvhError, match=r"Line 18 of .*Frame Time"):
            bvh_parse.parse_bvh(text.encode(), source="take.bvh")


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 0.0, -1.0, 1e-9, 1e9])
def test_scale_bounds(scale):
    with pytest.raises(bvh_data.BvhError, match="scale"):
        bvh_convert.to_blender(bvh_parse.parse_bvh(TEXT.encode()), scale)


def test_accepted_values_give_finite_float32_keys():
    text = _variant("0 91 0 1 0 0 11 0 0", "-1e6 91 0 1 0 0 -999999 0 0")
    motion = bvh_convert.to_blender(bvh_parse.parse_bvh(text.encode()), 1.0)
    rest = np.tile(np.eye(3), (2, 1, 1))
    _channels, rows = bvh_channels.keyed_channels(motion, rest)
    assert rows.dtype == np.float32 and np.isfinite(rows).all()


# ---------------------------------------------------------------------------
# Chunked reading: the same values and the same line numbers in errors


def test_chunks_give_the_same_values_and_lines(monkeypatch):
    rng = np.random.default_rng(3)
    rows = rng.uniform(-50, 50, size=(400, 9))
    body = "\n".join(" ".join("%.4f" % v for v in r) for r in rows) + "\n"
    text = TEXT.split("Frames:")[0] + "Frames: 400\nFrame Time: 0.0333333\n" + body
    whole = bvh_parse.parse_bvh(text.encode())
    bad = text.replace("\n", "\n", 1)
    lines = bad.split("\n")
    lines[19 + 250] = lines[19 + 250].replace(" ", " nan ", 1)
    bad = "\n".join(lines)
    message_whole = str(pytest.raises(bvh_data.BvhError, bvh_parse.parse_bvh, bad.encode()).value)
    seen = []
    monkeypatch.setattr(bvh_motion, "CHUNK_BYTES", 97)
    chunked = bvh_parse.parse_bvh(text.encode(), progress=seen.append)
    assert np.array_equal(chunked.motion, whole.motion)
    assert chunked.motion_line == whole.motion_line == 19
    assert len(seen) > 10 and seen == sorted(seen) and seen[-1] == 1.0
    assert str(pytest.raises(bvh_data.BvhError, bvh_parse.parse_bvh, bad.encode()).value) == message_whole
    assert "Line 270" in message_whole


def test_blank_lines_between_frames_still_name_lines():
    text = _variant("0 91 0 1 0 0 11 0 0\n", "\n0 91 0 1 0 0 11 0 0\n\n")
    data = bvh_parse.parse_bvh(text.encode(), source="take.bvh")
    assert data.motion_line is None and data.frame_count == 3
    bad = text.replace("0 92 0 2 0 0 12 0 0", "0 92 0 2 0 0 1e39 0 0")
    assert "Frame 3 of take.bvh" in _refused(bad)
    assert "Line 23 of take.bvh" in str(pytest.raises(
        bvh_data.BvhError, bvh_parse.parse_bvh, text.replace("0 92 0 2 0 0 12", "0 92 0 2 0 x 12").encode(),
        source="take.bvh").value)


def test_declared_frames_beyond_the_file_are_refused_before_allocating():
    message = str(pytest.raises(bvh_data.BvhError, bvh_parse.parse_bvh,
                                _variant("Frames: 3", "Frames: 900000000000").encode()).value)
    assert "truncated" in message and "900000000000" in message


def test_one_frame_of_a_take():
    data = bvh_parse.parse_bvh(TEXT.encode(), source="take.bvh")
    one = data.frame_range(2, 3)
    assert one.frame_count == 1 and np.array_equal(one.motion[0], data.motion[2])
    bad = bvh_parse.parse_bvh(_variant("0 92 0 2 0 0 12 0 0", "0 92 0 2 0 0 1e39 0 0").encode(), source="take.bvh")
    assert "Line 21" in str(pytest.raises(bvh_data.BvhError, bvh_convert.to_blender, bad.frame_range(2, 3)).value)
    assert bvh_convert.to_blender(bad.frame_range(0, 1)).frame_count == 1


# ---------------------------------------------------------------------------
# Fuzz: every malformed file is a BvhError sentence or finite arrays


def test_parser_fuzz():
    rng = np.random.default_rng(20240611)
    outcomes = {"refused": 0, "read": 0}
    for case in range(600):
        raw = mutate(rng, (TEXT, TEXT_B)[case % 2])
        try:
            data = bvh_parse.parse_bvh(raw, source="fuzz.bvh")
            motion = bvh_convert.to_blender(data, float(rng.choice([1.0, 0.01, 100.0])))
            _channels, rows = bvh_channels.keyed_channels(motion, np.tile(np.eye(3), (len(motion.names), 1, 1)))
        except bvh_data.BvhError as ex:
            message = str(ex)
            assert message and message[-1] in ".)" and "Traceback" not in message, (case, raw, message)
            assert len(message) < 400, (case, message)
            outcomes["refused"] += 1
            continue
        assert np.isfinite(rows).all() and np.isfinite(motion.heads).all(), (case, raw)
        outcomes["read"] += 1
    assert outcomes["refused"] > 300 and outcomes["read"] > 20, outcomes
