"""BVH motion capture: parse a file into arrays and convert it to Blender's frame.

The hierarchy is read token by token from the file's bytes, line by line, so a
joint may be called ``Motion``: the MOTION keyword is recognised only where the
grammar expects it (after the last joint's closing brace). The MOTION block,
nearly all of a file, is converted with numpy in chunks of a few megabytes (a
progress callback is told after each); a chunk that does not convert is scanned
to name its bad line.

What is refused (each with a sentence naming the line, joint or channel): any
number that is not finite; a Frame Time outside 0.0001-10 s (10,000 to 0.1
frames per second); rotation angles beyond a million degrees; and, after
scaling, offsets, joint positions and position channels beyond 1,000,000 m
(:data:`MAX_DISTANCE`), so that every key Blender stores in float32 is finite.
"""

import io
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import MotionMatchingError
from ..maths import transforms as tf


class BvhError(MotionMatchingError):
    """A BVH file that cannot be read, with the reason in plain words."""


_CHANNELS = {
    "xposition": "Xposition", "yposition": "Yposition", "zposition": "Zposition",
    "xrotation": "Xrotation", "yrotation": "Yrotation", "zrotation": "Zrotation",
}

# Sane bounds for numbers read from a file (see the module docstring and README).
MIN_FRAME_TIME = 1e-4        # seconds (10,000 frames per second)
MAX_FRAME_TIME = 10.0        # seconds (0.1 frames per second)
MAX_ANGLE = 1e6              # degrees (2,778 turns; float64 still resolves 1e-10 degree)
MAX_DISTANCE = 1e6           # metres after scaling: offsets, rest heads, position channels
MIN_SCALE, MAX_SCALE = 1e-6, 1e6
# Bytes of MOTION text converted at a time (a few thousand frames).
CHUNK_BYTES = 1 << 20


@dataclass
class BvhData:
    """A BVH file as arrays, in the file's own units and axes."""

    names: list
    parents: np.ndarray          # (J,) parent index, -1 for a root; parents first
    offsets: np.ndarray          # (J, 3) OFFSET of each joint
    channels: list               # per joint, a tuple of canonical channel names
    end_sites: list              # per joint, the OFFSET of its first End Site or None
    frame_time: float
    motion: np.ndarray           # (F, C) every channel of every frame
    channel_start: np.ndarray = field(default=None)  # (J,) first column of each joint
    source: str = "the BVH file"
    offset_lines: list = field(default=None)     # (J,) line of each joint's OFFSET
    end_site_lines: list = field(default=None)   # (J,) line of the End Site's OFFSET or None
    motion_line: int = None      # line of frame 0 when every frame is one line, else None
    first_frame: int = 0         # file frame of motion[0] (see :meth:`frame_range`)

    @property
    def frame_count(self):
        return self.motion.shape[0]

    @property
    def fps(self):
        """Frames per second. Files round the frame time (0.016667 for 60 fps);
        a rate within 0.01% of a whole number is taken to be that number."""
        return snap_rate(1.0 / self.frame_time)

    def where_frame(self, row):
        """'Line n of <file>' for a row of ``motion`` when known, else 'Frame n of <file>' (1-based)."""
        frame = self.first_frame + row
        if self.motion_line is not None:
            return "Line %d of %s" % (self.motion_line + frame, self.source)
        return "Frame %d of %s" % (frame + 1, self.source)

    def frame_range(self, start, stop):
        """The same take with only frames ``start:stop`` (messages still name the file's lines)."""
        import dataclasses

        return dataclasses.replace(self, motion=self.motion[start:stop], first_frame=self.first_frame + start)


def snap_rate(fps):
    nearest = round(fps)
    return float(nearest) if nearest > 0 and abs(fps - nearest) <= 1e-4 * fps else float(fps)


