"""Stage 1 of the bake: the spring character's future at the feature times, as
the trajectory part of every step's query (in the character's ground frame)."""

import numpy as np

from ..database import clip_features, feature_spec


def trajectory_queries(spec, sim_pos, sim_yaw, fps):
    """Raw query columns of the trajectory groups for every step (S, D); the
    bone columns are left zero (they come from the playing row)."""
    S = len(sim_pos)
    q = np.zeros((S, spec.dim))
    slices = feature_spec.group_slices(spec)
    cos, sin = np.cos(sim_yaw), np.sin(sim_yaw)

    def local_xy(v):
        # R(yaw)^T v for a yaw rotation about Z.
        return np.stack([cos * v[:, 0] + sin * v[:, 1], -sin * v[:, 0] + cos * v[:, 1]], axis=1)

    for g in spec.groups:
        if not g.is_trajectory:
            continue
        cols = slices[g.name]
        out = []
        for t in g.times_s:
            k = clip_features.frame_offset(t, fps)
            idx = np.clip(np.arange(S) + k, 0, S - 1)
            if g.kind == "trajectory_position":
                out.append(local_xy(sim_pos[idx] - sim_pos))
            else:
                fy = sim_yaw[idx]
                out.append(local_xy(np.stack([np.sin(fy), -np.cos(fy)], axis=1)))
        q[:, cols] = np.concatenate(out, axis=1)
    return q
