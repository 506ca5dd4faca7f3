"""core.database.motion_database: the typed database read from and written to the
.npz arrays (round trip, attributes against the arrays, damaged arrays named)."""

import io
import json

import numpy as np
import pytest

from core.database.file_layout import DatabaseError
from core.database.feature_database import Database
from core.database.motion_database import FeatureBones, MotionDatabase
from core.database.tags import Tag
from test_database_check import synthetic_arrays


@pytest.fixture(scope="module")
def good():
    return synthetic_arrays()


def _npz(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_arrays_to_database_and_back_give_the_same_arrays(good):
    out = MotionDatabase.from_arrays(good).to_arrays()
    assert sorted(out) == sorted(good)
    for key in good:
        if key == "feature_bones_json":   # written with sorted keys; the same object
            assert json.loads(str(out[key])) == json.loads(str(good[key]))
            continue
        assert out[key].dtype == np.asarray(good[key]).dtype, key
        assert out[key].shape == np.asarray(good[key]).shape, key
        np.testing.assert_array_equal(out[key], good[key], err_msg=key)
    # A second trip changes nothing at all, key order included.
    again = MotionDatabase.from_arrays(out).to_arrays()
    assert list(again) == list(out)
    for key in out:
        assert again[key].dtype == out[key].dtype and np.array_equal(again[key], out[key]), key


def test_the_bytes_of_a_file_give_the_same_database(good):
    a = MotionDatabase.from_arrays(good)
    b = MotionDatabase.from_npz_bytes(_npz(good))
    for key, value in a.to_arrays().items():
        assert np.array_equal(b.to_arrays()[key], value), key
    assert b.fingerprint == a.fingerprint and b.tags == a.tags


def test_attributes_match_the_arrays(good):
    database = MotionDatabase.from_arrays(good)
    assert isinstance(database.matching, Database)
    np.testing.assert_array_equal(database.matching.features, good["features"])
    np.testing.assert_array_equal(database.matching.valid, good["valid"])
    assert database.matching.clip_names == ["walk", "turn"]
    assert database.skeleton.names == [str(s) for s in good["bone_names"]]
    np.testing.assert_array_equal(database.skeleton.parents, good["bone_parents"])
    np.testing.assert_array_equal(database.skeleton.rest, good["bone_rest"])
    np.testing.assert_array_equal(database.skeleton.offsets, good["bone_offsets"])
    np.testing.assert_array_equal(database.poses.locations, good["pose_locations"])
    np.testing.assert_array_equal(database.poses.rotations, good["pose_rotations"])
    np.testing.assert_array_equal(database.root.positions, good["root_positions"])
    np.testing.assert_array_equal(database.root.quats, good["root_quats"])
    np.testing.assert_array_equal(database.root.facings, good["root_facings"])
    np.testing.assert_array_equal(database.toe_positions, good["toe_positions"])
    np.testing.assert_array_equal(database.foot_positions, good["foot_positions"])
    np.testing.assert_array_equal(database.contacts, good["contacts"])
    assert database.contact_joints == ("LeftToe", "RightToe")
    assert database.tags == [[Tag("walk", 0, 60)], []]
    assert database.clips.actions == ["walk", "turn"] and database.clips.armatures == ["Armature"] * 2
    np.testing.assert_array_equal(database.clips.frame_starts, good["clip_frame_start"])
    assert database.clips.mirrored is None and not database.clips.is_mirror(1)
    assert database.feature_bones == FeatureBones(hips="Hips", left_foot="LeftFoot", right_foot="RightFoot",
                                                  left_toe="LeftToe", right_toe="RightToe", root="Root")
    assert database.fingerprint == "0" * 40


def test_mirrored_clips_are_read_and_written(good):
    arrays = dict(good, clip_mirrored=np.array([False, True]))
    database = MotionDatabase.from_arrays(arrays)
    assert [database.clips.is_mirror(c) for c in (0, 1)] == [False, True]
    np.testing.assert_array_equal(database.to_arrays()["clip_mirrored"], [False, True])
    assert "clip_mirrored" not in MotionDatabase.from_arrays(good).to_arrays()


def test_arrays_keep_the_types_they_were_stored_with(good):
    """A file written elsewhere may hold float64 poses: they are used as they are."""
    arrays = dict(good, pose_rotations=good["pose_rotations"].astype(np.float64))
    database = MotionDatabase.from_arrays(arrays)
    assert database.poses.rotations.dtype == np.float64
    assert database.to_arrays()["pose_rotations"].dtype == np.float64


@pytest.mark.parametrize("key, damage, words", [
    ("root_quats", lambda a: np.where(np.arange(len(a))[:, None] == 7, 0.0, a), "root_quats holds a zero quaternion"),
    ("pose_locations", lambda a: np.where(np.arange(len(a))[:, None, None] == 3, np.nan, a),
     "pose_locations holds NaN"),
    ("toe_positions", lambda a: a[:-1], "toe_positions has shape"),
    ("bone_parents", lambda a: np.array([-1, 0, 1, 1, 2, 9], dtype=np.int32), "bone_parents holds 9"),
    ("tags_json", lambda a: np.array(json.dumps([[{"name": "walk", "start": 0, "end": 500}], []])),
     "tags_json holds a bad tag"),
    ("feature_bones_json", lambda a: np.array(json.dumps({"hips": "Hips"})), "feature_bones_json names None"),
])
def test_a_damaged_array_is_named_in_the_error(good, key, damage, words):
    arrays = dict(good)
    arrays[key] = damage(good[key])
    with pytest.raises(DatabaseError, match=words):
        MotionDatabase.from_arrays(arrays)
    with pytest.raises(DatabaseError, match=words):
        MotionDatabase.from_npz_bytes(_npz(arrays))


def test_a_missing_array_is_named_in_the_error(good):
    arrays = {k: v for k, v in good.items() if k != "foot_positions"}
    with pytest.raises(DatabaseError, match="lacks foot_positions"):
        MotionDatabase.from_arrays(arrays)


def test_check_refuses_a_database_whose_arrays_disagree(good):
    database = MotionDatabase.from_arrays(good)
    database.check()
    database.root.positions = database.root.positions[:-1]
    with pytest.raises(DatabaseError, match="root_positions has shape"):
        database.check()