# ----------------------------------------------------------------------------
# Reading


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
            raise BvhError("Line %d of %s: expected '%s', found '%s'." % (line, self.source, word, _clip(tok)))
        return line

    def number(self, what):
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise BvhError("Line %d of %s: '%s' is not a number (%s)." % (line, self.source, _clip(tok), what)) from None
        if not np.isfinite(value):
            raise BvhError("Line %d of %s: %s is %s; it must be a finite number." % (line, self.source, what, _clip(tok)))
        return value


def _clip(text, limit=40):
    """A token as quoted in a message, shortened when very long."""
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_hierarchy(toks):
    """Joints up to and including the MOTION keyword, which must follow the
    last closing brace and stand alone on its line."""
    names, parents, offsets, channels, end_sites = [], [], [], [], []
    offset_lines, end_site_lines = [], []
    tok, line = toks.next("HIERARCHY")
    if tok.upper() != "HIERARCHY":
        raise BvhError("%s is not a BVH file: it does not start with HIERARCHY." % toks.source)
    stack = []  # open braces: joint index, or None for an End Site
    seen = set()
    while True:
        tok, line = toks.next("ROOT, JOINT, End Site, '}' or MOTION")
        word = tok.upper()
        if word == "MOTION":
            if stack:
                raise BvhError("%s: the hierarchy has %d unclosed '{' before MOTION (line %d)."
                               % (toks.source, len(stack), line))
            if toks.line_words != 1:
                raise BvhError("Line %d of %s: MOTION must stand alone on its line." % (line, toks.source))
            break
        if word in ("ROOT", "JOINT"):
            _check_joint_place(toks, word, line, stack)
            name = _joint_name(toks, tok, line, seen)
            offset_lines.append(toks.expect("OFFSET"))
            off = [toks.number("OFFSET x"), toks.number("OFFSET y"), toks.number("OFFSET z")]
            chans = _joint_channels(toks, name)
            names.append(name)
            parents.append(stack[-1] if stack else -1)
            offsets.append(off)
            channels.append(chans)
            end_sites.append(None)
            end_site_lines.append(None)
            stack.append(len(names) - 1)
        elif word == "END":
            site_line, off = _end_site(toks, line, stack)
            owner = stack[-1]
            if end_sites[owner] is None:
                end_sites[owner] = np.array(off)
                end_site_lines[owner] = site_line
            stack.append(None)
        elif tok == "}":
            if not stack:
                raise BvhError("Line %d of %s: '}' without a matching '{'." % (line, toks.source))
            stack.pop()
        elif tok == "{":
            raise BvhError("Line %d of %s: '{' without a ROOT, JOINT or End Site before it." % (line, toks.source))
        else:
            raise BvhError("Line %d of %s: unexpected '%s' in the hierarchy." % (line, toks.source, _clip(tok)))
    if not names:
        raise BvhError("%s has no ROOT joint." % toks.source)
    return (names, np.array(parents, dtype=np.int64), np.array(offsets, dtype=np.float64), channels, end_sites,
            offset_lines, end_site_lines)


def _check_joint_place(toks, word, line, stack):
    """ROOT only at the top, JOINT only inside a joint (not an End Site)."""
    if word == "ROOT" and stack:
        raise BvhError("Line %d of %s: ROOT inside another joint." % (line, toks.source))
    if word == "JOINT" and not stack:
        raise BvhError("Line %d of %s: JOINT outside of any ROOT." % (line, toks.source))
    if word == "JOINT" and stack[-1] is None:
        raise BvhError("Line %d of %s: JOINT inside an End Site." % (line, toks.source))


def _joint_name(toks, keyword, line, seen):
    """The joint's name: the words after ROOT/JOINT on its line, joined by '_',
    up to and including the '{'; made unique against ``seen`` (and added to it)."""
    parts = []
    while True:
        t, l2 = toks.next("'{' after the joint name")
        if t == "{":
            break
        if l2 != line:
            raise BvhError("Line %d of %s: expected '{' after joint %s."
                           % (l2, toks.source, _clip(" ".join(parts)) or "?"))
        parts.append(t)
    if not parts:
        raise BvhError("Line %d of %s: %s without a name." % (line, toks.source, keyword))
    name = "_".join(parts)
    if name in seen:  # keep names unique, as Blender's importer does
        k = 1
        while "%s.%03d" % (name, k) in seen:
            k += 1
        name = "%s.%03d" % (name, k)
    seen.add(name)
    return name


