"""The virtual root's smoothing windows are seconds, counted in frames at the take's rate."""

import numpy as np
import pytest

from core.skeleton import virtual_root as vr


def test_windows_span_the_same_time_at_any_rate():
    # The defaults give the 60 fps take its 31 and 61 frames as before.
    assert vr.window_frames(vr.POSITION_WINDOW_S, 60.0) == 31
    assert vr.window_frames(vr.DIRECTION_WINDOW_S, 60.0) == 61
    for fps in (24.0, 25.0, 29.97, 30.0, 50.0, 60.0, 120.0):
        for seconds in (0.25, 0.5, 1.0, 2.0):
            frames = vr.window_frames(seconds, fps)
            assert frames % 2 == 1
            assert abs((frames - 1) / fps - seconds) <= 1.0 / fps + 1e-12   # within a frame either way


def test_a_smoothed_root_stays_as_near_the_hips_at_30_and_120_fps():
    # The same walk, the hips swaying 5 cm at 1 Hz, sampled at two rates: the root
    # smoothed over the same seconds lies about as far from the hips at both; the
    # 60 fps window counted in frames (31) spans 1 s at 30 fps and leaves it much further.
    def offset(fps, position_window):
        t = np.arange(int(6 * fps)) / fps
        pose = np.tile(np.eye(4), (len(t), 1, 1))
        pose[:, 0, 3] = 0.05 * np.sin(2 * np.pi * t)
        pose[:, 1, 3] = 1.2 * t
        pose[:, 2, 3] = 1.0
        pos, _quat = vr.root_trajectory(pose, np.array([0.0, -1.0, 0.0]), smooth=True,
                                        position_window=position_window,
                                        direction_window=vr.window_frames(1.0, fps))
        inner = (t > 1.0) & (t < 5.0)
        return np.abs(pos[inner, 0] - pose[inner, 0, 3]).max()

    at_30, at_120 = (offset(fps, vr.window_frames(0.5, fps)) for fps in (30.0, 120.0))
    assert abs(at_30 - at_120) < 0.002
    assert offset(30.0, 31) > 5 * at_30


def test_windows_refuse_nonsense():
    with pytest.raises(vr.VirtualRootError, match="positive number of seconds"):
        vr.window_frames(0.0, 30.0)
    with pytest.raises(vr.VirtualRootError, match="frame rate"):
        vr.window_frames(0.5, float("nan"))
