"""The ground the bake walks on: a height grid over the path's bounds, in the
space the database skeleton walks in (z up), made by the bridge from the scene's
Ground mesh (Blender's ray casts) and read here with numpy alone.

Empty cells (no face under them) are NaN in ``heights``; the path must have
ground under every sample and lie within :data:`MAX_PATH_GAP` of it.
"""

from dataclasses import dataclass

import numpy as np

from .settings import BakeError

GROUND_CELL = 0.025      # m: grid spacing (a 30 cm tread is 12 cells; a 16 cm riser's edge is one cell off)
GROUND_MARGIN = 1.5      # m: the grid reaches this far beyond the path's bounds (the feet, the swing)
GROUND_MAX_CELLS = 400_000   # the cell grows beyond GROUND_CELL on very long paths to stay under this
MAX_PATH_GAP = 2.0       # m: the ground may lie no farther than this above or below the path


@dataclass
class GroundGrid:
    """Heights (ny, nx) and unit normals (ny, nx, 3) on the cells' centres
    ``x0 + i * cell``, ``y0 + j * cell`` (row j, column i)."""

    name: str
    x0: float
    y0: float
    cell: float
    heights: np.ndarray
    normals: np.ndarray

    def _corners(self, xy):
        ny, nx = self.heights.shape
        u = np.clip((np.asarray(xy)[..., 0] - self.x0) / self.cell, 0.0, nx - 1.000001)
        v = np.clip((np.asarray(xy)[..., 1] - self.y0) / self.cell, 0.0, ny - 1.000001)
        i, j = np.floor(u).astype(np.int64), np.floor(v).astype(np.int64)
        return i, j, u - i, v - j

    def _bilinear(self, values, xy):
        i, j, a, b = self._corners(xy)
        if values.ndim == 3:
            a, b = a[..., None], b[..., None]
        return ((values[j, i] * (1 - a) + values[j, i + 1] * a) * (1 - b)
                + (values[j + 1, i] * (1 - a) + values[j + 1, i + 1] * a) * b)

    def height_at(self, xy):
        """Heights (...) under points ``xy`` (..., 2+): bilinear between cells,
        except in a cell across a step's edge, where the higher side's height is
        kept (within a cell of a riser, a foot is on the upper tread)."""
        i, j, _, _ = self._corners(xy)
        h = self.heights
        c = np.stack([h[j, i], h[j, i + 1], h[j + 1, i], h[j + 1, i + 1]], axis=-1)
        top = c.max(axis=-1)
        return np.where(top - c.min(axis=-1) > STEP_SLOPE * self.cell, top, self._bilinear(h, xy))

    def normal_at(self, xy):
        """Unit normals (..., 3) under points ``xy``."""
        n = self._bilinear(self.normals, xy)
        return n / np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-12)


# A cell rising more than this times its width (50 degrees; 3 cm in 2.5 cm) is a step's edge, not a slope.
STEP_SLOPE = 1.2


def filled(heights, normals):
    """Empty cells (NaN) given the lowest height found and an upward normal."""
    empty = ~np.isfinite(heights)
    h = np.where(empty, np.nanmin(heights) if (~empty).any() else 0.0, heights)
    n = np.where(empty[..., None], np.array([0.0, 0.0, 1.0]), normals)
    return h, n


def grid_points(path_xy):
    """(x0, y0, cell, nx, ny, points (ny, nx, 2)) of the grid over ``path_xy``'s
    bounds (with :data:`GROUND_MARGIN`), for the bridge to sample."""
    lo = np.min(path_xy, axis=0) - GROUND_MARGIN
    hi = np.max(path_xy, axis=0) + GROUND_MARGIN
    cell = max(GROUND_CELL, float(np.sqrt(np.prod(hi - lo) / GROUND_MAX_CELLS)))
    nx, ny = (np.ceil((hi - lo) / cell).astype(int) + 1).tolist()
    xs, ys = lo[0] + cell * np.arange(nx), lo[1] + cell * np.arange(ny)
    return float(lo[0]), float(lo[1]), cell, nx, ny, np.stack(np.meshgrid(xs, ys), axis=-1)


def checked_ground(name, x0, y0, cell, heights, normals, path):
    """The :class:`GroundGrid` of sampled ``heights`` (ny, nx; NaN: no face) and
    ``normals``, refused (BakeError, one sentence) when there is no ground under
    the controller's ``path`` (S, 3) or it lies over :data:`MAX_PATH_GAP` from it."""
    heights = np.asarray(heights, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    if not np.isfinite(heights).any():
        raise BakeError("The ground '%s' has no faces under the controller's path." % name)
    raw = GroundGrid(name, x0, y0, cell, heights, normals)
    i, j, _, _ = raw._corners(path[:, :2])
    under = np.stack([heights[j, i], heights[j, i + 1], heights[j + 1, i], heights[j + 1, i + 1]])
    missing = ~np.isfinite(under).any(axis=0)
    if missing.any():
        raise BakeError("The ground '%s' has no faces under part of the controller's path (from %.2f, %.2f m)."
                        % (name, path[missing][0, 0], path[missing][0, 1]))
    h, n = filled(heights, normals)
    grid = GroundGrid(name, x0, y0, cell, h, n)
    gap = np.abs(grid.height_at(path[:, :2]) - path[:, 2])
    if gap.max() > MAX_PATH_GAP:
        raise BakeError("The ground '%s' lies %.2f m from the controller's path height (at most %g m)."
                        % (name, gap.max(), MAX_PATH_GAP))
    return grid
