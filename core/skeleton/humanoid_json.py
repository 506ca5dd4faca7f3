"""Mapping presets: a :class:`~.humanoid_joints.Mapping` written to and read from JSON text."""

import json

from ..errors import MotionMatchingError
from ..io import text_input
from ..io.text_input import short_repr
from .humanoid_joints import CANONICAL, HumanoidError, Mapping

_FORMAT = "humanoid-mapping"


def mapping_to_json(mapping):
    """A preset: JSON text with the joints in canonical order."""
    unknown = [k for k in mapping if k not in CANONICAL]
    if unknown:
        raise HumanoidError("Unknown humanoid joints: %s." % ", ".join(map(repr, unknown)))
    joints = {}
    for k in CANONICAL:
        v = mapping.get(k)
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise HumanoidError("The bone for %s must be a name, not %r." % (k, v))
        joints[k] = v
    return json.dumps({"format": _FORMAT, "version": 1, "joints": joints}, indent=2)


def mapping_from_json(text):
    """Read a preset written by :func:`mapping_to_json` (or a plain
    ``{joint: bone}`` object), given as text or as the file's bytes (UTF-8,
    UTF-16 or UTF-32); return a :class:`Mapping` with method "preset"."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text_input.decode(bytes(text), "The mapping preset", allow_utf16=True)
        except MotionMatchingError as ex:
            raise HumanoidError(str(ex)) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise HumanoidError("The mapping preset nests lists or objects too deeply to read.") from None
    except (TypeError, ValueError) as ex:
        where = " (line %d, column %d)" % (ex.lineno, ex.colno) if hasattr(ex, "lineno") else ""
        raise HumanoidError("The mapping preset is not valid JSON%s." % where) from None
    try:
        text_input.check_depth(data, "The mapping preset")
    except MotionMatchingError as ex:
        raise HumanoidError(str(ex)) from None
    if not isinstance(data, dict):
        raise HumanoidError("The mapping preset must be a JSON object of joint: bone pairs.")
    if "joints" in data:
        if data.get("format", _FORMAT) != _FORMAT:
            raise HumanoidError("The preset's format is %s, not %r."
                                % (short_repr(data.get("format")), _FORMAT))
        if data.get("version", 1) != 1:
            raise HumanoidError("The preset is version %s; this add-on reads version 1."
                                % (short_repr(data.get("version")),))
        data = data["joints"]
        if not isinstance(data, dict):
            raise HumanoidError("The preset's \"joints\" must be an object of joint: bone pairs.")
    unknown = [k for k in data if k not in CANONICAL]
    if unknown:
        shown = ", ".join(short_repr(k) for k in unknown[:8]) + (", ..." if len(unknown) > 8 else "")
        raise HumanoidError("The preset names unknown humanoid joints: %s (the joints are %s)."
                            % (shown, ", ".join(CANONICAL)))
    joints = {}
    for k, v in data.items():
        if v is None or v == "":
            continue
        if not isinstance(v, str):
            raise HumanoidError("The preset's bone for %s must be a name, not %s." % (k, short_repr(v)))
        joints[k] = v
    return Mapping(joints, method="preset")
