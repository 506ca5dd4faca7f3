"""Checking a motion-matching database completely before anything uses it.

A database arrives as arrays (README, "The database file"): N rows, D feature
columns, C clips, J bones. :func:`check_layout` checks that every key is there
with the right kind of values and a shape that agrees with the others, from
shapes alone (so a file's .npy headers can be checked before its data is
inflated); :func:`check_values` then checks the values: finite and of sane
size, index ranges, clip offsets, the feature set against the columns, the
skeleton, quaternions, tags. :func:`read_database` does both on the bytes of a
.npz file, reading it with :mod:`core.io.npz_reader`'s caps.

``complete=False`` asks only for the arrays of a core
:class:`core.database.features.Database`; the add-on needs the complete file (skeleton,
poses, root motion, tags), which is the default. Every problem raises
:class:`DatabaseError` with one sentence naming the key and what is wrong.
"""

import json

import numpy as np

from . import tags as core_tags
from .features import (
    DATABASE_FORMAT_VERSION,
    Database,
    MIN_GROUP_SCALE,
    FeatureError,
    FeatureSpec,
    feature_names,
    feature_weights,
)
from ..io.npz_reader import NpzArchive

__all__ = ["DatabaseError", "ADDON_FORMAT", "CORE_LAYOUT", "CONTACT_LAYOUT", "ADDON_LAYOUT", "OPTIONAL_LAYOUT",
           "MAX_ABS_VALUE", "MAX_FPS", "FEATURE_BONE_KEYS", "layout", "check_layout", "check_values", "check_arrays",
           "read_database"]

ADDON_FORMAT = "motion_matching.database/1"

# Stored numbers beyond this (metres, seconds, normalised features) are refused:
# far beyond any real take, and small enough that squares and sums stay finite.
MAX_ABS_VALUE = 1e9
MAX_FPS = 10000.0
FEATURE_BONE_KEYS = ("hips", "left_foot", "right_foot", "left_toe", "right_toe", "root")

# key: (kinds of value, shape); a shape lists sizes by name (N, D, C, J, "C+1") or number.
CORE_LAYOUT = {
    "format_version": ("i", ()),
    "spec_json": ("U", ()),
    "features": ("f", ("N", "D")),
    "raw": ("f", ("N", "D")),
    "norm_mean": ("f", ("D",)),
    "norm_scale": ("f", ("D",)),
    "clip_index": ("i", ("N",)),
    "frame_index": ("i", ("N",)),
    "valid": ("b", ("N",)),
    "excluded": ("b", ("N",)),
    "clip_names": ("U", ("C",)),
    "clip_fps": ("f", ("C",)),
    "clip_offsets": ("i", ("C+1",)),
}
CONTACT_LAYOUT = {
    "contacts": ("b", ("N", 2)),
    "contact_joints": ("U", (2,)),
}
ADDON_LAYOUT = {
    "format": ("U", ()),
    "weights": ("f", ("D",)),
    "feature_names": ("U", ("D",)),
    "bone_names": ("U", ("J",)),
    "bone_parents": ("i", ("J",)),
    "bone_rest": ("f", ("J", 4, 4)),
    "bone_offsets": ("f", ("J", 4, 4)),
    "feature_bones_json": ("U", ()),
    "pose_rotations": ("f", ("N", "J", 4)),
    "pose_locations": ("f", ("N", "J", 3)),
    "root_positions": ("f", ("N", 3)),
    "root_facings": ("f", ("N", 2)),
    "root_quats": ("f", ("N", 4)),
    "toe_positions": ("f", ("N", 2, 3)),
    "foot_positions": ("f", ("N", 2, 3)),
    "clip_actions": ("U", ("C",)),
    "clip_armatures": ("U", ("C",)),
    "clip_frame_start": ("f", ("C",)),
    "tags_json": ("U", ()),
    "fingerprint": ("U", ()),
}

# Keys a database may hold (databases written before them lack them).
OPTIONAL_LAYOUT = {
    "clip_mirrored": ("b", ("C",)),   # True for the clips that are the mirror image of a take (Mirror Takes)
    # The database's armature as a bake onto another rig reads it (in a file without that armature):
    "source_name": ("U", ()),
    "source_matrix_world": ("f", (4, 4)),
    "source_bone_lengths": ("f", ("J",)),
    "source_mapping_json": ("U", ()),
    "source_tpose": ("f", ("J", 7)),          # armature-space rotation (w, x, y, z) and head per bone
    "source_tpose_known": ("b", ("J",)),      # False: the T-pose does not hold that bone
    "source_tpose_words": ("U", ()),
    "source_notes_json": ("U", ()),
}

