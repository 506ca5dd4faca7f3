"""What a motion-matching database file holds: its keys, their kinds of value and shapes.

A database arrives as arrays (README, "The database file"): N rows, D feature
columns, C clips, J bones. :func:`check_layout` checks that every key is there
with the right kind of values and a shape that agrees with the others, from
shapes alone (so a file's .npy headers can be checked before its data is
inflated); :mod:`core.database.checks` then checks the values.

``complete=False`` asks only for the arrays of a core
:class:`core.database.feature_database.Database`; the add-on needs the complete
file (skeleton, poses, root motion, tags), which is the default. Every problem
raises :class:`DatabaseError` with one sentence naming the key and what is wrong.
"""

from .feature_spec import FeatureError

__all__ = ["DatabaseError", "ADDON_FORMAT", "CORE_LAYOUT", "CONTACT_LAYOUT", "ADDON_LAYOUT", "OPTIONAL_LAYOUT",
           "layout", "known_keys", "bad_key", "check_layout"]

ADDON_FORMAT = "motion_matching.database/1"

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


def bad_key(key, problem):
    """The error for ``key``: "The database's <key> <problem>."."""
    return DatabaseError("The database's %s %s." % (key, problem))


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
            raise bad_key(key, "must hold %s, but it holds values of type %s" % (words, dtype))
        if len(dims) != len(shape):
            raise bad_key(key, "must have %d dimension%s, but it has %d (shape %s)"
                       % (len(shape), "" if len(shape) == 1 else "s", len(dims), tuple(dims)))
    sizes = {}
    for name, (key, axis) in _SIZE_SOURCES.items():
        if key in checked:
            sizes[name] = int(shapes[key][0][axis])
            if sizes[name] < 1:
                raise bad_key(key, "is empty: a database needs at least one row, feature column, clip and bone")
    sizes["C+1"] = sizes["C"] + 1
    for key, (_kind, shape) in checked.items():
        dims = tuple(int(d) for d in shapes[key][0])
        for axis, (have, want_size) in enumerate(zip(dims, shape)):
            expect = sizes[want_size] if isinstance(want_size, str) else want_size
            if have != expect:
                what = (" %s" % _SIZE_WORDS[want_size]) if isinstance(want_size, str) else ""
                raise bad_key(key, "has shape %s, but its axis %d must have %d%s; the arrays are inconsistent"
                           % (dims, axis, expect, what))
    return {k: v for k, v in sizes.items() if k != "C+1"}
