"""The codes of F-Curve keys as ``foreach_get`` reads them (interpolation,
easing, extrapolation) and the error for keys evaluated elsewhere."""

import numpy as np

from ..errors import MotionMatchingError

# Keyframe.interpolation, as foreach_get reads it (checked on Blender 4.2, 4.5, 5.0).
CONSTANT, LINEAR, BEZIER = 0, 1, 2
BACK, BOUNCE, CIRC, CUBIC, ELASTIC, EXPO, QUAD, QUART, QUINT, SINE = range(3, 13)
INTERPOLATION = {
    "CONSTANT": CONSTANT, "LINEAR": LINEAR, "BEZIER": BEZIER, "BACK": BACK, "BOUNCE": BOUNCE,
    "CIRC": CIRC, "CUBIC": CUBIC, "ELASTIC": ELASTIC, "EXPO": EXPO, "QUAD": QUAD,
    "QUART": QUART, "QUINT": QUINT, "SINE": SINE,
}
# Keyframe.easing.
EASE_AUTO, EASE_IN, EASE_OUT, EASE_IN_OUT = 0, 1, 2, 3
EASING = {"AUTO": EASE_AUTO, "EASE_IN": EASE_IN, "EASE_OUT": EASE_OUT, "EASE_IN_OUT": EASE_IN_OUT}
# FCurve.extrapolation.
EXTRAPOLATION = {"CONSTANT": 0, "LINEAR": 1}

# Key values, handles and frames are float32, as Blender keeps them.
F32 = np.float32


class UnsupportedCurve(MotionMatchingError):
    """The keys use something core.io.fcurve_eval does not evaluate; ask Blender instead.

    ``curve_index`` is the position of the offending curve in the batch."""

    def __init__(self, message, curve_index=0):
        super().__init__(message)
        self.curve_index = curve_index


def subset(mask):
    """Indices where ``mask`` holds; a plain slice when it holds everywhere."""
    return slice(None) if mask.all() else np.flatnonzero(mask)