_KINDS = {"i": ("iu", "whole numbers"), "f": ("f", "floating-point numbers"), "b": ("b", "true/false flags"),
          "U": ("U", "text")}
_SIZE_WORDS = {"N": "rows (features has N)", "D": "feature columns (features has D)",
               "C": "clips (clip_names has C)", "J": "bones (bone_names has J)",
               "C+1": "clips plus one (clip_names has C)"}
# Where each size is read from: (key, axis).
_SIZE_SOURCES = {"N": ("features", 0), "D": ("features", 1), "C": ("clip_names", 0), "J": ("bone_names", 0)}


class DatabaseError(FeatureError):
    """A stored database is incomplete or inconsistent."""


def layout(complete=True):
    """{key: (kind, shape)} of every key a database must hold (``complete``: the add-on's file)."""
    out = dict(CORE_LAYOUT)
    if complete:
        out.update(CONTACT_LAYOUT)
        out.update(ADDON_LAYOUT)
    return out


def known_keys():
    return set(CORE_LAYOUT) | set(CONTACT_LAYOUT) | set(ADDON_LAYOUT) | set(OPTIONAL_LAYOUT)


def _bad(key, problem):
    return DatabaseError("The database's %s %s." % (key, problem))


# --------------------------------------------------------------------------- layout


def check_layout(shapes, complete=True):
    """Check keys, kinds of value and shapes; ``shapes`` is ``{key: (shape, dtype)}``.
    Returns the sizes ``{"N", "D", "C", "J"}`` (J only when the skeleton is there)."""
    want = layout(complete)
    missing = [k for k in want if k not in shapes]
    if not complete and ("contacts" in shapes) != ("contact_joints" in shapes):
        missing += [k for k in CONTACT_LAYOUT if k not in shapes]
    if missing:
        raise DatabaseError("The database lacks %s; it was not written by this add-on or is damaged. "
                            "Rebuild the database." % ", ".join(missing))
    checked = dict(want)
    checked.update({k: v for k, v in CONTACT_LAYOUT.items() if k in shapes})
    checked.update({k: v for k, v in OPTIONAL_LAYOUT.items() if k in shapes})
    for key, (kind, shape) in checked.items():
        dims, dtype = shapes[key]
        kinds, words = _KINDS[kind]
        if dtype.kind not in kinds or dtype.fields is not None or dtype.subdtype is not None:
            raise _bad(key, "must hold %s, but it holds values of type %s" % (words, dtype))
        if len(dims) != len(shape):
            raise _bad(key, "must have %d dimension%s, but it has %d (shape %s)"
                       % (len(shape), "" if len(shape) == 1 else "s", len(dims), tuple(dims)))
    sizes = {}
    for name, (key, axis) in _SIZE_SOURCES.items():
        if key in checked:
            sizes[name] = int(shapes[key][0][axis])
            if sizes[name] < 1:
                raise _bad(key, "is empty: a database needs at least one row, feature column, clip and bone")
    sizes["C+1"] = sizes["C"] + 1
    for key, (_kind, shape) in checked.items():
        dims = tuple(int(d) for d in shapes[key][0])
        for axis, (have, want_size) in enumerate(zip(dims, shape)):
            expect = sizes[want_size] if isinstance(want_size, str) else want_size
            if have != expect:
                what = (" %s" % _SIZE_WORDS[want_size]) if isinstance(want_size, str) else ""
                raise _bad(key, "has shape %s, but its axis %d must have %d%s; the arrays are inconsistent"
                           % (dims, axis, expect, what))
    return {k: v for k, v in sizes.items() if k != "C+1"}


# --------------------------------------------------------------------------- values


def _first(mask):
    """The index of the first True of ``mask`` as a plain tuple/int, for messages."""
    at = np.argwhere(mask)[0]
    return int(at[0]) if len(at) == 1 else tuple(int(i) for i in at)


