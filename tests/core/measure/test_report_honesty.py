"""The report's figures say what the user asked about: the
asked facing is measured on the upper body (the strafe warp turns the legs on
purpose) with the hip joints' figure beside it; every frozen glide is named by
a warning; a path that stands where the database cannot stand is warned of."""

import re

import numpy as np

from core.measure import bake_quality
from core.measure import path_metrics as pm

FPS = 30.0


def _walker(T, fps=FPS):
    """Hips at 1.2 m/s along +X, hip joints facing +X, both ankles planted."""
    t = np.arange(T) / fps
    hips = np.column_stack([1.2 * t, np.zeros(T), np.full(T, 0.95)])
    ankles = np.zeros((T, 2, 3))
    ankles[..., 0] = 0.3
    ankles[..., 1] = [0.1, -0.1]
    ankles[..., 2] = 0.08
    hip_joints = np.stack([hips + [0, 0.1, 0], hips + [0, -0.1, 0]], axis=1)
    return bake_quality.Joints(fps=fps, hips=hips, hip_joints=hip_joints, ankles=ankles, toes=ankles + [0.1, 0, -0.05],
                               contacts=np.ones((T, 2), dtype=bool))


def test_asked_facing_is_the_upper_bodys_and_the_hips_figure_is_named():
    T = 90
    j = _walker(T)
    # The legs face travel (+X); the upper body keeps the asked facing, +Y.
    j.shoulders = np.stack([j.hips + [-0.2, 0, 0.4], j.hips + [0.2, 0, 0.4]], axis=1)
    asked = np.tile([0.0, 1.0], (T, 1))
    f = bake_quality.figures(j, [_walker(T)], 0.08, path=j.hips, asked_facing=asked)
    assert abs(f["facing_error_asked_mean_deg"]) < 1e-6
    assert abs(f["hips_facing_error_asked_mean_deg"] - 90.0) < 1e-6
    assert abs(f["facing_error_travel_mean_deg"]) < 1e-6      # travel: still the hip joints
    w = bake_quality.warnings(j, np.arange(1, T + 1), 0.08, np.zeros(T, bool), np.zeros(T, bool),
                              asked_facing=asked)
    assert not [s for s in w if "faces more than" in s], w
    # Without known shoulders both figures are the hip joints'.
    j.shoulders = None
    f = bake_quality.figures(j, [_walker(T)], 0.08, asked_facing=asked)
    assert f["facing_error_asked_mean_deg"] == f["hips_facing_error_asked_mean_deg"] > 89.0


def test_every_frozen_glide_is_named():
    T = 600
    j = _walker(T)
    # Both feet lift for 3 frames every 1.5 s: between, nothing steps for over 0.5 s.
    for start in range(20, T, 45):
        j.ankles[start:start + 3, :, 2] = 0.4
    frames = np.arange(1, T + 1)
    glides = pm.frozen_glides(pm.planted(j.ankles, FPS, 0.08), j.hips, FPS)
    assert len(glides) > bake_quality.MAX_RANGES + 5
    w = [s for s in bake_quality.warnings(j, frames, 0.08, np.zeros(T, bool), np.zeros(T, bool))
         if s.startswith("The feet do not step")]
    assert len(w) == 1 and "more" not in w[0]
    named = [tuple(int(v) for v in m) for m in re.findall(r"(\d+)-(\d+)", w[0])]
    assert named == [(frames[a], frames[b]) for a, b in glides]


def test_a_path_that_stands_where_the_rows_cannot_is_warned_of():
    T = 150
    path = np.zeros((T, 3))
    path[:, 0] = np.concatenate([np.linspace(0, 1, 30), np.ones(60), 1 + np.linspace(0, 1, 60)])
    frames = np.arange(1, T + 1)
    w = bake_quality._coverage_warnings(path, FPS, frames, (2.0, 10.0, 0.8))
    assert len(w) == 1 and w[0].startswith("The path stands still at frames ") and "faster than 0.8 m/s" in w[0], w
    start, end = (int(v) for v in re.search(r"frames (\d+)-(\d+)", w[0]).groups())
    assert 30 <= start <= 33 and 88 <= end <= 92
    # Rows that can stand (or a database of old, two figures): nothing to say.
    assert bake_quality._coverage_warnings(path, FPS, frames, (2.0, 10.0, 0.0)) == []
    assert bake_quality._coverage_warnings(path, FPS, frames, (2.0, 10.0)) == []


def test_database_coverage_gives_the_slowest_rows():
    fps = 60.0
    walk = np.column_stack([np.arange(120) * 1.0 / fps, np.zeros(120), np.zeros(120)])    # 1 m/s
    stand = np.zeros((120, 3))
    pos = np.concatenate([walk, stand])
    clip = np.repeat([0, 1], 120)
    yaw = np.zeros(240)
    only_walk = np.arange(240) < 120
    top, turn, low = bake_quality.database_coverage(pos, yaw, clip, fps, only_walk)
    assert abs(top - 1.0) < 1e-9 and abs(low - 1.0) < 1e-9 and turn == 0.0
    assert bake_quality.database_coverage(pos, yaw, clip, fps, np.ones(240, bool))[2] == 0.0
