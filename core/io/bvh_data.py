"""A BVH take as arrays (:class:`BvhData`), the error every BVH step raises and
the sane bounds on the numbers a file may hold.

What is refused (each with a sentence naming the line, joint or channel): any
number that is not finite; a Frame Time outside 0.0001-10 s (10,000 to 0.1
frames per second); rotation angles beyond a million degrees; and, after
scaling, offsets, joint positions and position channels beyond 1,000,000 m
(:data:`MAX_DISTANCE`), so that every key Blender stores in float32 is finite.
"""

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..errors import MotionMatchingError


class BvhError(MotionMatchingError):
    """A BVH file that cannot be read, with the reason in plain words."""


# Sane bounds for numbers read from a file (see the module docstring and README).
MIN_FRAME_TIME = 1e-4        # seconds (10,000 frames per second)
MAX_FRAME_TIME = 10.0        # seconds (0.1 frames per second)
MAX_ANGLE = 1e6              # degrees (2,778 turns; float64 still resolves 1e-10 degree)
MAX_DISTANCE = 1e6           # metres after scaling: offsets, rest heads, position channels
MIN_SCALE, MAX_SCALE = 1e-6, 1e6


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
        return dataclasses.replace(self, motion=self.motion[start:stop], first_frame=self.first_frame + start)


def snap_rate(fps):
    nearest = round(fps)
    return float(nearest) if nearest > 0 and abs(fps - nearest) <= 1e-4 * fps else float(fps)


def clip(text, limit=40):
    """A token as quoted in a message, shortened when very long."""
    return text if len(text) <= limit else text[:limit] + "..."
