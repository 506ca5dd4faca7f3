"""Small text files a user gives the add-on (dance cards, bone maps, scenarios):
read with a size cap, decoded, parsed as JSON or TOML, with every failure a
:class:`~core.errors.MotionMatchingError` sentence (no UnicodeDecodeError or
RecursionError reaches the user).

Accepted encodings: UTF-8 (with or without a byte-order mark) and, for JSON,
UTF-16 and UTF-32 (the encodings JSON allows; Windows editors save "Unicode"
as UTF-16). Anything else, such as Latin-1, is refused with a sentence asking
for UTF-8. Arrays and tables may nest at most :data:`MAX_DEPTH` deep.
"""

import json
import os

from ..errors import MotionMatchingError

try:
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11 has no tomllib
    tomllib = None

MAX_DEPTH = 32
MAX_BYTES = 64 * 1024 * 1024


def read_bytes(path, what, max_bytes=None):
    """The bytes of ``path`` (at most ``max_bytes``, default :data:`MAX_BYTES`);
    ``what`` names the file in messages ("The dance card 'x.toml'")."""
    path = os.fspath(path)
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    try:
        size = os.path.getsize(path)
        if os.path.isdir(path):
            raise IsADirectoryError
        if size > max_bytes:
            raise MotionMatchingError("%s is %.0f MB; files of this kind are at most %.0f MB."
                                      % (what, size / 1e6, max_bytes / 1e6))
        with open(path, "rb") as fh:
            return fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise MotionMatchingError("%s does not exist; check the path." % what) from None
    except IsADirectoryError:
        raise MotionMatchingError("%s is a folder, not a file." % what) from None
    except OSError as ex:
        raise MotionMatchingError("%s cannot be read (%s)." % (what, ex.strerror or ex)) from None


_UTF16_32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"\xff\xfe", b"\xfe\xff")


def decode(raw, what, allow_utf16=False):
    """Text of ``raw``: UTF-8 (a byte-order mark is dropped), or UTF-16/32 when
    ``allow_utf16`` (detected the way JSON defines it)."""
    if allow_utf16 and (raw.startswith(_UTF16_32_BOMS) or (len(raw) >= 2 and (raw[0] == 0 or raw[1] == 0))):
        try:
            return raw.decode(json.detect_encoding(raw)).lstrip("\ufeff")
        except (UnicodeDecodeError, LookupError):
            raise MotionMatchingError("%s is not valid UTF-16 or UTF-32 text; save it as UTF-8." % what) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as ex:
        raise MotionMatchingError(
            "%s is not UTF-8 text (byte %d cannot be read; it may be in Latin-1 or another legacy "
            "encoding); save it as UTF-8." % (what, ex.start)) from None


def check_depth(data, what, limit=MAX_DEPTH):
    """Refuse lists and tables nested deeper than ``limit`` (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise MotionMatchingError("%s nests lists or tables more than %d deep." % (what, limit))
        stack.extend((child, depth + 1) for child in children)
    return data


def parse_json(raw, what):
    """Parsed JSON of ``raw`` (bytes or text), with a sentence for every failure."""
    text = decode(raw, what, allow_utf16=True) if isinstance(raw, (bytes, bytearray)) else raw
    try:
        data = json.loads(text)
    except RecursionError:
        raise MotionMatchingError("%s nests lists or tables too deeply to read." % what) from None
    except json.JSONDecodeError as ex:
        raise MotionMatchingError("%s is not valid JSON: %s at line %d, column %d."
                                  % (what, ex.msg, ex.lineno, ex.colno)) from None
    except ValueError as ex:  # e.g. a number with too many digits
        raise MotionMatchingError("%s is not valid JSON: %s." % (what, ex)) from None
    return check_depth(data, what)


def parse_toml(raw, what):
    """Parsed TOML of ``raw`` (bytes or text), with a sentence for every failure."""
    text = decode(raw, what) if isinstance(raw, (bytes, bytearray)) else raw
    if tomllib is None:  # pragma: no cover
        raise MotionMatchingError("%s is TOML, which needs Python 3.11 or later." % what)
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise MotionMatchingError("%s nests lists or tables too deeply to read." % what) from None
    except tomllib.TOMLDecodeError as ex:
        raise MotionMatchingError("%s is not valid TOML: %s." % (what, ex)) from None
    except ValueError as ex:
        raise MotionMatchingError("%s is not valid TOML: %s." % (what, ex)) from None
    return check_depth(data, what)


_REPR = None


def short_repr(value, limit=60):
    """repr() of a value read from a file, shortened for a message (long text,
    big or deeply nested lists)."""
    global _REPR
    if _REPR is None:
        import reprlib

        _REPR = reprlib.Repr()
        _REPR.maxlevel = 3
        _REPR.maxstring = limit
        _REPR.maxother = limit
        _REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = 6
    return _REPR.repr(value)
