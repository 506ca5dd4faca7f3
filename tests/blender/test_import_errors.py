"""Bad BVH input: a clear message, CANCELLED, and nothing left behind."""

import os

import bpy
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H
from bvh_fuzz import TEXT

GOOD = TEXT   # a small valid take (tests/bvh_fuzz.py)


def _variant(old, new, count=1):
    assert old in GOOD
    return GOOD.replace(old, new, count)


CASES = {
    "truncated": (_variant("0 92 0 2 0 0 12 0 0\n", ""), ["truncated", "3 frames"]),
    "too_few_values": (_variant("0 91 0 1 0 0 11 0 0", "0 91 0 1 0 0 11 0"), ["Line 20", "8 values", "9 channels"]),
    "too_many_values": (_variant("0 91 0 1 0 0 11 0 0", "0 91 0 1 0 0 11 0 0 7"), ["Line 20", "10 values"]),
    "non_numeric": (_variant("0 91 0 1 0 0 11 0 0", "0 91 0 1 abc 0 11 0 0"), ["Line 20", "'abc' is not a number"]),
    "nan": (_variant("0 91 0 1 0 0 11 0 0", "0 91 0 nan 0 0 11 0 0"), ["Line 20", "not a finite number"]),
    "inf": (_variant("0 92 0 2 0 0 12 0 0", "0 92 0 2 0 0 12 inf 0"), ["Line 21", "not a finite number"]),
    "unknown_channel": (_variant("Zrotation Xrotation Yrotation\n    End", "Zrotation Wrotation Yrotation\n    End"),
                        ["unknown channel name 'Wrotation'", "Line 9"]),
    "missing_frame_time": (_variant("Frame Time: 0.0333333\n", ""), ["Frame Time"]),
    "zero_frames": (_variant("Frames: 3", "Frames: 0"), ["no frames"]),
    "no_root": ("HIERARCHY\nMOTION\nFrames: 1\nFrame Time: 0.1\n0\n", ["no ROOT"]),
    "unbalanced_open": (_variant("      OFFSET 0 -40 0\n    }\n", "      OFFSET 0 -40 0\n"), ["unclosed"]),
    "unbalanced_close": (_variant("  }\n}\nMOTION", "  }\n}\n}\nMOTION"), ["'}' without a matching '{'"]),
    "empty": ("", ["empty"]),
    "whitespace_only": ("  \n\n ", ["empty"]),
    "not_bvh": ("hello world\n", ["not a BVH file"]),
}


def _run(path):
    before = H.datablock_counts()
    with pytest.raises(RuntimeError) as info:
        bpy.ops.motion_matching.import_bvh(filepath=path, global_scale=0.01)
    assert H.datablock_counts() == before, "something was left behind"
    assert not bpy.data.bones if hasattr(bpy.data, "bones") else True
    return str(info.value)


def test_good_file_imports(tmp_path):
    path = tmp_path / "good.bvh"
    path.write_text(GOOD)
    obj = H.import_ours(str(path), global_scale=0.01)
    assert len(obj.data.bones) == 2


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_is_refused(tmp_path, case):
    text, words = CASES[case]
    path = tmp_path / ("%s.bvh" % case)
    path.write_text(text)
    message = _run(str(path))
    for w in words:
        assert w in message, (w, message)


def test_binary_file_is_refused(tmp_path):
    path = tmp_path / "image.bvh"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    assert "binary" in _run(str(path))


def test_missing_path_is_refused(tmp_path):
    message = _run(str(tmp_path / "nowhere" / "take.bvh"))
    assert "does not exist" in message


def test_folder_is_refused(tmp_path):
    assert "folder" in _run(str(tmp_path))


def test_failure_after_a_good_import_leaves_the_first(tmp_path):
    H.import_ours(SAMPLE_TAKE, global_scale=0.01)
    before = H.datablock_counts()
    path = tmp_path / "bad.bvh"
    path.write_text(CASES["truncated"][0])
    _run(str(path))
    assert H.datablock_counts() == before