def _finite(arrays, key):
    a = arrays[key]
    if a.size == 0:
        return
    lo, hi = a.min(), a.max()   # NaN and infinities show up in these
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise _bad(key, "holds NaN or infinite values (first at %s)" % (_first(~np.isfinite(a)),))
    if max(-float(lo), float(hi)) > MAX_ABS_VALUE:
        raise _bad(key, "holds values beyond %g (first at %s)" % (MAX_ABS_VALUE, _first(np.abs(a) > MAX_ABS_VALUE)))


def _int_range(arrays, key, lo, hi, what):
    """Check lo <= every value <= hi and return the values as int64."""
    a = arrays[key]
    if a.size:
        low, high = int(a.min()), int(a.max())
        if low < lo:
            raise _bad(key, "holds %d (at index %s), %s" % (low, _first(a == a.min()), what))
        if high > hi:
            raise _bad(key, "holds %d (at index %s), %s" % (high, _first(a == a.max()), what))
    return a.astype(np.int64)


def _text(arrays, key):
    return str(arrays[key][()])


def _json(arrays, key):
    try:
        return json.loads(_text(arrays, key))
    except (ValueError, RecursionError) as ex:
        raise _bad(key, "is not readable JSON (%s)" % (str(ex)[:120] if not isinstance(ex, RecursionError)
                                                       else "it is nested too deeply")) from None


def _spec(arrays):
    try:
        return FeatureSpec.from_json(_text(arrays, "spec_json"))
    except FeatureError as ex:
        raise _bad("spec_json", "is not a usable feature set: %s" % str(ex).rstrip(".")) from None
    except (RecursionError, ValueError, TypeError, OverflowError):
        raise _bad("spec_json", "is not a usable feature set (it is nested too deeply or holds numbers "
                   "out of range)") from None


def _quaternions(arrays, key):
    q = arrays[key]
    norm2 = np.einsum("...i,...i->...", q, q)
    if not (norm2 > 1e-12).all():
        raise _bad(key, "holds a zero quaternion (at %s); every rotation needs a quaternion of non-zero length"
                   % (_first(~(norm2 > 1e-12)),))


def check_values(arrays, sizes, complete=True):
    """Check the values of arrays whose layout passed :func:`check_layout`.
    Returns the parsed :class:`FeatureSpec`."""
    n, d, c = sizes["N"], sizes["D"], sizes["C"]
    version = int(arrays["format_version"][()])
    if version != DATABASE_FORMAT_VERSION:
        raise DatabaseError("The database uses format %d; this version of the add-on reads format %d. "
                            "Rebuild the database." % (version, DATABASE_FORMAT_VERSION))
    spec = _spec(arrays)
    if spec.dim != d:
        raise _bad("spec_json", "describes %d feature columns, but features has %d; the arrays are inconsistent"
                   % (spec.dim, d))
    for key in ("features", "raw", "norm_mean", "norm_scale", "clip_fps"):
        _finite(arrays, key)
    scale = arrays["norm_scale"].astype(np.float64)
    if not (scale >= MIN_GROUP_SCALE).all():
        k = _first(~(scale >= MIN_GROUP_SCALE))
        raise _bad("norm_scale", "holds %g at column %d; every scale must be at least %g (features divide by it)"
                   % (scale[k], k, MIN_GROUP_SCALE))
    # features = (raw - mean) / scale * weights, stored as float32.
    with np.errstate(over="ignore", invalid="ignore"):
        expected = ((arrays["raw"].astype(np.float64) - arrays["norm_mean"].astype(np.float64)) / scale
                    * feature_weights(spec))
        off = ~(np.abs(arrays["features"].astype(np.float64) - expected)
                <= 1e-5 * np.maximum(1.0, np.abs(expected))) | ~np.isfinite(expected)
    if off.any():
        raise _bad("features", "do not equal (raw - norm_mean) / norm_scale x the feature set's weights "
                   "(first at %s); the arrays are inconsistent" % (_first(off),))
    # Clips: offsets rise from 0 to N, one clip number and frame per row.
    offsets = _int_range(arrays, "clip_offsets", 0, n, "outside the rows 0-%d" % n)
    lengths = np.diff(offsets)
    if offsets[0] != 0 or offsets[-1] != n or (lengths < 1).any():
        raise _bad("clip_offsets", "must rise from 0 to the row count %d with at least one row per clip, "
                   "but it is %s" % (n, _short(offsets)))
    clip_index = _int_range(arrays, "clip_index", 0, c - 1, "but the database has %d clip%s (0-%d)"
                            % (c, "" if c == 1 else "s", c - 1))
    expect_clip = np.repeat(np.arange(c), lengths)
    if (clip_index != expect_clip).any():
        r = _first(clip_index != expect_clip)
        raise _bad("clip_index", "puts row %d in clip %d, but clip_offsets puts it in clip %d"
                   % (r, clip_index[r], expect_clip[r]))
    frame_index = _int_range(arrays, "frame_index", 0, n - 1, "outside the frames of its clip")
    expect_frame = np.arange(n) - np.repeat(offsets[:-1], lengths)
    if (frame_index != expect_frame).any():
        r = _first(frame_index != expect_frame)
        raise _bad("frame_index", "gives frame %d for row %d, which is frame %d of its clip"
                   % (frame_index[r], r, expect_frame[r]))
    valid, excluded = arrays["valid"], arrays["excluded"]
    if (valid & excluded).any():
        raise _bad("valid", "offers row %d, which excluded leaves out" % _first(valid & excluded))
    if not valid.any():
        raise _bad("valid", "offers no row, so a search would have nothing to return")
    fps = arrays["clip_fps"]
    if not ((fps > 0) & (fps <= MAX_FPS)).all():
        k = _first(~((fps > 0) & (fps <= MAX_FPS)))
        raise _bad("clip_fps", "gives %g frames per second for clip %d; a rate must be above 0 and at most %g"
                   % (fps[k], k, MAX_FPS))
    if complete:
        _check_addon_values(arrays, sizes, spec)
    return spec


