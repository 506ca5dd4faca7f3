"""Malformed BVH files for fuzz tests, made deterministically from a seed."""

import numpy as np

# A small valid take: two joints, three frames (lines: Hips OFFSET 4, Leg OFFSET 8,
# End Site OFFSET 12, Frame Time 18, frames 19-21).
TEXT = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Leg
  {
    OFFSET 0 -40 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -40 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 10 0 0
0 91 0 1 0 0 11 0 0
0 92 0 2 0 0 12 0 0
"""

# Three joints, another rotation order, a named End Site, CRLF line ends.
TEXT_B = """HIERARCHY\r
ROOT Pelvis\r
{\r
\tOFFSET 0 90 0\r
\tCHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation\r
\tJOINT LeftHip\r
\t{\r
\t\tOFFSET 10 0 0\r
\t\tCHANNELS 3 Yrotation Xrotation Zrotation\r
\t\tJOINT LeftKnee\r
\t\t{\r
\t\t\tOFFSET 0 -45 0\r
\t\t\tCHANNELS 3 Xrotation Yrotation Zrotation\r
\t\t\tEnd Site Toe\r
\t\t\t{\r
\t\t\t\tOFFSET 0 -45 5\r
\t\t\t}\r
\t\t}\r
\t}\r
}\r
MOTION\r
Frames: 2\r
Frame Time: 0.008333\r
1 90 2 10 20 30 1 2 3 4 5 6\r
2 91 3 11 21 31 2 3 4 5 6 7\r
"""


def malformed(seed, count, texts=(TEXT, TEXT_B), kinds=None):
    """``count`` malformed variants (bytes) of ``texts``, the same for a seed
    (``kinds``: only these kinds of :func:`mutate`)."""
    rng = np.random.default_rng(seed)
    return [mutate(rng, texts[i % len(texts)], kinds) for i in range(count)]


def mutate(rng, text, kinds=None):
    """A malformed variant of ``text`` (bytes), chosen and placed by ``rng``:
    kind 0 truncated, 1 a number changed, 2 a token removed, 3 a token replaced,
    4 braces shuffled, 5 random bytes, 6 a frame's value count, 7 a count
    changed, 8 lines swapped; 9 (only when asked for) a frame's value made huge."""
    raw = text.encode()
    kind = rng.integers(9) if kinds is None else rng.choice(kinds)
    words = text.split(" ")
    if kind == 0:  # truncated anywhere
        return raw[:rng.integers(0, len(raw))]
    if kind == 1:  # a number made huge, tiny, not finite, negative or not a number
        lines = text.split("\n")
        i = rng.integers(len(lines))
        parts = lines[i].split(" ")
        j = rng.integers(len(parts))
        parts[j] = str(rng.choice(["1e39", "-1e308", "nan", "inf", "-inf", "1e-320", "-3", "x1", "0x10",
                                   "1_0", "", "99999999999999999999999", "-0", "1e400"]))
        lines[i] = " ".join(parts)
        return "\n".join(lines).encode()
    if kind == 2:  # a token removed
        k = rng.integers(len(words))
        return " ".join(words[:k] + words[k + 1:]).encode()
    if kind == 3:  # a token replaced by a keyword or a brace
        k = rng.integers(len(words))
        words[k] = str(rng.choice(["{", "}", "ROOT", "JOINT", "End", "Site", "MOTION", "CHANNELS", "OFFSET",
                                   "Frames:", "Frame", "Time:", "HIERARCHY", "7"]))
        return " ".join(words).encode()
    if kind == 4:  # braces shuffled
        chars = list(text)
        braces = [i for i, c in enumerate(chars) if c in "{}"]
        picked = [chars[i] for i in braces]
        rng.shuffle(picked)
        for i, c in zip(braces, picked):
            chars[i] = c
        return "".join(chars).encode()
    if kind == 5:  # random bytes spliced in
        at = rng.integers(len(raw))
        return raw[:at] + rng.integers(0, 256, size=rng.integers(1, 40), dtype=np.uint8).tobytes() + raw[at:]
    if kind == 6:  # a frame with too many or too few values
        lines = text.split("\n")
        i = rng.integers(len(lines) - 4, len(lines) - 1)
        lines[i] = lines[i] + " 1 2" if rng.integers(2) else " ".join(lines[i].split(" ")[:-2])
        return "\n".join(lines).encode()
    if kind == 7:  # channel or frame counts changed
        old = str(rng.choice(["CHANNELS 6", "CHANNELS 3", "Frames: 3"]))
        new = old.split(" ")[0] + " " + str(rng.choice(["-1", "0", "7", "2", "100", "1e3", "abc"]))
        return text.replace(old, new, 1).encode()
    if kind == 9:  # a value of a frame made huge or not finite (only when asked for)
        lines = text.rstrip().split("\n")
        i = len(lines) - 1 - rng.integers(min(3, len(lines)))
        parts = lines[i].split(" ")
        parts[rng.integers(len(parts))] = str(rng.choice(["1e39", "-1e308", "1e300", "3e38", "2e6", "1e7", "nan"]))
        lines[i] = " ".join(parts)
        return ("\n".join(lines) + "\n").encode()
    lines = text.split("\n")  # lines swapped
    a, b = rng.integers(len(lines), size=2)
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines).encode()
