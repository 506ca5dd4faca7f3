"""The HIERARCHY section of a BVH file, read from a token stream: joints with
their offsets and channels, End Sites, and the MOTION section's two header lines."""

import numpy as np

from .bvh_data import MAX_FRAME_TIME, MIN_FRAME_TIME, BvhError, clip

_CHANNELS = {
    "xposition": "Xposition", "yposition": "Yposition", "zposition": "Zposition",
    "xrotation": "Xrotation", "yrotation": "Yrotation", "zrotation": "Zrotation",
}


def parse_hierarchy(toks):
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
            raise BvhError("Line %d of %s: unexpected '%s' in the hierarchy." % (line, toks.source, clip(tok)))
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
                           % (l2, toks.source, clip(" ".join(parts)) or "?"))
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
                       % (l3, toks.source, clip(count_tok))) from None
    if count < 0 or count > 6:
        raise BvhError("Line %d of %s: a joint has %d channels; BVH allows 0 to 6." % (l3, toks.source, count))
    got = []
    for _ in range(count):
        c, l4 = toks.next("a channel name")
        canon = _CHANNELS.get(c.lower())
        if canon is None:
            raise BvhError("Line %d of %s: unknown channel name '%s' (joint %s)."
                           % (l4, toks.source, clip(c), clip(name)))
        if canon in got:
            raise BvhError("Line %d of %s: channel %s listed twice for joint %s."
                           % (l4, toks.source, canon, clip(name)))
        got.append(canon)
    return tuple(got)


def _end_site(toks, line, stack):
    """After 'End' on ``line``: 'Site', an optional name, '{' and the OFFSET;
    returns (line of the OFFSET, [x, y, z])."""
    t, l2 = toks.next("'Site'")
    if t.upper() != "SITE":
        raise BvhError("Line %d of %s: expected 'End Site', found 'End %s'." % (l2, toks.source, clip(t)))
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


def motion_header(toks):
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
                               % (number, source, clip(vals[0]))) from None
        elif head == "frame" and len(words) >= 2 and words[1].lower().startswith("time"):
            rest = " ".join(words[1:])[4:].lstrip(": \t").split()
            if len(rest) != 1:
                raise BvhError("Line %d of %s: expected 'Frame Time: <seconds>'." % (number, source))
            try:
                frame_time = float(rest[0])
            except ValueError:
                raise BvhError("Line %d of %s: the frame time '%s' is not a number."
                               % (number, source, clip(rest[0]))) from None
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
                       % (time_line, source, clip(str(frame_time))))
    if not MIN_FRAME_TIME <= frame_time <= MAX_FRAME_TIME:
        raise BvhError("Line %d of %s: Frame Time %g s is outside 0.0001-10 s (10,000 to 0.1 frames per second)."
                       % (time_line, source, frame_time))
    return frames, frame_time
