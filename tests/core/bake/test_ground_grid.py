"""The bake on a ground height grid (core.bake.ground, core.bake.legs.ground), no Blender."""

import re

import numpy as np
import pytest

from core.bake import ground as gr
from core.bake.pose import forward_kinematics
from core.bake.settings import BakeError
from core.job import run
from walk_database import walk_database


@pytest.fixture(scope="module")
def database():
    return walk_database()


def _path(database, speed=0.6, frame_end=121):
    frames = run.frames_to_key(1, frame_end)
    steps = run.step_frames(database, frames, 30.0)
    world = np.column_stack([np.zeros(len(steps)), -speed * (steps - 1) / 30.0, np.zeros(len(steps))])
    return run.ControllerPath.from_world(world, None, frames, 30.0, armature_world=np.eye(4))


def _grid(path, height):
    """A GroundGrid of ``height(x, y)`` sampled as the bridge does, normals by differences."""
    x0, y0, cell, nx, ny, pts = gr.grid_points(path.positions[:, :2])
    h = height(pts[..., 0], pts[..., 1])
    gy, gx = np.gradient(h, cell)
    flat = np.abs(gx) + np.abs(gy) > 1.0     # a riser: the treads either side keep an upward normal
    gx, gy = np.where(flat, 0.0, gx), np.where(flat, 0.0, gy)
    n = np.stack([-gx, -gy, np.ones_like(h)], axis=-1)
    return gr.checked_ground("Test", x0, y0, cell, h, n / np.linalg.norm(n, axis=-1, keepdims=True),
                             path.positions)


def slope(x, y, degrees=12.0):
    return np.tan(np.radians(degrees)) * np.maximum(-y - 0.5, 0.0)


def stairs(x, y, riser=0.16):
    return riser * np.clip(np.floor((-y - 0.61) / 0.3) + 1, 0, 5)


def steep(x, y):
    return slope(x, y, 20.0)


def high_steps(x, y):
    return stairs(x, y, 0.18)


def _foot_points(out):
    pose = forward_kinematics(out.skeleton, out.result.locations, out.result.rotations)
    legs = out.skeleton.legs
    ankles = pose[:, [l[2] for l in legs]][:, :, :3, 3]
    toes = pose[:, [l[3] for l in legs]][:, :, :3, 3]
    return ankles, toes, pose[:, out.skeleton.hips, :3, 3]


def test_the_grid_reads_slopes_between_cells_and_steps_on_the_upper_side(database):
    path = _path(database)
    g = _grid(path, stairs)
    assert g.height_at(np.array([0.0, -0.75])) == pytest.approx(0.16)
    assert g.height_at(np.array([0.0, -0.905])) == pytest.approx(0.32)   # a cell from the riser: up
    s = _grid(path, slope)
    assert s.height_at(np.array([0.013, -1.513])) == pytest.approx(slope(0.0, -1.513), abs=1e-9)


@pytest.mark.parametrize("shape", [slope, stairs, steep, high_steps])
def test_feet_stand_on_the_ground_and_the_hips_follow_it(database, shape):
    path = _path(database)
    flat = run.run(database, path, measure=False)
    out = run.run(database, path, measure=False, ground=_grid(path, shape))
    ankles, toes, hips = _foot_points(out)
    f_ankles, f_toes, f_hips = _foot_points(flat)
    for points, flat_points in ((ankles, f_ankles), (toes, f_toes)):
        under = shape(points[..., 0], points[..., 1])
        # Each point keeps at least about its flat clearance over the ground beneath it.
        assert (points[..., 2] - under).min() > min(flat_points[..., 2].min(), 0.0) - 0.015
    planted = flat.result.contacts
    gap = toes[..., 2] - shape(toes[..., 0], toes[..., 1])
    assert abs(np.median(gap[planted]) - np.median(f_toes[..., 2][planted])) < 0.03
    above = hips[:, 2] - shape(hips[:, 0], hips[:, 1])
    assert abs(np.median(above) - np.median(f_hips[:, 2])) < 0.1 * np.median(f_hips[:, 2])
    assert hips[-1, 2] > f_hips[-1, 2] + 0.3        # the body went up the hill or the stairs
    assert np.abs(np.diff(hips[:, 2], 2)).max() < 0.01   # smoothly
    np.testing.assert_array_equal(out.result.rows, flat.result.rows)


def test_without_ground_the_keys_are_the_flat_bakes(database):
    path = _path(database)
    a = run.run(database, path, measure=False)
    b = run.run(database, path, measure=False, ground=None)
    np.testing.assert_array_equal(a.rotations, b.rotations)


def _sentence(error):
    return re.fullmatch(r"[A-Z][^.]*'Test'.*\.", str(error.value)) is not None


def test_a_ground_with_nothing_under_the_path_is_refused(database):
    path = _path(database)
    x0, y0, cell, nx, ny, pts = gr.grid_points(path.positions[:, :2])
    h = np.where(pts[..., 1] < -1.0, np.nan, 0.0)
    n = np.tile([0.0, 0.0, 1.0], h.shape + (1,))
    with pytest.raises(BakeError) as e:
        gr.checked_ground("Test", x0, y0, cell, h, n, path.positions)
    assert _sentence(e) and "no faces under part" in str(e.value)
    with pytest.raises(BakeError) as e:
        gr.checked_ground("Test", x0, y0, cell, np.full(h.shape, np.nan), n, path.positions)
    assert _sentence(e) and "no faces under" in str(e.value)


def test_a_ground_far_from_the_path_is_refused(database):
    path = _path(database)
    with pytest.raises(BakeError) as e:
        _grid(path, lambda x, y: 2.5 + 0 * x)
    assert _sentence(e) and "2.50 m" in str(e.value)
    _grid(path, lambda x, y: 1.5 + 0 * x)      # within 2 m: taken


@pytest.mark.parametrize("riser", [0.16, 0.18])
def test_a_swinging_toe_does_not_cut_through_a_steps_edge(database, riser):
    path = _path(database)
    out = run.run(database, path, measure=False, ground=_grid(path, lambda x, y: stairs(x, y, riser)))
    _ankles, toes, _hips = _foot_points(out)
    crossings = 0
    for k in range(5):
        edge = -0.61 - 0.3 * k                          # the riser up to step k + 1
        for side in range(2):
            y, z = toes[:, side, 1], toes[:, side, 2]
            at = np.flatnonzero((y[:-1] > edge) & (y[1:] <= edge))
            for i in at:
                a = (y[i] - edge) / (y[i] - y[i + 1])
                crossings += 1
                # Where the toe passes over the riser (between two steps), it is over the tread above.
                assert z[i] + a * (z[i + 1] - z[i]) > riser * (k + 1) - 0.015, (k, side, i)
    assert crossings >= 5
