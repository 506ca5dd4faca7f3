"""Timing along a curve (the curve controller): the offset along a curve over
frames at a constant speed, with speed keys and stops, as Bezier keys."""

import math
from dataclasses import dataclass

import numpy as np

from .scenario import ScenarioError


@dataclass
class CurveTiming:
    """Keys of the offset along a curve (0 at its start, 1 at its end) over frames.

    ``frames``, ``offsets`` (K,); ``slope_left``/``slope_right`` (K,) offset per
    frame on either side of each key; ``linear`` (K-1,) True where a segment is
    straight (constant speed), else it is a quadratic (speed changing linearly,
    an exact cubic Bezier with handles a third of the way along).
    """

    frames: np.ndarray
    offsets: np.ndarray
    slope_left: np.ndarray
    slope_right: np.ndarray
    linear: np.ndarray
    frame_end: float
    length: float

    def handles(self):
        """Bezier handles (K, 2) left and right that make each segment exact."""
        f, y = self.frames, self.offsets
        gap = np.diff(f) / 3.0
        left_gap = np.concatenate([gap[:1], gap])
        right_gap = np.concatenate([gap, gap[-1:]])
        left = np.stack([f - left_gap, y - self.slope_left * left_gap], axis=1)
        right = np.stack([f + right_gap, y + self.slope_right * right_gap], axis=1)
        return left, right

    def evaluate(self, frames):
        """Offsets at ``frames`` (constant outside the keys)."""
        return _piecewise(self, np.asarray(frames, dtype=np.float64))


def _piecewise(timing, frames):
    f, y = timing.frames, timing.offsets
    k = np.clip(np.searchsorted(f, frames, side="right") - 1, 0, len(f) - 2)
    h = f[k + 1] - f[k]
    s = np.clip((frames - f[k]) / h, 0.0, 1.0)
    y0, y1 = y[k], y[k + 1]
    d0, d1 = timing.slope_right[k], timing.slope_left[k + 1]
    return y0 + (y1 - y0) * (3 * s * s - 2 * s ** 3) + h * (d0 * (s ** 3 - 2 * s * s + s) + d1 * (s ** 3 - s * s))