def _joint_channels(toks, name):
    """The joint's optional CHANNELS line as a tuple of canonical names (empty
    without one)."""
    t, _ = toks.peek()
    if t is None or t.upper() != "CHANNELS":
        return ()
    toks.next("CHANNELS")
    count_tok, l3 = toks.next("the channel count")
    try:
        count = int(count_tok)
    except ValueError:
        raise BvhError("Line %d of %s: the channel count '%s' is not a whole number."
                       % (l3, toks.source, _clip(count_tok))) from None
    if count < 0 or count > 6:
        raise BvhError("Line %d of %s: a joint has %d channels; BVH allows 0 to 6." % (l3, toks.source, count))
    got = []
    for _ in range(count):
        c, l4 = toks.next("a channel name")
        canon = _CHANNELS.get(c.lower())
        if canon is None:
            raise BvhError("Line %d of %s: unknown channel name '%s' (joint %s)."
                           % (l4, toks.source, _clip(c), _clip(name)))
        if canon in got:
            raise BvhError("Line %d of %s: channel %s listed twice for joint %s."
                           % (l4, toks.source, canon, _clip(name)))
        got.append(canon)
    return tuple(got)


def _end_site(toks, line, stack):
    """After 'End' on ``line``: 'Site', an optional name, '{' and the OFFSET;
    returns (line of the OFFSET, [x, y, z])."""
    t, l2 = toks.next("'Site'")
    if t.upper() != "SITE":
        raise BvhError("Line %d of %s: expected 'End Site', found 'End %s'." % (l2, toks.source, _clip(t)))
    if not stack or stack[-1] is None:
        raise BvhError("Line %d of %s: End Site outside of a joint." % (line, toks.source))
    t, l2 = toks.next("'{'")
    while t != "{":  # an optional name after End Site
        if l2 != line:
            raise BvhError("Line %d of %s: expected '{' after End Site." % (l2, toks.source))
        t, l2 = toks.next("'{'")
    site_line = toks.expect("OFFSET")
    off = [toks.number("End Site x"), toks.number("End Site y"), toks.number("End Site z")]
    return site_line, off


def _motion_header(toks):
    """Read 'Frames: n' and 'Frame Time: t' (either order, blank lines allowed)
    from the lines after MOTION; return (n, t). The next unread line is the first frame."""
    source = toks.source
    frames = frame_time = None
    time_line = None
    while frames is None or frame_time is None:
        start = toks.pos
        text = toks.read_line()
        if text is None:
            break
        words = text.split()
        number = toks.line
        if not words:
            continue
        head = words[0].lower()
        if head == "frames:" or (head == "frames" and len(words) > 1 and words[1] == ":"):
            vals = words[1:] if head == "frames:" else words[2:]
            if len(vals) != 1:
                raise BvhError("Line %d of %s: expected 'Frames: <count>'." % (number, source))
            try:
                frames = int(vals[0])
            except ValueError:
                raise BvhError("Line %d of %s: the frame count '%s' is not a whole number."
                               % (number, source, _clip(vals[0]))) from None
        elif head == "frame" and len(words) >= 2 and words[1].lower().startswith("time"):
            rest = " ".join(words[1:])[4:].lstrip(": \t").split()
            if len(rest) != 1:
                raise BvhError("Line %d of %s: expected 'Frame Time: <seconds>'." % (number, source))
            try:
                frame_time = float(rest[0])
            except ValueError:
                raise BvhError("Line %d of %s: the frame time '%s' is not a number."
                               % (number, source, _clip(rest[0]))) from None
            time_line = number
        else:
            toks.pos, toks.line = start, number - 1  # a frame: leave it for the MOTION reader
            break
    if frames is None:
        raise BvhError("%s: the MOTION section has no 'Frames:' line." % source)
    if frame_time is None:
        raise BvhError("%s: the MOTION section has no 'Frame Time:' line, so its frame rate is unknown." % source)
    if frames <= 0:
        raise BvhError("%s has no frames (Frames: %d)." % (source, frames))
    if not np.isfinite(frame_time) or frame_time <= 0.0:
        raise BvhError("Line %d of %s: Frame Time must be a positive number of seconds (got %s)."
                       % (time_line, source, _clip(str(frame_time))))
    if not MIN_FRAME_TIME <= frame_time <= MAX_FRAME_TIME:
        raise BvhError("Line %d of %s: Frame Time %g s is outside 0.0001-10 s (10,000 to 0.1 frames per second)."
                       % (time_line, source, frame_time))
    return frames, frame_time


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


