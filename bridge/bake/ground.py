"""The scene's Ground mesh as the bake reads it: Blender's ray casts (a BVH tree of
the evaluated mesh) straight down the bake space's z onto a grid over the path
(core.bake.ground.grid_points), handed to core as heights and normals."""

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

from ...core.bake import ground as core_ground
from ...core.bake.settings import BakeError


RAY_BAND = 20.0     # m: rays start this far above the path and reach this far under it


def ground_object(context, name=""):
    """The object named ``name``, else the scene's Ground, or None (the flat floor at 0)."""
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise BakeError("There is no ground object named '%s'." % name)
        return obj
    return context.scene.motion_matching.ground


def checked_object(obj):
    """Refuse a ground that is not a mesh (one sentence)."""
    if obj.type != "MESH":
        raise BakeError("The ground '%s' is not a mesh (it is a %s): choose a mesh object or clear Ground."
                        % (obj.name, obj.type.lower()))
    return obj


def sample_ground(context, obj, world_to_bake, path):
    """core.bake.ground.GroundGrid of mesh ``obj`` over ``path`` (S, 3, bake space),
    ``world_to_bake`` (4, 4) taking the world into the bake's space."""
    checked_object(obj)
    # The live preview passes a stand-in context (its scene alone): Blender's own then.
    depsgraph = getattr(context, "evaluated_depsgraph_get", bpy.context.evaluated_depsgraph_get)()
    tree = BVHTree.FromObject(obj, depsgraph)
    x0, y0, cell, nx, ny, points = core_ground.grid_points(path[:, :2])
    # Rays from well above the path to well under it: a ground beyond MAX_PATH_GAP is found, then refused.
    top = float(path[:, 2].max()) + RAY_BAND
    depth = top - float(path[:, 2].min()) + RAY_BAND
    to_bake = np.asarray(world_to_bake, dtype=np.float64)
    local = np.linalg.inv(np.asarray(obj.matrix_world, dtype=np.float64)) @ np.linalg.inv(to_bake)
    back = to_bake @ np.asarray(obj.matrix_world, dtype=np.float64)
    flat = points.reshape(-1, 2)
    origins = np.column_stack([flat, np.full(len(flat), top), np.ones(len(flat))]) @ local.T
    down = local[:3, :3] @ np.array([0.0, 0.0, -1.0])
    reach = float(np.linalg.norm(down)) * depth
    direction = Vector((down / np.linalg.norm(down)).tolist())
    hits = np.full((len(flat), 3), np.nan)
    normals = np.tile([0.0, 0.0, 1.0], (len(flat), 1))
    cast = tree.ray_cast
    for k, o in enumerate(origins[:, :3].tolist()):
        loc, nor, _index, _dist = cast(Vector(o), direction, reach)
        if loc is not None:
            hits[k] = loc
            normals[k] = nor
    found = np.isfinite(hits[:, 0])
    heights = np.full(len(flat), np.nan)
    heights[found] = (hits[found] @ back[:3, :3].T + back[:3, 3])[:, 2]
    # Normals go through the inverse transpose; one facing down (a face seen from below) is turned up.
    n = normals @ np.linalg.inv(back[:3, :3])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
    n = np.where(n[:, 2:] < 0, -n, n)
    return core_ground.checked_ground(obj.name, x0, y0, cell, heights.reshape(ny, nx), n.reshape(ny, nx, 3), path)


def world_to_bake(armature_world, path_scale=1.0, to_bake=None):
    """The matrix taking the world into the space the database skeleton walks
    (as core.job.run.ControllerPath.from_world takes positions there)."""
    if to_bake is not None:
        return np.asarray(to_bake, dtype=np.float64)
    m = np.linalg.inv(np.asarray(armature_world, dtype=np.float64))
    return np.diag([1.0 / path_scale] * 3 + [1.0]) @ m

