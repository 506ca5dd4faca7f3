"""Where the database lives: the bytes of its .npz file, kept on the scene.

The database is stored in the .blend exactly as the documented .npz file that
export writes (an uncompressed ``np.savez``), in one ID property of the scene,
with the SHA-1 of those bytes beside it. Saving, reopening, exporting and
importing therefore all handle the same bytes.

Bytes are checked completely (core.database.checks) before they are stored and
again whenever they are parsed, so a .blend carrying damaged bytes gives a
sentence, not a traceback. The parsed database, and everything derived from it
(the search index), is cached by the SHA-1 of the bytes it was parsed from: any
other bytes, even of a database with the same input fingerprint, are parsed and
indexed afresh. The hash stored beside the bytes (written with them by
:func:`store`; undo and reopening restore both together) only selects a cache
entry that was parsed from bytes with exactly that hash; the cache is dropped
when a file is opened.
"""

import hashlib
import io

import numpy as np

from ...core.database.motion_database import MotionDatabase
from ...core.errors import MotionMatchingError

PROP = "motion_matching_database"
PROP_ID = "motion_matching_database_sha1"
# Set when the database came from Import Database: it is what the bake uses, and
# the file's database list (which did not build it) cannot make it stale.
PROP_IMPORTED = "motion_matching_database_imported"

_cache = {}   # SHA-1 of the stored bytes -> _Entry


class _Entry:
    def __init__(self, database):
        self.database = database
        self.derived = {}


def to_bytes(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def from_bytes(data):
    """The core MotionDatabase of a database .npz held in memory, checked
    completely (plain numpy, no pickles, inflated size capped). Raises
    MotionMatchingError with a sentence."""
    return MotionDatabase.from_npz_bytes(data)


def has_database(scene):
    return PROP in scene


def store(scene, data, imported=False):
    """Keep ``data`` as the scene's database. Callers check the bytes first (import
    reads them with :func:`from_bytes`; a build checks its arrays), so nothing
    unchecked replaces a database. ``imported``: it came from a file, not from
    this file's database list."""
    data = bytes(data)
    # Remove first: assigning bytes over an existing bytes property copies
    # only up to the first zero byte in some Blender versions.
    if PROP in scene:
        del scene[PROP]
    scene[PROP] = data
    if len(scene[PROP]) != len(data):
        raise MotionMatchingError("Blender did not keep the whole database (%d of %d bytes)."
                                  % (len(scene[PROP]), len(data)))
    scene[PROP_ID] = hashlib.sha1(data).hexdigest()
    if imported:
        scene[PROP_IMPORTED] = True
    elif PROP_IMPORTED in scene:
        del scene[PROP_IMPORTED]
    _cache.clear()


def is_imported(scene):
    """Whether the scene's database came from Import Database (not built from its list)."""
    return PROP in scene and bool(scene.get(PROP_IMPORTED, False))


def clear(scene):
    for key in (PROP, PROP_ID, PROP_IMPORTED):
        if key in scene:
            del scene[key]
    _cache.clear()


def forget():
    """Drop every parsed database and what was derived from it (a file is being opened)."""
    _cache.clear()


def raw_bytes(scene):
    if PROP not in scene:
        raise MotionMatchingError("The scene has no motion-matching database: build one first.")
    return bytes(scene[PROP])


def _entry(scene):
    stated = scene.get(PROP_ID) if PROP in scene else None
    hit = _cache.get(stated) if isinstance(stated, str) else None
    if hit is not None:
        return hit
    data = raw_bytes(scene)
    key = hashlib.sha1(data).hexdigest()
    hit = _cache.get(key)
    if hit is None:
        try:
            database = from_bytes(data)
        except MotionMatchingError as ex:
            raise MotionMatchingError("The scene's stored database is damaged (rebuild or import it): %s" % ex) \
                from None
        hit = _Entry(database)
        _cache.clear()
        _cache[key] = hit
    return hit


def load(scene):
    """The scene's stored database (a core MotionDatabase), parsed and checked once."""
    return _entry(scene).database


def derived(database, name, make):
    """``make()`` computed once per parsed database: cached with the entry holding
    ``database`` (so keyed by the stored bytes' hash), or computed afresh when
    ``database`` is not the scene's stored database."""
    for entry in _cache.values():
        if entry.database is database:
            if name not in entry.derived:
                entry.derived[name] = make()
            return entry.derived[name]
    return make()


def stored_id(scene):
    """The stored database's hash, as the scene records it ('' without one)."""
    return str(scene.get(PROP_ID, "")) if PROP in scene else ""


def derived_values(database):
    """Everything :func:`derived` holds for ``database`` now ({name: value}; empty
    when it is not the scene's stored database)."""
    for entry in _cache.values():
        if entry.database is database:
            return dict(entry.derived)
    return {}


def add_derived(database, values):
    """Keep ``values`` ({name: value}: what :func:`derived_values` gave for the
    same stored database in another process) with ``database``, as :func:`derived`
    would have made them; names already there keep theirs."""
    for entry in _cache.values():
        if entry.database is database:
            for name, value in values.items():
                entry.derived.setdefault(name, value)