def _parse_motion(raw, start, first_line, frames, n_channels, source, progress=None):
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
                    first_line + line_numbers[row], source, _clip(tok.decode("utf-8", "replace")), what))


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
    names, parents, offsets, channels, end_sites, offset_lines, end_site_lines = _parse_hierarchy(toks)
    frames, frame_time = _motion_header(toks)
    widths = np.array([len(c) for c in channels], dtype=np.int64)
    n_channels = int(widths.sum())
    if n_channels == 0:
        raise BvhError("%s has no channels, so there is no motion to read." % source)
    motion, motion_line = _parse_motion(raw, toks.pos, toks.line + 1, frames, n_channels, source, progress)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return BvhData(names, parents, offsets, channels, end_sites, frame_time, motion, starts,
                   source=source, offset_lines=offset_lines, end_site_lines=end_site_lines,
                   motion_line=motion_line)


# ----------------------------------------------------------------------------
# Conversion to Blender's frame


@dataclass
class BlenderMotion:
    """A BVH take ready to become an armature and an action.

    Rest geometry (``heads``, ``tails``) is in the source's axes, mirrored to a
    right-handed frame when the source is left-handed, and scaled; ``conversion``
    is the proper rotation that then takes it to Blender's Z-up frame (the
    importer builds bones in source axes and rotates them, like Blender's own
    importer, so the bones get the same rest orientation).
    """

    names: list
    parents: np.ndarray
    heads: np.ndarray        # (J, 3) rest heads, source axes (right-handed), scaled
    tails: np.ndarray        # (J, 3) rest tails, same frame
    conversion: np.ndarray   # (3, 3) source axes -> Blender axes
    rotations: np.ndarray    # (F, J, 4) joint local rotations (quaternions), source axes
    translations: np.ndarray # (F, J, 3) joint translation minus rest offset, source axes
    has_loc: np.ndarray      # (J,) bool
    has_rot: np.ndarray      # (J,) bool
    frame_time: float
    offsets: np.ndarray      # (J, 3) rest offsets, source axes, scaled

    @property
    def frame_count(self):
        return self.rotations.shape[0]

    def world_positions(self):
        """(F, J, 3) joint positions in Blender's frame, from the channels alone."""
        F, J = self.rotations.shape[:2]
        rot_w = self._source_world_rotations()
        pos_w = np.empty((F, J, 3))
        local_t = self.offsets[None] + self.translations
        for j, p in enumerate(self.parents):
            if p < 0:
                pos_w[:, j] = local_t[:, j]
            else:
                pos_w[:, j] = pos_w[:, p] + np.einsum("fij,fj->fi", rot_w[:, p], local_t[:, j])
        return np.einsum("ij,fkj->fki", self.conversion, pos_w)

    def _source_world_rotations(self):
        local = tf.quat_to_matrix(self.rotations)
        rot_w = np.empty_like(local)
        for j, p in enumerate(self.parents):
            rot_w[:, j] = local[:, j] if p < 0 else rot_w[:, p] @ local[:, j]
        return rot_w

    def world_rotations(self):
        """(F, J, 3, 3) joint world rotations in Blender's frame (joint axes, not bone axes)."""
        c = self.conversion
        return c @ self._source_world_rotations() @ c.T


