"""core.database.checks and core.io.npz_reader: a database file is checked completely
(keys, kinds, shapes, cross-lengths, values, skeleton, tags) and read with capped
inflation before anything uses it. No Blender."""

import io
import json
import math
import struct
import zipfile

import numpy as np
import pytest

from core.database.checks import check_arrays, database_from_arrays, read_database
from core.database.file_layout import ADDON_FORMAT, OPTIONAL_LAYOUT, DatabaseError, known_keys, layout
from core.errors import MotionMatchingError
from core.database.clip_features import Clip
from core.database.feature_database import build_database
from core.database.feature_spec import default_spec, feature_names, feature_weights
from core.io.npz_reader import (
    MAX_INFLATED_BYTES,
    MAX_RATIO,
    RATIO_FLOOR_BYTES,
    NpzArchive,
    NpzError,
    inflate_cap,
)
from core.maths.transforms import quat_from_axis_angle

BONES = ["Root", "Hips", "LeftFoot", "RightFoot", "LeftToe", "RightToe"]
PARENTS = [-1, 0, 1, 1, 2, 3]


def _clip(name, n, fps, turn):
    t = np.arange(n) / fps
    yaw = turn * t
    root = np.stack([np.sin(yaw) * t, -np.cos(yaw) * t, np.zeros(n)], axis=1)
    q = quat_from_axis_angle(np.broadcast_to([0.0, 0.0, 1.0], (n, 3)), yaw)
    swing = 0.2 * np.sin(2 * math.pi * 1.5 * t)
    pos = np.zeros((n, len(BONES), 3))
    pos[:, 0] = root
    pos[:, 1] = root + (0.0, 0.0, 1.0)
    pos[:, 2] = root + np.stack([np.full(n, 0.1), swing, np.full(n, 0.1)], axis=1)
    pos[:, 3] = root + np.stack([np.full(n, -0.1), -swing, np.full(n, 0.1)], axis=1)
    pos[:, 4] = pos[:, 2] + (0.0, -0.15, -0.08)
    pos[:, 5] = pos[:, 3] + (0.0, -0.15, -0.08)
    return Clip(name=name, fps=fps, joint_names=list(BONES), positions=pos, root_pos=root, root_rot=q)


def synthetic_arrays():
    """A complete database of two small clips, laid out as the add-on writes it."""
    spec = default_spec("LeftFoot", "RightFoot", "Hips")
    clips = [_clip("walk", 120, 60.0, 0.0), _clip("turn", 100, 60.0, 0.8)]
    db = build_database(spec, clips, contact_joints=("LeftToe", "RightToe"))
    n, j = db.num_rows, len(BONES)
    rng = np.random.default_rng(3)
    rest = np.tile(np.eye(4), (j, 1, 1))
    rest[:, :3, 3] = rng.normal(size=(j, 3))
    quats = rng.normal(size=(n, j, 4))
    quats /= np.linalg.norm(quats, axis=-1, keepdims=True)
    arrays = db.to_arrays()
    arrays.update({
        "format": np.array(ADDON_FORMAT),
        "weights": feature_weights(spec),
        "feature_names": np.array(feature_names(spec)),
        "bone_names": np.array(BONES),
        "bone_parents": np.array(PARENTS, dtype=np.int32),
        "bone_rest": rest,
        "bone_offsets": rest.copy(),
        "feature_bones_json": np.array(json.dumps({"hips": "Hips", "left_foot": "LeftFoot",
                                                   "right_foot": "RightFoot", "left_toe": "LeftToe",
                                                   "right_toe": "RightToe", "root": "Root"})),
        "pose_rotations": quats.astype(np.float32),
        "pose_locations": np.zeros((n, j, 3), dtype=np.float32),
        "root_positions": np.concatenate([c.root_pos for c in clips]),
        "root_facings": np.zeros((n, 2)),
        "root_quats": np.concatenate([c.root_rot for c in clips]),
        "toe_positions": np.concatenate([c.positions[:, 4:6] for c in clips]),
        "foot_positions": np.concatenate([c.positions[:, 2:4] for c in clips]),
        "clip_actions": np.array(["walk", "turn"]),
        "clip_armatures": np.array(["Armature", "Armature"]),
        "clip_frame_start": np.array([1.0, 1.0]),
        "tags_json": np.array(json.dumps([[{"name": "walk", "start": 0, "end": 60}], []])),
        "fingerprint": np.array("0" * 40),
    })
    return arrays