def _short(a, k=6):
    items = [str(int(x)) for x in a[:k]]
    return "[" + ", ".join(items) + (", ...]" if len(a) > k else "]")


def _check_addon_values(arrays, sizes, spec):
    j, c = sizes["J"], sizes["C"]
    if _text(arrays, "format") != ADDON_FORMAT:
        raise _bad("format", "is %r; this version of the add-on reads %r" % (_text(arrays, "format")[:60],
                                                                              ADDON_FORMAT))
    # The skeleton: unique names, parents before children (so no cycles).
    names = [str(s) for s in arrays["bone_names"]]
    if any(not s for s in names):
        raise _bad("bone_names", "holds an empty name (bone %d)" % names.index(""))
    if len(set(names)) != len(names):
        dup = next(s for s in names if names.count(s) > 1)
        raise _bad("bone_names", "lists %s twice" % dup)
    parents = _int_range(arrays, "bone_parents", -1, j - 1, "but a parent is -1 (none) or a bone 0-%d" % (j - 1))
    later = parents >= np.arange(j)
    if later.any():
        b = _first(later)
        raise _bad("bone_parents", "makes bone %d (%s) the child of bone %d; a parent must come before its "
                   "children (which also rules out cycles)" % (b, names[b], parents[b]))
    known = set(names)
    for key in ("bone_rest", "bone_offsets"):
        _finite(arrays, key)
        bottom = arrays[key][:, 3, :]
        if np.abs(bottom - np.array([0.0, 0.0, 0.0, 1.0])).max() > 1e-6:
            raise _bad(key, "holds a matrix whose last row is not 0, 0, 0, 1 (bone %d)"
                       % _first(np.abs(bottom - np.array([0.0, 0.0, 0.0, 1.0])).max(axis=1) > 1e-6))
    bones = _json(arrays, "feature_bones_json")
    if not isinstance(bones, dict):
        raise _bad("feature_bones_json", "must be a JSON object naming the feature bones")
    for key in FEATURE_BONE_KEYS:
        if not isinstance(bones.get(key), str) or bones[key] not in known:
            raise _bad("feature_bones_json", "names %r as the %s, which is not a bone of bone_names"
                       % (bones.get(key), key.replace("_", " ")))
    for b in spec.bones():
        if b not in known:
            raise _bad("spec_json", "reads bone %s, which is not a bone of bone_names" % b)
    if [str(s) for s in arrays["feature_names"]] != feature_names(spec):
        raise _bad("feature_names", "do not match the columns the feature set in spec_json describes")
    _finite(arrays, "weights")
    if not np.allclose(arrays["weights"].astype(np.float64), feature_weights(spec), rtol=1e-9, atol=0.0):
        raise _bad("weights", "do not match the weights of the feature set in spec_json")
    joints = [str(s) for s in arrays["contact_joints"]]
    for b in joints:
        if b not in known:
            raise _bad("contact_joints", "names %s, which is not a bone of bone_names" % b)
    if joints != [bones["left_toe"], bones["right_toe"]]:
        raise _bad("contact_joints", "must be the left and right toes of feature_bones_json (%s, %s), not %s"
                   % (bones["left_toe"], bones["right_toe"], ", ".join(joints)))
    # Poses and root motion.
    for key in ("pose_rotations", "pose_locations", "root_positions", "root_facings", "root_quats",
                "toe_positions", "foot_positions", "clip_frame_start"):
        _finite(arrays, key)
    _quaternions(arrays, "pose_rotations")
    _quaternions(arrays, "root_quats")
    # Tags: one list per clip, each tag inside its clip.
    tags = _json(arrays, "tags_json")
    if not isinstance(tags, list) or len(tags) != c:
        raise _bad("tags_json", "must list the tags of each of the %d clip%s" % (c, "" if c == 1 else "s"))
    offsets = arrays["clip_offsets"].astype(np.int64)
    clip_names = [str(s) for s in arrays["clip_names"]]
    for k, clip in enumerate(tags):
        if not isinstance(clip, list) or not all(
                isinstance(t, dict) and {"name", "start", "end"} <= set(t) for t in clip):
            raise _bad("tags_json", "must give each tag of clip %d a name, a start and an end" % k)
        try:
            core_tags.validate_tags([(t["name"], t["start"], t["end"]) for t in clip],
                                    int(offsets[k + 1] - offsets[k]), clip_names[k])
        except core_tags.TagError as ex:
            raise _bad("tags_json", "holds a bad tag: %s" % str(ex).rstrip(".")) from None