def _tails(bvh, heads, scale):
    """Bone tails as Blender's BVH importer places them (End Site, only child,
    or mean of children; a small step along +Y for a zero-length bone)."""
    J = len(bvh.names)
    tails = np.empty((J, 3))
    children = [[] for _ in range(J)]
    for j, p in enumerate(bvh.parents):
        if p >= 0:
            children[p].append(j)
    for j in range(J):
        if bvh.end_sites[j] is not None:
            tails[j] = heads[j] + bvh.end_sites[j] * scale
        elif children[j]:
            tails[j] = heads[children[j]].mean(axis=0)
        else:
            tails[j] = heads[j]
    short = np.linalg.norm(tails - heads, axis=1) <= 0.001 * scale
    tails[short, 1] += scale / 10.0
    return tails


def mirror_matrix(axis_forward):
    """The reflection that turns a left-handed source right-handed: it negates
    the source's forward axis (for a Unity-style file, z)."""
    m = np.eye(3)
    k = "XYZ".index(axis_forward[-1].upper())
    m[k, k] = -1.0
    return m


def check_scale(global_scale):
    """The scale as a float, or a BvhError when it is not a sane positive number."""
    try:
        scale = float(global_scale)
    except (TypeError, ValueError):
        raise BvhError("The scale must be a number (got %r)." % (global_scale,)) from None
    if not np.isfinite(scale) or scale <= 0:
        raise BvhError("The scale must be a positive number (got %s)." % global_scale)
    if not MIN_SCALE <= scale <= MAX_SCALE:
        raise BvhError("The scale %g is outside %g-%g." % (scale, MIN_SCALE, MAX_SCALE))
    return scale