@pytest.fixture(scope="module")
def good():
    return synthetic_arrays()


def npz_bytes(arrays, compressed=False):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def test_the_synthetic_database_passes_in_memory_and_as_bytes(good):
    arrays, sizes, spec = check_arrays(good)
    assert sizes == {"N": 220, "D": 27, "C": 2, "J": 6} and spec.dim == 27
    for compressed in (False, True):
        again, _spec = read_database(npz_bytes(good, compressed))
        assert sorted(again) == sorted(good)
        for k in good:
            assert again[k].dtype == np.asarray(good[k]).dtype, k
            np.testing.assert_array_equal(again[k], good[k], err_msg=k)
        assert again["features"].flags.writeable
    db = database_from_arrays(good)
    assert db.num_rows == 220 and db.contact_joints == ("LeftToe", "RightToe")
    # Fortran-ordered members read back the same.
    fortran = dict(good, raw=np.asfortranarray(good["raw"]))
    again, _ = read_database(npz_bytes(fortran))
    np.testing.assert_array_equal(again["raw"], good["raw"])


def test_unknown_members_are_ignored(good):
    data = npz_bytes(dict(good, my_notes=np.arange(5)))
    buf = io.BytesIO(data)
    with zipfile.ZipFile(buf, "a") as z:
        z.writestr("readme.txt", "hello")
    arrays, _ = read_database(buf.getvalue())
    assert "my_notes" not in arrays and set(arrays) == set(good)


def test_a_core_database_needs_only_the_core_keys(good):
    core_keys = set(layout(complete=False)) | {"contacts", "contact_joints"}
    core_only = {k: v for k, v in good.items() if k in core_keys}
    database_from_arrays(core_only)
    read_database(npz_bytes(core_only), complete=False)
    with pytest.raises(DatabaseError, match="lacks format, weights"):
        read_database(npz_bytes(core_only))


# ------------------------------------------------------------------ inconsistent arrays


def _set(key, value):
    return lambda a: {**a, key: value(a[key]) if callable(value) else value}


def _drop(*keys):
    return lambda a: {k: v for k, v in a.items() if k not in keys}


def _at(key, index, value):
    def f(a):
        x = np.array(a[key], copy=True)
        x[index] = value
        return {**a, key: x}
    return f


def _spec_edit(edit):
    def f(a):
        d = json.loads(str(a["spec_json"]))
        edit(d)
        return {**a, "spec_json": np.array(json.dumps(d))}
    return f


def _nested(depth):
    return np.array("[" * depth + "]" * depth)


