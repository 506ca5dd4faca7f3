"""Read a BVH file into :class:`~.bvh_data.BvhData`: check that it is text,
then read the hierarchy token by token and the MOTION block with numpy.

The hierarchy is read token by token from the file's bytes, line by line, so a
joint may be called ``Motion``: the MOTION keyword is recognised only where the
grammar expects it (after the last joint's closing brace). The MOTION block,
nearly all of a file, is converted with numpy in chunks of a few megabytes (a
progress callback is told after each); a chunk that does not convert is scanned
to name its bad line.
"""

import os
import re

import numpy as np

from .bvh_data import BvhData, BvhError, clip
from .bvh_hierarchy import motion_header, parse_hierarchy
from .bvh_motion import parse_motion


def read_bvh(path, progress=None):
    """Read and check a BVH file; raise BvhError with a plain sentence.
    ``progress(fraction)`` is called as the MOTION block is converted."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise BvhError("The file %s does not exist." % path) from None
    except IsADirectoryError:
        raise BvhError("%s is a folder, not a BVH file." % path) from None
    except MemoryError:
        raise BvhError("The file %s is too large to read into memory." % path) from None
    except OSError as ex:
        raise BvhError("The file %s cannot be read: %s." % (path, ex.strerror or ex)) from None
    return parse_bvh(raw, source=os.path.basename(str(path)) or str(path), progress=progress)


_BOM = b"\xef\xbb\xbf"
_CONTROL = np.ones(256, dtype=bool)
_CONTROL[32:] = False
_CONTROL[[9, 10, 11, 12, 13]] = False


def _check_text(raw, source):
    """Refuse what is not a text file; return where the text starts (after a UTF-8 byte-order mark)."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise BvhError("%s is saved as UTF-16 text; save it as UTF-8 or plain ASCII." % source)
    start = len(_BOM) if raw.startswith(_BOM) else 0
    # Empty or only blanks (looked at in pieces: no copy of a large file).
    if all(not raw[k:k + 65536].strip() for k in range(start, len(raw), 65536)):
        raise BvhError("%s is empty." % source)
    head = raw[start:start + 65536]
    if b"\x00" in head:
        raise BvhError("%s is a binary file, not a BVH text file." % source)
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as ex:
        # Text in a legacy code page is fine; control bytes are not.
        if ex.start < len(head) - 3 and _CONTROL[np.frombuffer(head, dtype=np.uint8)].any():
            raise BvhError("%s is a binary file, not a BVH text file." % source) from None
    return start


def _decode_line(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


class _Tokens:
    """Whitespace-separated tokens of the file's lines, read one line at a time
    from ``raw`` (bytes) starting at ``pos`` (tokens of a line are found lazily,
    so one enormous line costs no list of its words); knows where the current
    line ends."""

    _WORD = re.compile(r"\S+")

    def __init__(self, raw, pos, source):
        self.raw = raw
        self.pos = pos          # start of the next unread line
        self.source = source
        self.line = 0           # number of the current line (1-based)
        self.text = ""          # the current line
        self.words = iter(())   # tokens of the current line not taken yet
        self.ahead = None       # one token peeked at

    @property
    def line_words(self):
        """Number of tokens on the current line."""
        return sum(1 for _ in self._WORD.finditer(self.text))

    def read_line(self):
        """The next whole line as text (None at the end); drops what is pending."""
        if self.pos >= len(self.raw):
            return None
        end = self.raw.find(b"\n", self.pos)
        end = len(self.raw) if end < 0 else end + 1
        self.text = _decode_line(self.raw[self.pos:end])
        self.pos = end
        self.line += 1
        self.words = self._WORD.finditer(self.text)
        self.ahead = None
        return self.text

    def _fill(self):
        while self.ahead is None:
            word = next(self.words, None)
            if word is not None:
                self.ahead = word.group()
                break
            if self.read_line() is None:
                return False
        return True

    def peek(self):
        if not self._fill():
            return None, self.line or 1
        return self.ahead, self.line

    def next(self, what):
        if not self._fill():
            raise BvhError("%s ends early near line %d: expected %s." % (self.source, self.line or 1, what))
        tok, self.ahead = self.ahead, None
        return tok, self.line

    def expect(self, word):
        tok, line = self.next("'%s'" % word)
        if tok.upper() != word.upper():
            raise BvhError("Line %d of %s: expected '%s', found '%s'." % (line, self.source, word, clip(tok)))
        return line

    def number(self, what):
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise BvhError("Line %d of %s: '%s' is not a number (%s)." % (line, self.source, clip(tok), what)) from None
        if not np.isfinite(value):
            raise BvhError("Line %d of %s: %s is %s; it must be a finite number." % (line, self.source, what, clip(tok)))
        return value


def parse_bvh(raw, source="the BVH file", progress=None):
    """Parse BVH text (bytes or str) into :class:`BvhData`. ``progress(fraction)``
    is called after each converted chunk of the MOTION block."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    raw = bytes(raw)
    start = _check_text(raw, source)
    if b"\r" in raw[start:start + 65536] and b"\n" not in raw[start:start + 65536]:
        raw = raw.replace(b"\r", b"\n")  # old Mac line ends
    toks = _Tokens(raw, start, source)
    first, _line = toks.peek()
    if first is None or first.upper() != "HIERARCHY":
        raise BvhError("%s is not a BVH file: it does not start with HIERARCHY." % source)
    names, parents, offsets, channels, end_sites, offset_lines, end_site_lines = parse_hierarchy(toks)
    frames, frame_time = motion_header(toks)
    widths = np.array([len(c) for c in channels], dtype=np.int64)
    n_channels = int(widths.sum())
    if n_channels == 0:
        raise BvhError("%s has no channels, so there is no motion to read." % source)
    motion, motion_line = parse_motion(raw, toks.pos, toks.line + 1, frames, n_channels, source, progress)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return BvhData(names, parents, offsets, channels, end_sites, frame_time, motion, starts,
                   source=source, offset_lines=offset_lines, end_site_lines=end_site_lines,
                   motion_line=motion_line)
