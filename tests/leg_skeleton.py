"""A small two-legged skeleton for core bake tests (no Blender)."""

import numpy as np

from core.bake import pipeline as bake


def leg_skeleton():
    """root, hips, then per leg upper, lower, foot, toe (left on +X); rest offsets
    relative to the parent, identity rotations."""
    names = ["root", "hips", "l_up", "l_low", "l_foot", "l_toe", "r_up", "r_low", "r_foot", "r_toe"]
    parents = np.array([-1, 0, 1, 2, 3, 4, 1, 6, 7, 8])
    offs = [(0, 0, 0), (0, 0, 0.95), (0.1, 0, -0.05), (0, 0, -0.42), (0, 0, -0.40), (0, -0.14, -0.07),
            (-0.1, 0, -0.05), (0, 0, -0.42), (0, 0, -0.40), (0, -0.14, -0.07)]
    offsets = np.tile(np.eye(4), (len(names), 1, 1))
    offsets[:, :3, 3] = offs
    return bake.BakeSkeleton(names=names, parents=parents, offsets=offsets, root=0, hips=1,
                             legs=[(2, 3, 4, 5), (6, 7, 8, 9)])