MUTATIONS = [
    ("missing_key", _drop("raw"), "lacks raw"),
    ("missing_addon_keys", _drop("pose_rotations", "bone_names"), "lacks bone_names, pose_rotations"),
    ("contacts_without_joints", _drop("contact_joints"), "lacks contact_joints"),
    ("features_of_ints", _set("features", lambda x: x.astype(np.int32)), "features must hold floating-point"),
    ("clip_index_of_floats", _set("clip_index", lambda x: x.astype(np.float64)), "clip_index must hold whole"),
    ("valid_of_ints", _set("valid", lambda x: x.astype(np.int8)), "valid must hold true/false"),
    ("spec_json_not_text", _set("spec_json", np.array(3.0)), "spec_json must hold text"),
    ("features_flat", _set("features", lambda x: x.reshape(-1)), "features must have 2 dimensions"),
    ("spec_json_one_d", _set("spec_json", lambda x: x.reshape(1)), "spec_json must have 0 dimensions"),
    ("valid_short", _set("valid", lambda x: x[:-1]), r"valid has shape \(219,\).*220 rows"),
    ("raw_extra_column", _set("raw", lambda x: np.hstack([x, x[:, :1]])), "raw has shape .*inconsistent"),
    ("pose_rotations_bones", _set("pose_rotations", lambda x: x[:, :-1]), "pose_rotations has shape"),
    ("clip_fps_per_row", _set("clip_fps", np.full(3, 60.0)), "clip_fps has shape"),
    ("no_rows", lambda a: {**a, **{k: v[:0] for k, v in a.items() if k in (
        "features", "raw", "clip_index", "frame_index", "valid", "excluded")}}, "features is empty"),
    ("nan_features", _at("features", (5, 3), np.nan), r"features holds NaN .*\(5, 3\)"),
    ("inf_raw", _at("raw", (7, 0), np.inf), "raw holds NaN or infinite"),
    ("huge_raw", _at("raw", (7, 0), 1e30), "raw holds values beyond"),
    ("nan_norm_scale", _at("norm_scale", 2, np.nan), "norm_scale holds NaN"),
    ("zero_norm_scale", _at("norm_scale", 2, 0.0), "norm_scale holds 0 at column 2"),
    ("features_not_from_raw", _at("features", (9, 1), 7.0), "features do not equal"),
    ("clip_index_out_of_range", _at("clip_index", 10, 5), r"clip_index holds 5 \(at index 10\)"),
    ("clip_index_negative", _at("clip_index", 10, -1), "clip_index holds -1"),
    ("clip_index_wrong_clip", _at("clip_index", 10, 1), "puts row 10 in clip 1"),
    ("frame_index_out_of_range", _at("frame_index", 3, 10 ** 6), "frame_index holds 1000000"),
    ("frame_index_wrong", _at("frame_index", 3, 4), "gives frame 4 for row 3"),
    ("clip_offsets_not_monotone", _set("clip_offsets", np.array([0, 150, 120])), "must rise from 0"),
    ("clip_offsets_not_ending_at_n", _set("clip_offsets", np.array([0, 120, 200])), "must rise from 0"),
    ("clip_offsets_not_from_zero", _set("clip_offsets", np.array([1, 120, 220])), "must rise from 0"),
    ("clip_offsets_huge", _set("clip_offsets", np.array([0, 2 ** 62, 220])), "outside the rows"),
    ("valid_and_excluded", _at("excluded", 4, True), "offers row 4, which excluded"),
    ("nothing_valid", _set("valid", lambda x: np.zeros_like(x)), "offers no row"),
    ("fps_zero", _at("clip_fps", 1, 0.0), "clip_fps gives 0 frames per second for clip 1"),
    ("fps_huge", _at("clip_fps", 0, 1e6), "clip_fps gives 1e.06"),
    ("bone_parents_out_of_range", _at("bone_parents", 3, 17), "bone_parents holds 17"),
    ("bone_parents_cyclic", _set("bone_parents", np.array([-1, 2, 1, 1, 2, 3])), "child of bone 2"),
    ("bone_parents_self", _at("bone_parents", 2, 2), "child of bone 2"),
    ("bone_names_twice", _at("bone_names", 5, "LeftToe"), "lists LeftToe twice"),
    ("bone_rest_nan", _at("bone_rest", (2, 0, 3), np.nan), "bone_rest holds NaN"),
    ("bone_offsets_not_affine", _at("bone_offsets", (1, 3, 0), 0.5), "last row is not 0, 0, 0, 1"),
    ("spec_json_not_json", _set("spec_json", np.array("{not json")), "spec_json is not a usable feature set"),
    ("spec_json_nested", _set("spec_json", _nested(100000)), "spec_json is not a usable feature set"),
    ("spec_json_huge_number", _spec_edit(lambda d: d["groups"][0].__setitem__("weight", 10 ** 400)),
     "spec_json is not a usable feature set"),
    ("spec_json_bad_kind", _spec_edit(lambda d: d["groups"][0].__setitem__("kind", "magic")), "unknown kind"),
    ("spec_dim_mismatch", _spec_edit(lambda d: d["groups"].pop()), "describes 21 feature columns"),
    ("spec_unknown_bone", _spec_edit(lambda d: d["groups"][0].__setitem__("bones", ["Tail", "RightFoot"])),
     "spec_json reads bone Tail"),
    ("feature_names_mismatch", _at("feature_names", 0, "other.pos.x"), "feature_names do not match"),
    ("weights_mismatch", _at("weights", 0, 5.0), "weights do not match"),
    ("format_version_text", _set("format_version", np.array("abc")), "format_version must hold whole numbers"),
    ("format_version_other", _set("format_version", np.array(2)), "uses format 2"),
    ("format_other", _set("format", np.array("something/else")), "format is 'something/else'"),
    ("object_array", _set("clip_names", lambda x: x.astype(object)), "clip_names holds Python objects"),
    ("zero_quaternion", _at("pose_rotations", (8, 2), 0.0), r"pose_rotations holds a zero quaternion \(at \(8, 2\)"),
    ("nan_root_quats", _at("root_quats", (8, 2), np.nan), "root_quats holds NaN"),
    ("feature_bones_missing", _set("feature_bones_json", np.array('{"hips": "Hips"}')), "as the left foot"),
    ("feature_bones_not_json", _set("feature_bones_json", np.array("[")), "feature_bones_json is not readable"),
    ("contact_joint_unknown", _at("contact_joints", 0, "Nope"), "contact_joints names Nope"),
    ("contact_joints_swapped", _set("contact_joints", lambda x: x[::-1].copy()), "left and right toes"),
    ("tags_wrong_count", _set("tags_json", np.array("[[]]")), "tags of each of the 2 clips"),
    ("tag_out_of_clip", _set("tags_json", np.array('[[{"name": "walk", "start": 0, "end": 500}], []]')),
     "holds a bad tag"),
    ("tag_without_end", _set("tags_json", np.array('[[{"name": "walk", "start": 0}], []]')), "a start and an end"),
    ("tag_bad_name", _set("tags_json", np.array('[[{"name": "and", "start": 0, "end": 3}], []]')),
     "holds a bad tag"),
]


