"""Which side a bone's name says, and the name of its counterpart: the one rule
the humanoid mapping (:mod:`.humanoid_names`) and the mirror (:mod:`.mirror`) share.

A name loses its namespace (``mixamorig:``, anything up to the last ``:`` or
``|``) and a Rigify-style prefix (``DEF-``, ``ORG-``, ``MCH-``, ``VIS_``,
``WGT-``); what is left (the base) is cut into tokens at separators, camelCase
humps and digit runs (``LHipJoint`` -> L, Hip, Joint; ``DEF-upper_arm.L.001`` ->
upper, arm, L, 001); a 3ds Max ``Bip01``/``Bip001`` or MotionBuilder
``Character1`` lead is dropped. The side is then, in this order:

1. a whole token ``left``/``right``/``lft``/``rgt``/``l``/``r`` (any case)
   anywhere: ``LeftUpLeg``, ``HandLeft``, ``Hand_L``, ``hand.L``, ``hand-l``,
   ``l_hand``, ``Bip01 L Thigh``, ``LThumb``; a lone letter written straight
   before a digit is not a side (Xsens' lumbar vertebrae ``L5``, ``L3``);
2. else a token that starts with ``left``/``right`` followed by letters
   (``leftupleg``), or with a lone ``l``/``r`` glued to a body word
   (CMU's ``lhumerus``, ``lradius``, ``lfingers``, ``RHAND``).

Both sides in one name means no side. A side is never read from inside a word
(``Calf``, ``Ball``, ``Clavicle``, ``Pelvis``, ``ROOT`` have none). The
counterpart's name is the same name with every side marker swapped, case kept
(``Left`` -> ``Right``, ``l`` -> ``r``, ``LFT`` -> ``RGT``).
"""

import re

_NAMESPACE_RE = re.compile(r"^.*[:|]")
_PREFIX_RE = re.compile(r"^(ORG|MCH|DEF|VIS|WGT)[-_]", re.IGNORECASE)
_TOKEN_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_LEADS = ("bip", "character")

_WORD_SIDE = {"left": "Left", "lft": "Left", "l": "Left", "right": "Right", "rgt": "Right", "r": "Right"}
_OTHER = {"left": "right", "right": "left", "lft": "rgt", "rgt": "lft", "l": "r", "r": "l"}

# Body words a lone l/r may be glued to (lower case): CMU's ASF names and the
# limb words of the humanoid mapping. A glued side needs one of these after it.
GLUED_WORDS = (
    "hipjoint", "femur", "tibia", "fibula", "foot", "toes", "toe", "toebase", "humerus", "radius", "ulna",
    "wrist", "hand", "fingers", "finger", "thumb", "index", "middle", "pinky", "clavicle", "collar",
    "shoulder", "upperarm", "uparm", "forearm", "lowerarm", "elbow", "arm", "upleg", "upperleg", "thigh",
    "lowerleg", "leg", "shin", "calf", "knee", "ankle", "heel", "hip", "eye", "breast", "scapula",
)


class SideName:
    """What a name says about its side.

    ``base``: the name without namespace and prefix (``prefix``: DEF, ORG...);
    ``tokens``: the base's lower-case tokens without the lead and the side
    markers (a glued marker leaves the rest of its token); ``side``: "Left",
    "Right" or None (``both``: the name says both sides); ``markers``: (start, end) of each side marker in ``name``.
    """

    __slots__ = ("name", "base", "prefix", "tokens", "side", "markers", "both")

    def __init__(self, name):
        self.name = name
        ns = _NAMESPACE_RE.match(name)
        at = ns.end() if ns else 0
        m = _PREFIX_RE.match(name[at:])
        self.prefix = m.group(1).upper() if m else ""
        at += m.end() if m else 0
        self.base = name[at:]
        spans = [(t.group(0).lower(), t.start() + at, t.end() + at) for t in _TOKEN_RE.finditer(self.base)]
        if len(spans) >= 2 and spans[0][0] in _LEADS and spans[1][0].isdigit():
            spans = spans[2:]
        self.side, self.markers, self.tokens = None, [], [t for t, _s, _e in spans]
        # A lone letter written straight before a digit is not a side (Xsens' L5).
        whole = [k for k, (t, s, e) in enumerate(spans)
                 if t in _WORD_SIDE and not (len(t) == 1 and name[e:e + 1].isdigit())]
        self.both = False
        if whole:
            sides = {_WORD_SIDE[spans[k][0]] for k in whole}
            self.both = len(sides) > 1
            if not self.both:
                self.side = sides.pop()
                self.markers = [spans[k][1:] for k in whole]
            self.tokens = [t for k, (t, _s, _e) in enumerate(spans) if k not in whole]
            return
        for k, (t, s, e) in enumerate(spans):
            glued = _glued(t)
            if glued:
                self.side = _WORD_SIDE[glued]
                self.markers = [(s, s + len(glued))]
                self.tokens[k] = t[len(glued):]
                return

    def counterpart(self):
        """The name with every side marker swapped (case kept), or None without a side."""
        if self.side is None:
            return None
        out, last = [], 0
        for s, e in self.markers:
            word = self.name[s:e]
            out += [self.name[last:s], _same_case(word, _OTHER[word.lower()])]
            last = e
        return "".join(out) + self.name[last:]


def _glued(token):
    """The side word a token starts with, glued to what follows, or None."""
    for word in ("left", "right"):
        if token.startswith(word) and len(token) > len(word) and token[len(word):].isalpha():
            return word
    if len(token) > 2 and token[0] in "lr" and token[1:].startswith(GLUED_WORDS):
        return token[0]
    return None


def _same_case(word, target):
    if word.isupper():
        return target.upper()
    if word[:1].isupper():
        return target.capitalize()
    return target


def side_of(name):
    """"Left", "Right" or None: the side ``name`` says."""
    return SideName(name).side


def counterpart_candidate(name):
    """``name`` with its side swapped (``LeftFoot`` -> ``RightFoot``), or None when it says no side."""
    return SideName(name).counterpart()
