"""Thin test takes: what users bring (tools/convention_takes.py, ``thin``).

The sample's own skeleton cut into clips of 3-6 s that each keep moving one
way (no stand, no reversal, no turn on the spot), with feet that slide a
little (the body drifts to and fro, about 7 cm per foot per moving second)
and a body that sinks now and then so the toes dip below the floor; 30 fps.
"""

import os

import numpy as np

from tools.bvh_writer import write_skeleton
from tools.convention_takes import POS, ZXY, hips_forward

THIN_FPS = 30
THIN_MIN_SPEED = 0.6       # m/s of hips speed a thin clip never drops under
THIN_MAX_TURN = 90.0       # degrees per second the travel may turn within a clip
THIN_MAX_OFF = 60.0        # degrees the hips may face away from their travel
THIN_GAP_S = 0.3           # a lapse this short within a run is kept
THIN_SECONDS = (3.0, 4.0, 5.0, 6.0)   # clip lengths, taken in turn
THIN_DRIFT_CM = 3.7        # amplitude of the to-and-fro drift (cm, the sample's unit)
THIN_DRIFT_HZ = 1.1
THIN_SINK_CM = 3.0         # deepest sink of the body (toes below the floor)
THIN_SINK_S = 2.3          # period of the sink


def _travel(take):
    """Hips speed (m/s), travel heading and facing-off-travel (radians) per frame,
    over a centred 0.5 s window."""
    hips = take.pos_of("Hips")[:, [0, 2]] * 0.01
    half = max(1, int(round(0.25 / take.frame_time)))
    padded = np.concatenate([np.repeat(hips[:1], half, 0), hips, np.repeat(hips[-1:], half, 0)])
    v = (padded[2 * half:] - padded[:-2 * half]) / (2 * half * take.frame_time)
    heading = np.unwrap(np.arctan2(v[:, 0], v[:, 1]))
    facing = take.rot_of("Hips") @ hips_forward(take)
    off = np.angle(np.exp(1j * (np.arctan2(facing[:, 0], facing[:, 2]) - heading)))
    return np.linalg.norm(v, axis=1), heading, off


def thin_clips(take):
    """(start, stop) frame ranges of the thin clips: runs of frames moving fast
    enough, turning slowly and facing their travel, cut into 3-6 s pieces."""
    speed, heading, off = _travel(take)
    turn = np.degrees(np.abs(np.gradient(heading))) / take.frame_time
    good = (speed > THIN_MIN_SPEED) & (turn < THIN_MAX_TURN) & (np.degrees(np.abs(off)) < THIN_MAX_OFF)
    # Short lapses (a wobble of the heading within a straight run) do not end a run.
    gap = int(round(THIN_GAP_S / take.frame_time))
    edges = np.diff(np.concatenate([[0], good.astype(np.int8), [0]]))
    for a, b in zip(np.flatnonzero(edges == -1)[:-1], np.flatnonzero(edges == 1)[1:]):
        if b - a <= gap and speed[a:b].min() > THIN_MIN_SPEED:
            good[a:b] = True
    edges = np.diff(np.concatenate([[0], good.astype(np.int8), [0]]))
    clips, k = [], 0
    for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
        while True:
            n = int(round(THIN_SECONDS[k % len(THIN_SECONDS)] / take.frame_time))
            if b - a < int(round(THIN_SECONDS[0] / take.frame_time)):
                break
            n = min(n, b - a)
            clips.append((int(a), int(a + n)))
            a, k = a + n, k + 1
    return clips


def thin_takes(take, folder, every=2):
    """The thin clips (see the module docstring); ``take`` at 60 fps, written at
    every ``every``-th frame. Returns the paths written."""
    rows = list(range(len(take.names)))
    channels = [POS + ZXY if p < 0 else ZXY for p in take.parents]
    os.makedirs(folder, exist_ok=True)
    paths = []
    for k, (a, b) in enumerate(thin_clips(take)):
        keep = np.arange(a, b, every)
        t = (keep - a) * take.frame_time
        shift = np.zeros((len(keep), 3))
        shift[:, 0] = THIN_DRIFT_CM * np.sin(2 * np.pi * THIN_DRIFT_HZ * t)
        shift[:, 2] = THIN_DRIFT_CM * np.cos(2 * np.pi * THIN_DRIFT_HZ * 0.7 * t)
        shift[:, 1] = -0.5 * THIN_SINK_CM * (1.0 - np.cos(2 * np.pi * t / THIN_SINK_S))
        pos = take.pos[keep] + shift[:, None]
        path = os.path.join(folder, "thin_%02d.bvh" % (k + 1))
        write_skeleton(path, [take.names[j] for j in rows], list(take.parents), take.offsets, channels,
                       take.rot[keep], pos, every * take.frame_time, end_sites=_end_sites_of(take))
        paths.append(path)
    return paths


def _end_sites_of(take):
    return {j: tuple(e) for j, e in enumerate(take.end_sites) if e is not None}