@pytest.mark.parametrize("name, mutate, match", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_inconsistent_databases_are_refused_with_a_sentence(good, name, mutate, match):
    bad = mutate(good)
    with pytest.raises(DatabaseError, match=match) as caught:
        check_arrays(bad)
    text = str(caught.value)
    assert text.endswith(".") and "\n" not in text and "Traceback" not in text
    if name != "object_array":
        # The same sentence for the file (through the capped reader).
        with pytest.raises(DatabaseError, match=match):
            read_database(npz_bytes(bad))


def test_every_documented_key_is_checked(good):
    # Every key the add-on writes is known to the checker, and dropping any one is refused
    # (but for the optional ones, which databases written before them lack).
    assert set(good) | set(OPTIONAL_LAYOUT) == known_keys()
    for key in good:
        with pytest.raises(DatabaseError, match="lacks %s" % key):
            check_arrays(_drop(key)(good))


def test_mirrored_clip_flags_are_optional_but_checked(good):
    # A database from before Mirror Takes (no clip_mirrored) loads; one with the flags keeps them.
    assert "clip_mirrored" not in check_arrays(good)[0]
    arrays, _sizes, _spec = check_arrays({**good, "clip_mirrored": np.array([False, True])})
    assert list(arrays["clip_mirrored"]) == [False, True]
    assert list(read_database(npz_bytes({**good, "clip_mirrored": np.array([False, True])}))[0]["clip_mirrored"]) \
        == [False, True]
    with pytest.raises(DatabaseError, match="clip_mirrored has shape \\(3,\\), but its axis 0 must have 2 clips"):
        check_arrays({**good, "clip_mirrored": np.array([False, True, True])})
    with pytest.raises(DatabaseError, match="clip_mirrored must hold true/false flags"):
        check_arrays({**good, "clip_mirrored": np.array([0.0, 1.0])})


# ------------------------------------------------------------------------- the archive


def _patch_central_sizes(data, member, file_size):
    """Rewrite the uncompressed size the zip's central directory declares for ``member``."""
    out = bytearray(data)
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        name_len, = struct.unpack("<H", out[pos + 28:pos + 30])
        if bytes(out[pos + 46:pos + 46 + name_len]).decode() == member:
            out[pos + 24:pos + 28] = struct.pack("<I", file_size)
            return bytes(out)
        pos = data.find(b"PK\x01\x02", pos + 4)
    raise AssertionError("no member %s" % member)


def _bomb(inflated_bytes, name="features.npy"):
    """A small zip whose one deflated member is ``inflated_bytes`` of zeros (honestly declared)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open(name, "w", force_zip64=True) as fh:
            chunk = bytes(1 << 22)
            left = inflated_bytes
            while left:
                fh.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
    return buf.getvalue()


def test_the_inflate_cap():
    assert inflate_cap(1000) == RATIO_FLOOR_BYTES
    assert inflate_cap(10 * 1024 ** 2) == MAX_RATIO * 10 * 1024 ** 2
    assert inflate_cap(1024 ** 3) == MAX_INFLATED_BYTES


def test_a_zip_bomb_is_refused_before_inflating():
    data = _bomb(256 * 1024 ** 2)
    assert len(data) < 2 * 1024 ** 2
    with pytest.raises(NpzError, match="declares 268.4 MB of arrays in a file of 0.3 MB"):
        read_database(data)


def test_a_declared_size_beyond_2_gib_is_refused(good):
    data = npz_bytes({"features": good["features"]})
    lying = _patch_central_sizes(data, "features.npy", 0xFFFFFFF0)
    with pytest.raises(NpzError, match="declares 4295.0 MB"):
        NpzArchive(lying)


def test_a_member_longer_than_declared_stops_at_the_declared_size(good):
    # The directory says 1000 bytes; the member holds 600 KB: reading stops at the
    # declared size, and the header no longer matches it.
    data = npz_bytes({"features": good["features"]}, compressed=True)
    lying = _patch_central_sizes(data, "features.npy", 1000)
    with NpzArchive(lying) as npz, pytest.raises(NpzError, match="features.npy is damaged"):
        npz.read("features")


def test_a_header_declaring_a_huge_array_is_refused():
    # Shape (10**12, 27) float32 in a member of a few bytes: never allocated.
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False,
                                                "shape": (10 ** 12, 27)})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("features.npy", head.getvalue() + bytes(64))
    with NpzArchive(buf.getvalue()) as npz, pytest.raises(NpzError, match="header describes"):
        npz.read("features")


def test_corrupt_deflate_stream(good):
    data = bytearray(npz_bytes({"features": good["features"], "raw": good["raw"]}, compressed=True))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("raw.npy")
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    data[start:start + 64] = b"\xff" * 64     # an invalid deflate block type
    with NpzArchive(bytes(data)) as npz:
        npz.read("features")
        with pytest.raises(NpzError, match="raw.npy is (damaged|not a readable)"):
            npz.read("raw")


def test_a_flipped_byte_in_stored_data_fails_the_checksum(good):
    data = bytearray(npz_bytes({"raw": good["raw"]}))
    data[len(data) // 2] ^= 0x5A
    with NpzArchive(bytes(data)) as npz, pytest.raises(NpzError, match="raw.npy is damaged"):
        npz.read("raw")


def test_pickled_member_is_never_unpickled():
    buf = io.BytesIO()
    np.savez(buf, clip_names=np.array([{"a": 1}], dtype=object))
    with NpzArchive(buf.getvalue()) as npz, pytest.raises(NpzError, match="Python objects"):
        npz.header("clip_names")


@pytest.mark.parametrize("data, match", [
    (b"", "empty"),
    (b"not an archive at all", "does not start like a zip"),
    (b"PK\x03\x04" + bytes(100), "not a readable .npz"),
    (np.lib.format.magic(1, 0) + bytes(10), "does not start like a zip"),
])
def test_not_a_zip(data, match):
    with pytest.raises(NpzError, match=match):
        read_database(data)


def test_truncated_archive(good):
    data = npz_bytes(good)
    for cut in (len(data) // 3, len(data) - 10):
        with pytest.raises(MotionMatchingError):
            read_database(data[:cut])


def test_duplicate_and_unsupported_members(good):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("raw.npy", b"x")
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z.writestr("raw.npy", b"y")
    with pytest.raises(NpzError, match="holds raw.npy twice"):
        NpzArchive(buf.getvalue())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_BZIP2) as z:
        z.writestr("raw.npy", b"x")
    with pytest.raises(NpzError, match="compression method 12"):
        NpzArchive(buf.getvalue())
