"""BVH motion capture: parse a file into arrays and convert it to Blender's frame.

The hierarchy is read token by token (it is short); the MOTION block, which is
nearly all of a file, is converted in one go with numpy and checked line by
line with vectorised counts, so that an error can still name its line.
"""

import io
import os
import re
from dataclasses import dataclass, field

import numpy as np

from .errors import MotionMatchingError
from . import transforms as tf


class BvhError(MotionMatchingError):
    """A BVH file that cannot be read, with the reason in plain words."""


_CHANNELS = {
    "xposition": "Xposition", "yposition": "Yposition", "zposition": "Zposition",
    "xrotation": "Xrotation", "yrotation": "Yrotation", "zrotation": "Zrotation",
}


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

    @property
    def frame_count(self):
        return self.motion.shape[0]

    @property
    def fps(self):
        """Frames per second. Files round the frame time (0.016667 for 60 fps);
        a rate within 0.01% of a whole number is taken to be that number."""
        return snap_rate(1.0 / self.frame_time)


def snap_rate(fps):
    nearest = round(fps)
    return float(nearest) if nearest > 0 and abs(fps - nearest) <= 1e-4 * fps else float(fps)


# ----------------------------------------------------------------------------
# Reading


def read_bvh(path):
    """Read and check a BVH file; raise BvhError with a plain sentence."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise BvhError("The file %s does not exist." % path) from None
    except IsADirectoryError:
        raise BvhError("%s is a folder, not a BVH file." % path) from None
    except OSError as ex:
        raise BvhError("The file %s cannot be read: %s." % (path, ex.strerror or ex)) from None
    return parse_bvh(raw, source=os.path.basename(str(path)) or str(path))


def _decode(raw, source):
    if not raw.strip():
        raise BvhError("%s is empty." % source)
    if b"\x00" in raw[:65536]:
        raise BvhError("%s is a binary file, not a BVH text file." % source)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
        # Text in a legacy code page is fine; control bytes are not.
        bad = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\t\n\r\f\v")
        if bad:
            raise BvhError("%s is a binary file, not a BVH text file." % source) from None
        return text


def _tokens_with_lines(text):
    """Yield (token, 1-based line number) for the hierarchy part."""
    for number, line in enumerate(text.splitlines(), start=1):
        for tok in line.split():
            yield tok, number


class _Tokens:
    def __init__(self, text, source):
        self.items = []
        self.source = source
        self.pos = 0
        self.motion_line = None
        for tok, line in _tokens_with_lines(text):
            self.items.append((tok, line))
            if tok.upper() == "MOTION":
                self.motion_line = line
                break

    def peek(self):
        if self.pos >= len(self.items):
            return None, self.items[-1][1] if self.items else 1
        return self.items[self.pos]

    def next(self, what):
        if self.pos >= len(self.items):
            line = self.items[-1][1] if self.items else 1
            raise BvhError("%s ends early near line %d: expected %s." % (self.source, line, what))
        item = self.items[self.pos]
        self.pos += 1
        return item

    def expect(self, word):
        tok, line = self.next("'%s'" % word)
        if tok.upper() != word.upper():
            raise BvhError("Line %d of %s: expected '%s', found '%s'." % (line, self.source, word, tok))
        return line

    def number(self, what):
        tok, line = self.next(what)
        try:
            value = float(tok)
        except ValueError:
            raise BvhError("Line %d of %s: '%s' is not a number (%s)." % (line, self.source, tok, what)) from None
        if not np.isfinite(value):
            raise BvhError("Line %d of %s: %s is %s; it must be a finite number." % (line, self.source, what, tok))
        return value


def _parse_hierarchy(toks):
    names, parents, offsets, channels, end_sites = [], [], [], [], []
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
            break
        if word in ("ROOT", "JOINT"):
            if word == "ROOT" and stack:
                raise BvhError("Line %d of %s: ROOT inside another joint." % (line, toks.source))
            if word == "JOINT" and not stack:
                raise BvhError("Line %d of %s: JOINT outside of any ROOT." % (line, toks.source))
            if word == "JOINT" and stack[-1] is None:
                raise BvhError("Line %d of %s: JOINT inside an End Site." % (line, toks.source))
            parts = []
            while True:
                t, l2 = toks.next("'{' after the joint name")
                if t == "{":
                    break
                if l2 != line:
                    raise BvhError("Line %d of %s: expected '{' after joint %s." % (l2, toks.source, " ".join(parts) or "?"))
                parts.append(t)
            if not parts:
                raise BvhError("Line %d of %s: %s without a name." % (line, toks.source, tok))
            name = "_".join(parts)
            if name in seen:  # keep names unique, as Blender's importer does
                k = 1
                while "%s.%03d" % (name, k) in seen:
                    k += 1
                name = "%s.%03d" % (name, k)
            seen.add(name)
            toks.expect("OFFSET")
            off = [toks.number("OFFSET x"), toks.number("OFFSET y"), toks.number("OFFSET z")]
            chans = ()
            t, l2 = toks.peek()
            if t is not None and t.upper() == "CHANNELS":
                toks.next("CHANNELS")
                count_tok, l3 = toks.next("the channel count")
                try:
                    count = int(count_tok)
                except ValueError:
                    raise BvhError("Line %d of %s: the channel count '%s' is not a whole number." % (l3, toks.source, count_tok)) from None
                if count < 0 or count > 6:
                    raise BvhError("Line %d of %s: a joint has %d channels; BVH allows 0 to 6." % (l3, toks.source, count))
                got = []
                for _ in range(count):
                    c, l4 = toks.next("a channel name")
                    canon = _CHANNELS.get(c.lower())
                    if canon is None:
                        raise BvhError("Line %d of %s: unknown channel name '%s' (joint %s)." % (l4, toks.source, c, name))
                    if canon in got:
                        raise BvhError("Line %d of %s: channel %s listed twice for joint %s." % (l4, toks.source, canon, name))
                    got.append(canon)
                chans = tuple(got)
            names.append(name)
            parents.append(stack[-1] if stack else -1)
            offsets.append(off)
            channels.append(chans)
            end_sites.append(None)
            stack.append(len(names) - 1)
        elif word == "END":
            t, l2 = toks.next("'Site'")
            if t.upper() != "SITE":
                raise BvhError("Line %d of %s: expected 'End Site', found 'End %s'." % (l2, toks.source, t))
            if not stack or stack[-1] is None:
                raise BvhError("Line %d of %s: End Site outside of a joint." % (line, toks.source))
            t, l2 = toks.next("'{'")
            while t != "{":  # an optional name after End Site
                if l2 != line:
                    raise BvhError("Line %d of %s: expected '{' after End Site." % (l2, toks.source))
                t, l2 = toks.next("'{'")
            toks.expect("OFFSET")
            off = [toks.number("End Site x"), toks.number("End Site y"), toks.number("End Site z")]
            owner = stack[-1]
            if end_sites[owner] is None:
                end_sites[owner] = np.array(off)
            stack.append(None)
        elif tok == "}":
            if not stack:
                raise BvhError("Line %d of %s: '}' without a matching '{'." % (line, toks.source))
            stack.pop()
        elif tok == "{":
            raise BvhError("Line %d of %s: '{' without a ROOT, JOINT or End Site before it." % (line, toks.source))
        else:
            raise BvhError("Line %d of %s: unexpected '%s' in the hierarchy." % (line, toks.source, tok))
    if not names:
        raise BvhError("%s has no ROOT joint." % toks.source)
    return names, np.array(parents, dtype=np.int64), np.array(offsets, dtype=np.float64), channels, end_sites


_MOTION_LINE = re.compile(r"^[ \t]*MOTION[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)


def _split_header(text, source):
    """Split at the MOTION keyword; return (hierarchy text, motion text, line of MOTION)."""
    found = _MOTION_LINE.search(text)
    if found is None:
        for i, line in enumerate(text.splitlines()):
            # MOTION on a line with other words would be malformed.
            if "MOTION" in line.upper().split():
                raise BvhError("Line %d of %s: MOTION must stand alone on its line." % (i + 1, source))
        raise BvhError("%s has no MOTION section." % source)
    end = text.find("\n", found.end())
    end = len(text) if end < 0 else end + 1
    header = text[:end]
    line = header.count("\n") + (0 if header.endswith("\n") else 1)
    return header, text[end:], line


def _motion_header(body, first_line, source):
    """Read 'Frames: n' and 'Frame Time: t'; return (n, t, rest text, its first line number)."""
    # Only the first few lines are the header; do not split the whole block.
    head = body[:4096]
    lines = head.splitlines(keepends=True)
    if len(head) < len(body) and lines:
        lines = lines[:-1]  # the last piece may be a cut line
    frames = frame_time = None
    i = 0
    # The two header lines, in either order, skipping blank lines.
    while i < len(lines) and (frames is None or frame_time is None):
        words = lines[i].split()
        number = first_line + i + 1
        if not words:
            i += 1
            continue
        head = words[0].lower()
        if head == "frames:" or (head == "frames" and len(words) > 1 and words[1] == ":"):
            vals = words[1:] if head == "frames:" else words[2:]
            if len(vals) != 1:
                raise BvhError("Line %d of %s: expected 'Frames: <count>'." % (number, source))
            try:
                frames = int(vals[0])
            except ValueError:
                raise BvhError("Line %d of %s: the frame count '%s' is not a whole number." % (number, source, vals[0])) from None
        elif head == "frame" and len(words) >= 2 and words[1].lower().startswith("time"):
            rest = " ".join(words[1:])[4:].lstrip(": \t").split()
            if len(rest) != 1:
                raise BvhError("Line %d of %s: expected 'Frame Time: <seconds>'." % (number, source))
            try:
                frame_time = float(rest[0])
            except ValueError:
                raise BvhError("Line %d of %s: the frame time '%s' is not a number." % (number, source, rest[0])) from None
        else:
            break
        i += 1
    if frames is None:
        raise BvhError("%s: the MOTION section has no 'Frames:' line." % source)
    if frame_time is None:
        raise BvhError("%s: the MOTION section has no 'Frame Time:' line, so its frame rate is unknown." % source)
    if frames <= 0:
        raise BvhError("%s has no frames (Frames: %d)." % (source, frames))
    if not np.isfinite(frame_time) or frame_time <= 0.0:
        raise BvhError("%s: Frame Time must be a positive number of seconds (got %s)." % (source, frame_time))
    consumed = sum(len(x) for x in lines[:i])
    return frames, frame_time, body[consumed:], first_line + i + 1


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


def _parse_motion(body, first_line, frames, n_channels, source):
    """The MOTION values as (frames, n_channels); numpy's C reader does the
    common case, and only a file that fails it is scanned to name the bad line."""
    if "\r" in body:
        body = body.replace("\r\n", "\n").replace("\r", "\n")
    data = body.encode("utf-8", "replace")
    try:
        values = np.loadtxt(io.BytesIO(data), dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        values = None
    if values is not None and values.shape == (frames, n_channels) and np.isfinite(values).all():
        return values
    _diagnose_motion(data, first_line, frames, n_channels, source)
    raise BvhError("%s: the MOTION block cannot be read." % source)


def _diagnose_motion(data, first_line, frames, n_channels, source):
    """Raise a BvhError naming the first line of the MOTION block that is wrong."""
    per_line = _values_per_line(data)
    line_numbers = np.nonzero(per_line)[0]
    counts = per_line[line_numbers]
    wrong = np.nonzero(counts != n_channels)[0]
    if wrong.size and wrong[0] < frames:
        k = wrong[0]
        raise BvhError("Line %d of %s has %d values; the hierarchy has %d channels."
                       % (first_line + line_numbers[k], source, counts[k], n_channels))
    if len(line_numbers) < frames:
        raise BvhError("%s is truncated: it declares %d frames but the MOTION block holds %d."
                       % (source, frames, len(line_numbers)))
    if len(line_numbers) > frames:
        raise BvhError("%s declares %d frames but the MOTION block holds %d lines of values (line %d is extra)."
                       % (source, frames, len(line_numbers), first_line + line_numbers[frames]))
    tokens = data.split()
    for k, tok in enumerate(tokens):
        try:
            value = float(tok)
        except ValueError:
            value = None
        if value is None or not np.isfinite(value):
            row = k // n_channels
            what = "is not a number" if value is None else "is not a finite number"
            raise BvhError("Line %d of %s: '%s' %s." % (
                first_line + line_numbers[row], source, tok.decode("utf-8", "replace"), what))


def parse_bvh(raw, source="the BVH file"):
    """Parse BVH text (bytes or str) into :class:`BvhData`."""
    text = _decode(raw, source) if isinstance(raw, (bytes, bytearray)) else raw
    if not text.strip():
        raise BvhError("%s is empty." % source)
    if "\r" in text[:65536] and "\n" not in text[:65536]:
        text = text.replace("\r", "\n")  # old Mac line ends
    first = text.split(None, 1)[0]
    if first.upper() != "HIERARCHY":
        raise BvhError("%s is not a BVH file: it does not start with HIERARCHY." % source)
    header, body, motion_line = _split_header(text, source)
    toks = _Tokens(header, source)
    names, parents, offsets, channels, end_sites = _parse_hierarchy(toks)
    frames, frame_time, rest, first_line = _motion_header(body, motion_line, source)
    widths = np.array([len(c) for c in channels], dtype=np.int64)
    n_channels = int(widths.sum())
    if n_channels == 0:
        raise BvhError("%s has no channels, so there is no motion to read." % source)
    motion = _parse_motion(rest, first_line, frames, n_channels, source)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return BvhData(names, parents, offsets, channels, end_sites, frame_time, motion, starts)


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


def to_blender(bvh, global_scale=1.0, axis_forward="-Z", axis_up="Y", handedness="RIGHT"):
    """Convert parsed BVH data to :class:`BlenderMotion`.

    Positions are scaled by ``global_scale``. Euler channels compose in the
    order listed (``Zrotation Xrotation Yrotation`` gives Rz @ Rx @ Ry). A
    left-handed source is first mirrored along its forward axis: p -> M p and
    R -> M R M, which keeps every joint rotation proper.
    """
    if not np.isfinite(global_scale) or global_scale <= 0:
        raise BvhError("The scale must be a positive number (got %s)." % global_scale)
    if handedness not in ("RIGHT", "LEFT"):
        raise BvhError("Handedness must be RIGHT or LEFT (got %s)." % handedness)
    conversion = tf.axis_conversion_matrix(axis_forward, axis_up)
    F, J = bvh.frame_count, len(bvh.names)
    scale = float(global_scale)
    offsets = bvh.offsets * scale
    rotations = np.zeros((F, J, 4))
    rotations[..., 0] = 1.0
    translations = np.zeros((F, J, 3))
    has_loc = np.zeros(J, dtype=bool)
    has_rot = np.zeros(J, dtype=bool)
    for j in range(J):
        chans = bvh.channels[j]
        start = bvh.channel_start[j]
        rot_axes = [c[0] for c in chans if c.endswith("rotation")]
        rot_cols = [start + k for k, c in enumerate(chans) if c.endswith("rotation")]
        pos_cols = {c[0]: start + k for k, c in enumerate(chans) if c.endswith("position")}
        if rot_cols:
            has_rot[j] = True
            angles = np.radians(bvh.motion[:, rot_cols])
            rotations[:, j] = tf.euler_to_quat(angles, "".join(rot_axes))
        if pos_cols:
            has_loc[j] = True
            # A position channel replaces the offset on its axis; a missing axis keeps it.
            for axis, col in pos_cols.items():
                k = "XYZ".index(axis)
                translations[:, j, k] = bvh.motion[:, col] * scale - offsets[j, k]
    heads = np.zeros((J, 3))
    for j, p in enumerate(bvh.parents):
        heads[j] = offsets[j] + (heads[p] if p >= 0 else 0.0)
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


def bone_basis(motion, bone_rest):
    """Pose-bone channels for an armature whose bones have rest rotations
    ``bone_rest`` (J, 3, 3) in Blender's frame.

    A bone's rest is the joint frame turned by B, so its local rotation is
    B^T (C R C^T) B and its location B^T C t (t: translation minus offset).
    Returns (locations (F, J, 3), quaternions (F, J, 4) sign-continuous).
    """
    c = motion.conversion
    b = np.asarray(bone_rest, dtype=np.float64)[:, :3, :3]
    bt = np.swapaxes(b, -1, -2)
    q_c = tf.matrix_to_quat(c)
    q_b = tf.matrix_to_quat(b)
    left = tf.quat_mul(tf.quat_conjugate(q_b), q_c)      # B^T C
    right = tf.quat_mul(tf.quat_conjugate(q_c), q_b)     # C^T B
    quats = tf.quat_mul(tf.quat_mul(left[None], motion.rotations), right[None])
    quats = tf.quat_unroll(quats, axis=0)
    locs = np.einsum("jik,fjk->fji", bt @ c, motion.translations)
    return locs, quats
