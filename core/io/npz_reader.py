"""Reading a .npz archive held in memory without trusting it.

A .npz is a zip of .npy members. ``np.load`` inflates whatever a member's zip
entry holds and allocates whatever its .npy header declares, so a small file can
ask for gigabytes. Here, before any array data is inflated:

- the zip directory must list members stored or deflated (no encryption, no
  other compression, no name twice), and the sizes it declares, added over every
  member, must stay within :func:`inflate_cap` of the archive's own size;
- a member's .npy header (the first bytes, inflated alone) must describe plain
  numbers, flags or text (never Python objects, i.e. no pickles) whose size
  matches the member's declared size exactly.

Inflating then stops at the declared size, and a member that ends early or
fails its checksum is refused. Every problem is a :class:`NpzError` sentence.
Members whose name does not end in ``.npy`` are never read.
"""

import io
import math
import zipfile
import zlib

import numpy as np

from ..errors import MotionMatchingError

__all__ = ["NpzError", "NpzArchive", "inflate_cap", "MAX_INFLATED_BYTES", "MAX_RATIO", "RATIO_FLOOR_BYTES"]

# The arrays a .npz declares may add up to at most MAX_RATIO times the archive's
# size (a floor of RATIO_FLOOR_BYTES for small archives) and never more than
# MAX_INFLATED_BYTES. np.savez stores arrays uncompressed (ratio 1); the sample
# take's database saved with np.savez_compressed has a ratio of 1.5.
MAX_INFLATED_BYTES = 2 * 1024 ** 3
MAX_RATIO = 32
RATIO_FLOOR_BYTES = 64 * 1024 ** 2
MAX_MEMBERS = 4096
MAX_HEADER_BYTES = 10000          # numpy's own limit for a .npy header
_CHUNK = 1 << 20

# What a damaged zip can raise while it is opened or read.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
               NotImplementedError, RuntimeError, KeyError, IndexError, OverflowError)


class NpzError(MotionMatchingError):
    """The bytes are not a .npz archive this add-on will read."""


def inflate_cap(archive_bytes):
    """Most bytes of arrays an archive of ``archive_bytes`` bytes may declare."""
    return min(MAX_INFLATED_BYTES, max(RATIO_FLOOR_BYTES, MAX_RATIO * int(archive_bytes)))


def _mb(n):
    return "%.1f MB" % (n / 1e6)


class NpzArchive:
    """The .npy members of a .npz held in memory, read one at a time.

    ``keys`` lists the member names without ``.npy``; :meth:`header` gives a
    member's (shape, dtype) from its header alone; :meth:`read` inflates it.
    Use as a context manager or call :meth:`close`.
    """

    def __init__(self, data):
        data = bytes(data)
        if not data:
            raise NpzError("The file is empty.")
        if not data.startswith(b"PK"):
            raise NpzError("The file is not a .npz archive (it does not start like a zip file).")
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except _ZIP_ERRORS as ex:
            raise NpzError("The file is not a readable .npz archive (%s)." % _reason(ex)) from None
        try:
            self._check_directory(infos, len(data))
        except NpzError:
            self._zip.close()
            raise
        self._infos = {i.filename[:-4]: i for i in infos if i.filename.endswith(".npy")}
        self._headers = {}

    # ---- the zip directory

    @staticmethod
    def _check_directory(infos, size):
        if len(infos) > MAX_MEMBERS:
            raise NpzError("The archive lists %d members; a database has fewer than %d." % (len(infos), MAX_MEMBERS))
        seen = set()
        for info in infos:
            name = info.filename
            if name in seen:
                raise NpzError("The archive holds %s twice." % name)
            seen.add(name)
            if info.flag_bits & 0x1:
                raise NpzError("The archive's member %s is encrypted." % name)
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise NpzError("The archive's member %s uses compression method %d; only stored or deflated "
                               "members (what numpy writes) are read." % (name, info.compress_type))
        declared = sum(int(i.file_size) for i in infos)
        cap = inflate_cap(size)
        if declared > cap:
            raise NpzError(
                "The archive declares %s of arrays in a file of %s, more than the add-on inflates (at most "
                "%d times the file's size, and never more than %g GiB); it is not a database this add-on wrote."
                % (_mb(declared), _mb(size), MAX_RATIO, MAX_INFLATED_BYTES / 1024 ** 3))

    # ---- members

    @property
    def keys(self):
        return list(self._infos)

    def __contains__(self, key):
        return key in self._infos

    def header(self, key):
        """(shape, dtype) of member ``key``, read from its .npy header only."""
        return self._header(key)[:2]

    def _header(self, key):
        if key in self._headers:
            return self._headers[key]
        info = self._infos[key]
        try:
            with self._zip.open(info) as fh:
                head = fh.read(min(int(info.file_size), MAX_HEADER_BYTES + 16))
        except _ZIP_ERRORS as ex:
            raise NpzError("The archive's member %s is damaged (%s)." % (info.filename, _reason(ex))) from None
        fp = io.BytesIO(head)
        try:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp, max_header_size=MAX_HEADER_BYTES)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp, max_header_size=MAX_HEADER_BYTES)
            else:
                raise ValueError("format version %d.%d is not read" % version)
        except (ValueError, SyntaxError, TypeError, RecursionError, OverflowError, MemoryError) as ex:
            raise NpzError("The archive's member %s is not a readable .npy array (%s)."
                           % (info.filename, _reason(ex))) from None
        if dtype.hasobject:
            raise NpzError("The archive's member %s holds Python objects (a pickle); a database holds only "
                           "numbers, flags and text, and pickles are never loaded." % info.filename)
        if any(d < 0 for d in shape):
            raise NpzError("The archive's member %s declares a negative size." % info.filename)
        offset = fp.tell()
        nbytes = math.prod(shape) * dtype.itemsize
        if offset + nbytes != int(info.file_size):
            raise NpzError("The archive's member %s is damaged: its header describes %d bytes of data but the "
                           "archive lists %d." % (info.filename, nbytes, int(info.file_size) - offset))
        self._headers[key] = (tuple(shape), dtype, bool(fortran), offset, nbytes)
        return self._headers[key]

    def read(self, key):
        """Member ``key`` as a (writable) numpy array."""
        shape, dtype, fortran, offset, nbytes = self._header(key)
        info = self._infos[key]
        buf = bytearray(nbytes)
        got = 0
        try:
            with self._zip.open(info) as fh:
                fh.read(offset)
                while got < nbytes:
                    chunk = fh.read(min(_CHUNK, nbytes - got))
                    if not chunk:
                        break
                    buf[got:got + len(chunk)] = chunk
                    got += len(chunk)
                extra = fh.read(1)   # also lets zipfile compare the checksum
        except _ZIP_ERRORS as ex:
            raise NpzError("The archive's member %s is damaged (%s)." % (info.filename, _reason(ex))) from None
        if got != nbytes or extra:
            raise NpzError("The archive's member %s is damaged: it does not hold the %d bytes its header "
                           "describes." % (info.filename, nbytes))
        if dtype.itemsize == 0:
            return np.zeros(shape, dtype=dtype)
        flat = np.frombuffer(buf, dtype=dtype, count=math.prod(shape))
        if fortran:
            return flat.reshape(shape[::-1]).transpose()
        return flat.reshape(shape)

    def close(self):
        self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _reason(ex):
    text = str(ex).strip() or type(ex).__name__
    return text[:200]
