"""The MOTION block of a BVH file: every frame's channel values converted with
numpy a chunk at a time, and, when a chunk does not convert, the first bad
line named in a sentence."""

import io
import re
import warnings

import numpy as np

from .bvh_data import BvhError, clip

# Bytes of MOTION text converted at a time (a few thousand frames).
CHUNK_BYTES = 1 << 20

_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True


def _values_per_line(data):
    """Count whitespace-separated tokens on every line of ``data`` (bytes), vectorised:
    find where tokens start, then which line each start falls on."""
    b = np.frombuffer(data, dtype=np.uint8)
    if b.size == 0:
        return np.zeros(0, dtype=np.int64)
    space = _SPACE[b]
    starts = np.flatnonzero(~space[1:] & space[:-1]) + 1
    if not space[0]:
        starts = np.concatenate([[0], starts])
    newlines = np.flatnonzero(b == 10)
    line_of = np.searchsorted(newlines, starts)
    return np.bincount(line_of, minlength=len(newlines) + 1)


def _normal_newlines(data):
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in data else data


def _convert_chunk(data):
    """The rows of one chunk of MOTION text (bytes) as floats, or None when numpy cannot read it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a chunk of blank lines is no error here
            return np.loadtxt(io.BytesIO(data), dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        return None


def parse_motion(raw, start, first_line, frames, n_channels, source, progress=None):
    """The MOTION values (frames, n_channels) from ``raw[start:]``, converted a
    chunk at a time into one array. Returns (values, line of frame 0 or None
    when the block has blank lines). A chunk that fails is scanned to name the bad line."""
    end = len(raw)
    # Every frame needs a line: a declared count beyond the lines left is a truncated file.
    if frames > raw.count(b"\n", start) + 1:
        _diagnose_motion(_normal_newlines(raw[start:]), first_line, frames, 0, n_channels, source)
        raise BvhError("%s is truncated: it declares %d frames." % (source, frames))
    try:
        out = np.empty((frames, n_channels), dtype=np.float64)
    except (MemoryError, ValueError):
        raise BvhError("%s declares %d frames of %d channels: too many to hold in memory."
                       % (source, frames, n_channels)) from None
    row, line, pos, dense = 0, first_line, start, True
    while pos < end:
        stop = min(end, pos + CHUNK_BYTES)
        if stop < end:
            newline = raw.find(b"\n", stop)
            stop = end if newline < 0 else newline + 1
        data = _normal_newlines(raw[pos:stop])
        values = _convert_chunk(data)
        rows = 0 if values is None or values.size == 0 else len(values)
        if (values is None or (rows and values.shape[1] != n_channels) or row + rows > frames
                or not np.isfinite(values).all()):
            _diagnose_motion(data + _normal_newlines(raw[stop:]), line, frames, row, n_channels, source)
            raise BvhError("%s: the MOTION block cannot be read." % source)
        if rows:
            out[row:row + rows] = values
        # Frame k is on line first_line + k while no blank line comes before it.
        end_text = len(data)
        while end_text and data[end_text - 1] in b" \t\r\n\f\v":
            end_text -= 1
        if line != first_line + row or rows != (data.count(b"\n", 0, end_text) + 1 if end_text else 0):
            dense = False
        row += rows
        line += data.count(b"\n")
        pos = stop
        if progress is not None:
            progress((pos - start) / max(1, end - start))
    if row < frames:
        raise BvhError("%s is truncated: it declares %d frames but the MOTION block holds %d." % (source, frames, row))
    return out, (first_line if dense else None)


_NUMBER = re.compile(rb"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$", re.IGNORECASE)


def _diagnose_motion(data, first_line, frames, rows_before, n_channels, source):
    """Raise a BvhError naming the first line of ``data`` (MOTION text from line
    ``first_line``, after ``rows_before`` good frames) that is wrong."""
    left = frames - rows_before
    per_line = _values_per_line(data)
    line_numbers = np.nonzero(per_line)[0]
    counts = per_line[line_numbers]
    wrong = np.nonzero(counts != n_channels)[0]
    if wrong.size and wrong[0] < left:
        k = wrong[0]
        raise BvhError("Line %d of %s has %d values; the hierarchy has %d channels."
                       % (first_line + line_numbers[k], source, counts[k], n_channels))
    if len(line_numbers) < left:
        raise BvhError("%s is truncated: it declares %d frames but the MOTION block holds %d."
                       % (source, frames, rows_before + len(line_numbers)))
    if len(line_numbers) > left:
        raise BvhError("%s declares %d frames but the MOTION block holds %d lines of values (line %d is extra)."
                       % (source, frames, rows_before + len(line_numbers), first_line + line_numbers[left]))
    starts = np.concatenate([[0], np.cumsum(counts)])
    tokens = data.split()
    for row in range(len(line_numbers)):
        for tok in tokens[starts[row]:starts[row + 1]]:
            value = float(tok) if _NUMBER.match(tok) else None
            if value is None or not np.isfinite(value):
                what = "is not a number" if value is None else "is not a finite number"
                raise BvhError("Line %d of %s: '%s' %s." % (
                    first_line + line_numbers[row], source, clip(tok.decode("utf-8", "replace")), what))