def _column_peaks(motion, cols):
    """Largest magnitude in each of ``cols`` of ``motion``, without a full-size temporary."""
    if not len(cols):
        return np.zeros(0)
    peaks = np.zeros(len(cols))
    step = max(1, (1 << 20) // len(cols))
    for f0 in range(0, motion.shape[0], step):
        block = motion[f0:f0 + step, cols]
        np.maximum(peaks, np.maximum(block.max(axis=0), -block.min(axis=0)), out=peaks)
    return peaks


def _first_row_over(motion, col, limit):
    return int(np.argmax(np.abs(motion[:, col]) > limit))


def check_ranges(bvh, global_scale=1.0):
    """Refuse numbers that are finite but not sane (see the module docstring),
    naming the line, joint and channel. Rest heads are checked by :func:`to_blender`."""
    scale = check_scale(global_scale)
    src = bvh.source
    lines = bvh.offset_lines or [None] * len(bvh.names)
    over = np.nonzero(np.abs(bvh.offsets).max(axis=1) * scale > MAX_DISTANCE)[0] if len(bvh.names) else []
    if len(over):
        j = int(over[0])
        where = ("Line %d of %s" % (lines[j], src)) if lines[j] else src
        raise BvhError("%s: the OFFSET of joint %s is %s; scaled by %g that is beyond %g m."
                       % (where, _clip(bvh.names[j]), _fmt_vec(bvh.offsets[j]), scale, MAX_DISTANCE))
    site_lines = bvh.end_site_lines or [None] * len(bvh.names)
    for j, site in enumerate(bvh.end_sites):
        if site is not None and np.abs(site).max() * scale > MAX_DISTANCE:
            where = ("Line %d of %s" % (site_lines[j], src)) if site_lines[j] else src
            raise BvhError("%s: the End Site OFFSET of joint %s is %s; scaled by %g that is beyond %g m."
                           % (where, _clip(bvh.names[j]), _fmt_vec(site), scale, MAX_DISTANCE))
    pos_cols, rot_cols, labels = [], [], {}
    for j, chans in enumerate(bvh.channels):
        for k, c in enumerate(chans):
            col = int(bvh.channel_start[j]) + k
            (pos_cols if c.endswith("position") else rot_cols).append(col)
            labels[col] = (bvh.names[j], c)
    for cols, limit, factor, unit in ((pos_cols, MAX_DISTANCE, scale, "m"), (rot_cols, MAX_ANGLE, 1.0, "degrees")):
        peaks = _column_peaks(bvh.motion, cols) * factor
        bad = np.nonzero(peaks > limit)[0]
        if bad.size:
            col = cols[int(bad[0])]
            row = _first_row_over(bvh.motion, col, limit / factor)
            name, channel = labels[col]
            value = bvh.motion[row, col]
            scaled = "" if unit == "degrees" else " (scaled by %g: %g m)" % (scale, value * scale)
            raise BvhError("%s: %s of joint %s is %g%s; it must be within %g %s."
                           % (bvh.where_frame(row), channel, _clip(name), value, scaled, limit, unit))
    return scale


def _fmt_vec(v):
    return "(%s)" % ", ".join("%g" % x for x in v)


def to_blender(bvh, global_scale=1.0, axis_forward="-Z", axis_up="Y", handedness="RIGHT"):
    """Convert parsed BVH data to :class:`BlenderMotion`.

    Positions are scaled by ``global_scale``. Euler channels compose in the
    order listed (``Zrotation Xrotation Yrotation`` gives Rz @ Rx @ Ry). A
    left-handed source is first mirrored along its forward axis: p -> M p and
    R -> M R M, which keeps every joint rotation proper. Numbers beyond the sane
    bounds (:func:`check_ranges`) are refused before anything is computed.
    """
    if handedness not in ("RIGHT", "LEFT"):
        raise BvhError("Handedness must be RIGHT or LEFT (got %s)." % handedness)
    scale = check_ranges(bvh, global_scale)
    conversion = tf.axis_conversion_matrix(axis_forward, axis_up)
    F, J = bvh.frame_count, len(bvh.names)
    offsets = bvh.offsets * scale
    rotations = np.zeros((F, J, 4))
    rotations[..., 0] = 1.0
    translations = np.zeros((F, J, 3))
    has_loc = np.zeros(J, dtype=bool)
    has_rot = np.zeros(J, dtype=bool)
    by_order = {}             # rotation order -> (joints, their columns)
    by_axis = ([], [], [])    # position axis -> (joint, column) pairs
    for j in range(J):
        chans = bvh.channels[j]
        start = int(bvh.channel_start[j])
        order = "".join(c[0] for c in chans if c.endswith("rotation"))
        if order:
            has_rot[j] = True
            joints, cols = by_order.setdefault(order, ([], []))
            joints.append(j)
            cols.append([start + k for k, c in enumerate(chans) if c.endswith("rotation")])
        for k, c in enumerate(chans):
            if c.endswith("position"):
                has_loc[j] = True
                by_axis["XYZ".index(c[0])].append((j, start + k))
    # Joints that share a rotation order are converted together, a block of
    # frames at a time so that temporaries stay small.
    for order, (joints, cols) in by_order.items():
        joints, cols = np.array(joints), np.array(cols)
        step = max(1, (1 << 16) // cols.size)
        for f0 in range(0, F, step):
            angles = np.radians(bvh.motion[f0:f0 + step][:, cols])
            rotations[f0:f0 + step, joints] = tf.euler_to_quat(angles, order)
    # A position channel replaces the offset on its axis; a missing axis keeps it.
    for k, pairs in enumerate(by_axis):
        if pairs:
            joints = np.array([p[0] for p in pairs])
            cols = np.array([p[1] for p in pairs])
            translations[:, joints, k] = bvh.motion[:, cols] * scale - offsets[joints, k]
    heads = np.zeros((J, 3))
    for j, p in enumerate(bvh.parents):
        heads[j] = offsets[j] + (heads[p] if p >= 0 else 0.0)
    far = np.nonzero(np.abs(heads).max(axis=1) > MAX_DISTANCE)[0]
    if far.size:
        j = int(far[0])
        raise BvhError("%s: at rest joint %s lies %g m from its root (the offsets of its chain add up); "
                       "it must be within %g m." % (bvh.source, _clip(bvh.names[j]), np.abs(heads[j]).max(),
                                                    MAX_DISTANCE))
    tails = _tails(bvh, heads, scale)
    if handedness == "LEFT":
        m = mirror_matrix(axis_forward)
        heads, tails, offsets = heads @ m, tails @ m, offsets @ m
        translations = translations @ m
        rotations = mirror_quaternions(rotations, m)
    return BlenderMotion(
        names=list(bvh.names), parents=bvh.parents.copy(), heads=heads, tails=tails,
        conversion=conversion, rotations=rotations, translations=translations,
        has_loc=has_loc, has_rot=has_rot, frame_time=bvh.frame_time, offsets=offsets)


def mirror_quaternions(q, m):
    """Quaternions of M R M for a diagonal reflection M: the axis u of R becomes
    M u and, the reflection reversing orientation, the angle changes sign, so
    (w, v) -> (w, -M v)."""
    return np.concatenate([q[..., :1], -q[..., 1:] * np.diag(m)], axis=-1)


def keyed_channel_list(motion):
    """The curves a take is keyed on, in order: (joint, "location" or
    "rotation_quaternion", component), location first for a joint with both."""
    channels = []
    for j in range(len(motion.names)):
        if motion.has_loc[j]:
            channels += [(j, "location", k) for k in range(3)]
        if motion.has_rot[j]:
            channels += [(j, "rotation_quaternion", k) for k in range(4)]
    return channels


def keyed_channels(motion, bone_rest):
    """The pose-bone keys of an armature whose bones have rest rotations
    ``bone_rest`` (J, 3, 3) in Blender's frame, ready to write: a list of
    (joint, "location" or "rotation_quaternion", component) and a (curves, F)
    float32 array, one row per curve (Blender keeps key values in float32).

    A bone's rest is the joint frame turned by B, so its local rotation is
    B^T (C R C^T) B and its location B^T C t (t: translation minus offset);
    quaternions are made sign-continuous over the frames. Computed in float64 a
    block of joints at a time, so that only the float32 result is full size.
    """
    c = motion.conversion
    b = np.asarray(bone_rest, dtype=np.float64)[:, :3, :3]
    bt = np.swapaxes(b, -1, -2)
    q_c = tf.matrix_to_quat(c)
    q_b = tf.matrix_to_quat(b)
    left = tf.quat_mul(tf.quat_conjugate(q_b), q_c)      # B^T C
    right = tf.quat_mul(tf.quat_conjugate(q_c), q_b)     # C^T B
    loc_basis = bt @ c
    F, J = motion.rotations.shape[:2]
    channels = keyed_channel_list(motion)
    out = np.empty((len(channels), F), dtype=np.float32)
    row_of = {}
    for i, (j, kind, k) in enumerate(channels):
        if k == 0:
            row_of[(j, kind)] = i
    step = max(1, (1 << 16) // max(F, 1))
    for j0 in range(0, J, step):
        js = np.arange(j0, min(J, j0 + step))
        rot = js[motion.has_rot[js]]
        if rot.size:
            q = tf.quat_mul(tf.quat_mul(left[None, rot], motion.rotations[:, rot]), right[None, rot])
            q = tf.quat_unroll(q, axis=0)
            for n, j in enumerate(rot):
                i = row_of[(j, "rotation_quaternion")]
                out[i:i + 4] = q[:, n].T
        loc = js[motion.has_loc[js]]
        if loc.size:
            t = np.einsum("jik,fjk->fji", loc_basis[loc], motion.translations[:, loc])
            for n, j in enumerate(loc):
                i = row_of[(j, "location")]
                out[i:i + 3] = t[:, n].T
    return channels, out
