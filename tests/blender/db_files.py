"""Damaged database files for the import tests, made from a real database's arrays.

Every maker is deterministic: the inconsistent kinds are fixed edits, and
:func:`fuzz_cases` draws its mutations from a seeded numpy generator.
"""

import io
import json
import struct
import zipfile

import numpy as np


def npz(arrays, compressed=False):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def arrays_of(data):
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _local_data_start(data, member):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(member)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + name_len + extra_len


def corrupt_deflate(arrays, key="features"):
    """A compressed .npz whose ``key`` member's deflate stream starts with an invalid block."""
    data = bytearray(npz(arrays, compressed=True))
    start = _local_data_start(bytes(data), key + ".npy")
    data[start:start + 64] = b"\xff" * 64
    return bytes(data)


def zip_bomb(inflated=256 * 1024 ** 2, member="features.npy"):
    """A small archive whose one member inflates to ``inflated`` bytes of zeros."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open(member, "w", force_zip64=True) as fh:
            chunk = bytes(1 << 22)
            left = inflated
            while left:
                fh.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
    return buf.getvalue()


def declared_size(data, member, size):
    """``data`` with the central directory declaring ``size`` inflated bytes for ``member``."""
    out = bytearray(data)
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        name_len, = struct.unpack("<H", out[pos + 28:pos + 30])
        if bytes(out[pos + 46:pos + 46 + name_len]).decode() == member:
            out[pos + 24:pos + 28] = struct.pack("<I", size)
            return bytes(out)
        pos = data.find(b"PK\x01\x02", pos + 4)
    raise KeyError(member)


def _with(a, **changes):
    out = dict(a)
    for k, v in changes.items():
        if v is None:
            del out[k]
        else:
            out[k] = v
    return out


def _at(a, key, index, value):
    x = np.array(a[key], copy=True)
    x[index] = value
    return _with(a, **{key: x})


def _spec(a, edit):
    d = json.loads(str(a["spec_json"]))
    edit(d)
    return _with(a, spec_json=np.array(json.dumps(d)))


def _cycle(a):
    """Bone 1 made the child of its own child: a loop in the skeleton."""
    child = int(np.flatnonzero(a["bone_parents"] == 1)[0])
    return _at(a, "bone_parents", 1, child)


def _object_npz(a):
    return npz(_with(a, clip_names=np.array([str(s) for s in a["clip_names"]], dtype=object)))


# name -> (base arrays, base bytes) -> bytes of a file import must refuse
_MAKERS = {
    "missing_key": lambda a, b: npz(_with(a, raw=None)),
    "missing_skeleton": lambda a, b: npz(_with(a, bone_names=None, bone_parents=None)),
    "wrong_dtype": lambda a, b: npz(_with(a, clip_index=a["clip_index"].astype(np.float64))),
    "wrong_shape": lambda a, b: npz(_with(a, features=a["features"].reshape(-1))),
    "mismatched_rows": lambda a, b: npz(_with(a, valid=a["valid"][:-1])),
    "nan_features": lambda a, b: npz(_at(a, "features", (100, 3), np.nan)),
    "inf_raw": lambda a, b: npz(_at(a, "raw", (200, 5), np.inf)),
    "nan_norm_scale": lambda a, b: npz(_at(a, "norm_scale", 4, np.nan)),
    "zero_norm_scale": lambda a, b: npz(_at(a, "norm_scale", 4, 0.0)),
    "clip_index_out_of_range": lambda a, b: npz(_at(a, "clip_index", 300, 3)),
    "frame_index_out_of_range": lambda a, b: npz(_at(a, "frame_index", 300, 99999)),
    "clip_offsets_not_monotone": lambda a, b: npz(_with(a, clip_offsets=a["clip_offsets"][::-1].copy())),
    "clip_offsets_not_ending_at_n": lambda a, b: npz(_at(a, "clip_offsets", -1, len(a["features"]) + 5)),
    "bone_parents_out_of_range": lambda a, b: npz(_at(a, "bone_parents", 5, 999)),
    "bone_parents_cyclic": lambda a, b: npz(_cycle(a)),
    "bad_spec_json": lambda a, b: npz(_with(a, spec_json=np.array("{\"groups\": [1, 2"))),
    "spec_with_fewer_columns": lambda a, b: npz(_spec(a, lambda d: d["groups"].pop())),
    "feature_names_length": lambda a, b: npz(_with(a, feature_names=a["feature_names"][:-1])),
    "format_version_text": lambda a, b: npz(_with(a, format_version=np.array("abc"))),
    "format_version_other": lambda a, b: npz(_with(a, format_version=np.array(7))),
    "zero_quaternion": lambda a, b: npz(_at(a, "pose_rotations", (10, 2), 0.0)),
    "tag_outside_clip": lambda a, b: npz(_with(a, tags_json=np.array(
        '[[{"name": "walk", "start": 10, "end": 99999}]]'))),
    "feature_bone_unknown": lambda a, b: npz(_with(a, feature_bones_json=np.array(
        json.dumps({**json.loads(str(a["feature_bones_json"])), "hips": "NoSuchBone"})))),
    "corrupt_deflate": lambda a, b: corrupt_deflate(a, "raw"),
    "zip_bomb": lambda a, b: zip_bomb(),
    "declared_size_beyond_cap": lambda a, b: declared_size(b, "pose_rotations.npy", 0xFFFFFF00),
    "pickled_object_array": lambda a, b: _object_npz(a),
    "not_a_zip": lambda a, b: b"HIERARCHY\nROOT Hips\n{\n",
    "truncated": lambda a, b: b[:len(b) // 2],
    "empty": lambda a, b: b"",
}

# name -> words the refusal must contain (the key or the part of the file, and what is wrong)
REFUSAL = {
    "missing_key": "lacks raw",
    "missing_skeleton": "lacks bone_names, bone_parents",
    "wrong_dtype": "clip_index must hold whole numbers",
    "wrong_shape": "features must have 2 dimensions",
    "mismatched_rows": "valid has shape",
    "nan_features": "features holds NaN",
    "inf_raw": "raw holds NaN or infinite",
    "nan_norm_scale": "norm_scale holds NaN",
    "zero_norm_scale": "norm_scale holds 0",
    "clip_index_out_of_range": "clip_index holds 3",
    "frame_index_out_of_range": "frame_index holds 99999",
    "clip_offsets_not_monotone": "clip_offsets must rise from 0 to the row count",
    "clip_offsets_not_ending_at_n": "clip_offsets holds 5567",
    "bone_parents_out_of_range": "bone_parents holds 999",
    "bone_parents_cyclic": "bone_parents makes bone 1",
    "bad_spec_json": "spec_json is not a usable feature set",
    "spec_with_fewer_columns": "spec_json describes",
    "feature_names_length": "feature_names has shape",
    "format_version_text": "format_version must hold whole numbers",
    "format_version_other": "uses format 7",
    "zero_quaternion": "pose_rotations holds a zero quaternion",
    "tag_outside_clip": "tags_json holds a bad tag",
    "feature_bone_unknown": "feature_bones_json names 'NoSuchBone'",
    "corrupt_deflate": "raw.npy is damaged",
    "zip_bomb": "declares 268.4 MB",
    "declared_size_beyond_cap": "more than the add-on inflates",
    "pickled_object_array": "clip_names.npy holds Python objects",
    "not_a_zip": "not a .npz archive",
    "truncated": "not a readable .npz archive",
    "empty": "file is empty",
}
INCONSISTENT = {k: (_MAKERS[k], REFUSAL[k]) for k in _MAKERS}


# ------------------------------------------------------------------------------ fuzzing


def _flip(data, rng, lo, hi, count):
    out = bytearray(data)
    for pos in rng.integers(lo, hi, size=count):
        out[pos] ^= int(rng.integers(1, 256))
    return bytes(out)


def _mutate_array(x, rng):
    """One random edit of one array: shape, values, kind of value."""
    x = np.array(x, copy=True)
    op = int(rng.integers(0, 9))
    if op == 0 and x.ndim >= 1 and x.shape[0] > 1:
        return x[:-int(rng.integers(1, min(3, x.shape[0])))]                    # fewer rows
    if op == 1 and x.ndim >= 1:
        return np.concatenate([x, x[..., -1:]], axis=-1)                      # one more on the last axis
    if op == 2:
        return x.reshape(-1) if x.ndim != 1 else x.reshape(1, -1)              # other dimensions
    if op == 3 and x.dtype.kind == "f" and x.size:
        x.flat[int(rng.integers(0, x.size))] = rng.choice([np.nan, np.inf, -np.inf, 1e30])
        return x
    if op == 4 and x.dtype.kind in "iu" and x.size:
        x.flat[int(rng.integers(0, x.size))] = rng.choice([-7, 2 ** 30, x.size + 3, 2])
        return x
    if op == 5:
        kinds = [np.float32, np.float64, np.int32, np.int64, np.uint8, bool]
        try:
            return x.astype(kinds[int(rng.integers(0, len(kinds)))])
        except (TypeError, ValueError):
            return np.zeros(x.shape, dtype=np.float64)
    if op == 6 and x.dtype.kind == "U":
        text = str(x.reshape(-1)[0]) if x.size else ""
        cut = int(rng.integers(0, len(text) + 1))
        garbage = "".join(chr(int(c)) for c in rng.integers(32, 127, size=int(rng.integers(0, 12))))
        return np.array(text[:cut] + garbage).reshape(x.shape if x.ndim == 0 else (1,) * x.ndim)
    if op == 7 and x.ndim >= 1 and x.shape[0] > 1:
        return x[rng.permutation(x.shape[0])]                                  # rows shuffled
    if op == 8 and x.size:
        return np.array(x.reshape(-1)[0])                                       # a scalar
    if x.size and x.dtype.kind in "biuf":
        x.flat[int(rng.integers(0, x.size))] = 0
    return x


def fuzz_cases(base_arrays, base_bytes, count=100, seed=20240611):
    """``count`` (label, bytes) pairs of deterministic mutations of a database file."""
    rng = np.random.default_rng(seed)
    keys = sorted(base_arrays)
    with zipfile.ZipFile(io.BytesIO(base_bytes)) as z:
        infos = z.infolist()
    directory = base_bytes.find(b"PK\x01\x02")
    size = len(base_bytes)
    cases = []
    for i in range(count):
        family = i % 10
        if family in (0, 1):
            n = int(rng.integers(1, 9))
            cases.append(("flip %d bytes anywhere" % n, _flip(base_bytes, rng, 0, size, n)))
        elif family == 2:
            cases.append(("flip bytes of the zip directory", _flip(base_bytes, rng, directory, size,
                                                                   int(rng.integers(1, 5)))))
        elif family == 3:
            info = infos[int(rng.integers(0, len(infos)))]
            lo = info.header_offset
            cases.append(("flip bytes in the headers of %s" % info.filename,
                          _flip(base_bytes, rng, lo, min(size, lo + 30 + len(info.filename) + 128),
                                int(rng.integers(1, 4)))))
        elif family == 4:
            cut = int(rng.integers(0, size))
            cases.append(("truncated at %d bytes" % cut, base_bytes[:cut]))
        else:
            arrays = dict(base_arrays)
            labels = []
            for _ in range(int(rng.integers(1, 4))):
                key = keys[int(rng.integers(0, len(keys)))]
                if rng.random() < 0.15:
                    arrays.pop(key, None)
                    labels.append("drop " + key)
                elif key in arrays:
                    for _try in range(5):          # some edits leave an array as it was
                        edited = _mutate_array(arrays[key], rng)
                        if edited.dtype != arrays[key].dtype or edited.shape != arrays[key].shape \
                                or not np.array_equal(edited, arrays[key], equal_nan=edited.dtype.kind == "f"):
                            break
                    arrays[key] = edited
                    labels.append("edit " + key)
            compressed = rng.random() < 0.12
            cases.append(("%s (%s)" % (", ".join(labels), "compressed" if compressed else "stored"),
                          npz(arrays, compressed)))
    return cases