def _finite(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise ScenarioError("%s must be a finite number (got %r)." % (what, v))
    return float(v)


def curve_timing(length, fps, frame_start, frame_end=None, speed=None, stops=()):
    """When the controller is where along a curve of ``length`` metres.

    ``speed``: None to cover the curve evenly from ``frame_start`` to ``frame_end``;
    a number in m/s for a constant speed (the end follows from the length); or speed
    keys ``[(frame, m/s), ...]``, the speed changing linearly between keys and held
    before the first and after the last. ``stops``: ``[(frame, seconds), ...]``,
    the frame where the controller stops (on the resulting timeline) and how long
    it stands; the motion after a stop comes that much later, so stops push the
    end later. A stop must begin after the previous one ends and before the
    controller reaches the end of the curve.
    """
    length = _finite(length, "The curve length")
    fps = _finite(fps, "The frame rate")
    frame_start = _finite(frame_start, "The start frame")
    if length <= 0.0:
        raise ScenarioError("The curve has no length.")
    if fps <= 0.0:
        raise ScenarioError("The frame rate must be positive.")
    key_f, key_v = _speed_keys(length, fps, frame_start, frame_end, speed)
    stop_list = _stop_list(stops, fps)
    segs, end = _timing_segments(length, frame_start, key_f, key_v, stop_list)
    return _timing_from_segments(segs, end, length)


def _speed_keys(length, fps, frame_start, frame_end, speed):
    """Stage 1 of :func:`curve_timing`: the speed keys as (frames, metres per frame)."""
    if speed is None:
        if frame_end is None:
            raise ScenarioError("Give an end frame or a speed.")
        frame_end = _finite(frame_end, "The end frame")
        if frame_end <= frame_start:
            raise ScenarioError("The end frame (%g) must come after the start frame (%g)."
                                % (frame_end, frame_start))
        return [frame_start], [length / (frame_end - frame_start)]
    if isinstance(speed, (int, float, np.integer, np.floating)) and not isinstance(speed, bool):
        v = _finite(speed, "The speed")
        if v <= 0.0:
            raise ScenarioError("The speed must be positive (got %g m/s)." % v)
        return [frame_start], [v / fps]
    pairs = sorted((_finite(f, "A speed key's frame"), _finite(v, "A speed key's speed"))
                   for f, v in _pairs(speed, "speed key"))
    if not pairs:
        raise ScenarioError("Give at least one speed key.")
    for (f0, _), (f1, _) in zip(pairs[:-1], pairs[1:]):
        if f1 - f0 < 1e-6:
            raise ScenarioError("Two speed keys are on frame %g." % f0)
    if any(v < 0.0 for _, v in pairs):
        raise ScenarioError("Speeds must not be negative.")
    return [f for f, _ in pairs], [v / fps for _, v in pairs]


def _stop_list(stops, fps):
    """Stage 2: the stops, sorted, as (frame, frames standing)."""
    stop_list = []
    for f, sec in sorted(_pairs(stops, "stop")):
        f = _finite(f, "A stop's frame")
        sec = _finite(sec, "A stop's duration")
        if sec <= 0.0:
            raise ScenarioError("The stop at frame %g must last a positive time (got %g s)." % (f, sec))
        stop_list.append((f, sec * fps))
    return stop_list


def _timing_segments(length, frame_start, key_f, key_v, stop_list):
    """Stage 3: walk the timeline from ``frame_start`` to where the curve is
    covered, one segment per speed ramp or stop: returns the segments
    ``(f0, f1, d0, d1, v0, v1)`` (frames, metres covered, metres per frame)
    and the end frame."""
    eps = 1e-6
    knots = [f for f in key_f if f > frame_start + eps]

    def v_at(f):
        return float(np.interp(f, key_f, key_v))

    segs = []
    f, dist, i = frame_start, 0.0, 0
    while True:
        if i < len(stop_list) and stop_list[i][0] <= f + eps:
            s, hold = stop_list[i]
            if s < f - eps:
                if i == 0:
                    raise ScenarioError("The stop at frame %g is before the start frame %g." % (s, frame_start))
                raise ScenarioError("The stop at frame %g starts before the previous stop ends (frame %g)."
                                    % (s, f))
            segs.append((f, f + hold, dist, dist, 0.0, 0.0))
            f += hold
            i += 1
            continue
        nxt = min([k for k in knots if k > f + eps] + ([stop_list[i][0]] if i < len(stop_list) else [])
                  + [math.inf])
        v0 = v_at(f)
        v1 = v_at(nxt) if nxt < math.inf else v0
        span = (v0 + v1) / 2.0 * (nxt - f) if nxt < math.inf else (math.inf if v0 > 0 else 0.0)
        if dist + span >= length * (1.0 - 1e-12):
            # The curve ends inside this ramp: solve need = v0 tau + acc tau^2 / 2
            # for tau (in the form that stays exact when acc is 0).
            need = length - dist
            acc = (v1 - v0) / (nxt - f) if nxt < math.inf else 0.0
            tau = 2.0 * need / (v0 + math.sqrt(max(v0 * v0 + 2.0 * acc * need, 0.0)))
            end = f + tau
            segs.append((f, end, dist, length, v0, v0 + acc * tau))
            break
        if nxt == math.inf:
            raise ScenarioError("The speed keys leave the controller standing before the end of the curve "
                                "(%.2f of %.2f m covered)." % (dist, length))
        segs.append((f, nxt, dist, dist + span, v0, v1))
        dist += span
        f = nxt
    if i < len(stop_list):
        raise ScenarioError("The stop at frame %g starts after the controller reaches the end of the curve "
                            "(frame %.2f)." % (stop_list[i][0], end))
    return segs, end


def _timing_from_segments(segs, end, length):
    """Stage 4: the :class:`CurveTiming` of the segments (offsets and slopes as
    fractions of the curve)."""
    eps = 1e-6
    # Drop zero-length segments (a speed key right on a stop's end).
    segs = [sg for sg in segs if sg[1] - sg[0] > eps] or segs[-1:]
    frames = np.array([sg[0] for sg in segs] + [segs[-1][1]])
    offsets = np.array([sg[2] for sg in segs] + [segs[-1][3]]) / length
    slope_right = np.array([sg[4] for sg in segs] + [0.0]) / length
    slope_left = np.array([0.0] + [sg[5] for sg in segs]) / length
    linear = np.array([abs(sg[4] - sg[5]) <= 1e-12 * max(abs(sg[4]), 1e-300) for sg in segs])
    offsets[-1] = 1.0
    return CurveTiming(frames, offsets, slope_left, slope_right, linear, float(end), length)


def _pairs(values, what):
    out = []
    for p in values or ():
        try:
            a, b = p
        except (TypeError, ValueError):
            raise ScenarioError("Each %s must be a pair (frame, value) (got %r)." % (what, p)) from None
        out.append((a, b))
    return out


def parse_pairs(text, what="stop"):
    """Parse ``"120:1.0, 300:2"`` into ``[(120.0, 1.0), (300.0, 2.0)]`` (empty text: [])."""
    out = []
    for item in (x.strip() for x in text.replace(";", ",").split(",")):
        if not item:
            continue
        parts = item.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            a, b = float(parts[0]), float(parts[1])
            if not (math.isfinite(a) and math.isfinite(b)):
                raise ValueError
        except ValueError:
            raise ScenarioError("Cannot read %s %r: write frame:value pairs separated by commas, "
                                "like 120:1.0, 300:2." % (what, item)) from None
        out.append((a, b))
    return out