# --------------------------------------------------------------------------- entry points


def check_arrays(arrays, complete=True):
    """Check a dict of arrays (or an opened .npz); returns ``(arrays as a dict of
    numpy arrays, sizes, spec)``. Keys this module does not know are dropped."""
    out = {}
    for key in arrays.keys():
        if key in known_keys():
            try:
                out[key] = np.asarray(arrays[key])
            except ValueError as ex:   # np.load refusing a pickled member
                raise _bad(key, "cannot be read without unpickling Python objects (%s)" % str(ex)[:80]) from None
            if out[key].dtype.hasobject:
                raise _bad(key, "holds Python objects; a database holds only numbers, flags and text")
    _check_version_first(out.get("format_version"))
    sizes = check_layout({k: (a.shape, a.dtype) for k, a in out.items()}, complete)
    spec = check_values(out, sizes, complete)
    return out, sizes, spec


def _check_version_first(a):
    """A whole-number format_version other than ours is reported before any layout
    problem (another format may well have another layout)."""
    if a is None or a.shape != () or a.dtype.kind not in "iu":
        return
    if int(a[()]) != DATABASE_FORMAT_VERSION:
        raise DatabaseError("The database uses format %d; this version of the add-on reads format %d. "
                            "Rebuild the database." % (int(a[()]), DATABASE_FORMAT_VERSION))


def database_from_arrays(arrays, complete=False):
    """A :class:`core.database.features.Database` from a dict of arrays (or an opened .npz),
    checked completely first (raises :class:`DatabaseError` with a sentence)."""
    checked, _sizes, _spec = check_arrays(arrays, complete=complete)
    return Database.from_arrays(checked)


def read_database(data, complete=True):
    """The arrays of a database .npz held in memory, checked completely.
    Raises :class:`DatabaseError` or :class:`core.io.npz_reader.NpzError` with a sentence."""
    with NpzArchive(data) as npz:
        wanted = [k for k in npz.keys if k in known_keys()]
        shapes = {k: npz.header(k) for k in wanted}
        if "format_version" in shapes:
            shape, dtype = shapes["format_version"]
            if shape == () and dtype.kind in "iu":
                _check_version_first(npz.read("format_version"))
        sizes = check_layout(shapes, complete)
        arrays = {k: npz.read(k) for k in wanted}
    spec = check_values(arrays, sizes, complete)
    return arrays, spec

