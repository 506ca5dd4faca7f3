"""Where the database lives: the bytes of its .npz file, kept on the scene.

The database is stored in the .blend exactly as the documented .npz file that
export writes (an uncompressed ``np.savez``), in one ID property of the scene.
Saving, reopening, exporting and importing therefore all handle the same bytes,
and a loaded database is parsed once and cached by its fingerprint.
"""

import hashlib
import io
import zipfile

import numpy as np

from ..core.features import Database
from ..core.errors import MotionMatchingError

PROP = "motion_matching_database"
PROP_ID = "motion_matching_database_sha1"

_cache = {}


def to_bytes(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def from_bytes(data):
    """Arrays of an .npz held in memory (plain numpy, no pickles)."""
    try:
        with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as ex:
        raise MotionMatchingError("The database file cannot be read as an .npz archive (%s)." % ex) from None


def has_database(scene):
    return PROP in scene


def store(scene, data):
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
    _cache.clear()


def clear(scene):
    for key in (PROP, PROP_ID):
        if key in scene:
            del scene[key]
    _cache.clear()


def raw_bytes(scene):
    if PROP not in scene:
        raise MotionMatchingError("The scene has no motion-matching database: build one first.")
    return bytes(scene[PROP])


def load(scene):
    """(Database, arrays dict) of the scene's stored database, parsed once."""
    key = scene.get(PROP_ID) if PROP in scene else None
    hit = _cache.get(key) if key else None
    if hit is None:
        data = raw_bytes(scene)
        key = hashlib.sha1(data).hexdigest()
        arrays = from_bytes(data)
        hit = (Database.from_arrays(arrays), arrays)
        _cache.clear()
        _cache[key] = hit
    return hit
