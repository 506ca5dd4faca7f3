"""Figures that judge a retarget or a bake on a character in world space.

Everything here takes plain arrays (metres, Z up): joints are bone heads, as
every measure of a character should be (an importer places tails by a guess).

- Segment directions: a limb's direction is from one joint's head to the next
  one's (upper arm: shoulder joint to elbow). The angle between the source's
  and the target's segment on each frame, less the angle the two rest poses
  already differ by, says how far the retarget bent a limb away.
- The hips' horizontal travel against the controller's path length, and the
  horizontal distance between them, say whether the character follows.
- The lowest point of the skinned mesh per frame says whether it sinks
  through the floor or floats; on frames where the character stands, it is
  where the soles are.
"""

import numpy as np

from ..errors import MotionMatchingError

__all__ = [
    "SEGMENTS",
    "to_world",
    "pose_heads",
    "segment_directions",
    "segment_angles",
    "angle_excess",
    "path_length",
    "horizontal_distance",
    "travel",
    "lowest_heights",
    "standing_frames",
    "soles_height",
]

# (name, from joint, to joint): the segments compared between two characters.
SEGMENTS = (
    ("left upper arm", "LeftUpperArm", "LeftLowerArm"),
    ("right upper arm", "RightUpperArm", "RightLowerArm"),
    ("left forearm", "LeftLowerArm", "LeftHand"),
    ("right forearm", "RightLowerArm", "RightHand"),
    ("left thigh", "LeftUpperLeg", "LeftLowerLeg"),
    ("right thigh", "RightUpperLeg", "RightLowerLeg"),
    ("left shin", "LeftLowerLeg", "LeftFoot"),
    ("right shin", "RightLowerLeg", "RightFoot"),
    ("spine", "Spine", "Neck"),
    ("neck", "Neck", "Head"),
)


def to_world(matrix_world, points):
    """Points (..., 3) through a 4x4 object matrix (or one per frame, (F, 4, 4)
    with points (F, ..., 3))."""
    m = np.asarray(matrix_world, dtype=np.float64)
    p = np.asarray(points, dtype=np.float64)
    if m.ndim == 2:
        return p @ m[:3, :3].T + m[:3, 3]
    if m.ndim != 3 or len(m) != len(p):
        raise MotionMatchingError("One object matrix per frame is needed (got %s for %s points)."
                                  % (m.shape, p.shape))
    extra = (1,) * (p.ndim - 2)
    rot = m[:, :3, :3].reshape((len(m),) + extra + (3, 3))
    return np.einsum("...ij,...j->...i", rot, p) + m[:, :3, 3].reshape((len(m),) + extra + (3,))


def pose_heads(pose, matrix_world):
    """World heads (F, J, 3) from armature-space pose matrices (F, J, 4, 4)."""
    pose = np.asarray(pose, dtype=np.float64)
    return to_world(matrix_world, pose[..., :3, 3])


def segment_directions(heads, segments=SEGMENTS):
    """Unit directions (F, S, 3) of ``segments`` from {joint: heads (F, 3)}.
    A segment whose joints are missing or coincide gives NaN."""
    any_joint = next(iter(heads.values()))
    F = len(np.asarray(any_joint))
    out = np.full((F, len(segments), 3), np.nan)
    for s, (_name, a, b) in enumerate(segments):
        if a not in heads or b not in heads:
            continue
        d = np.asarray(heads[b], dtype=np.float64) - np.asarray(heads[a], dtype=np.float64)
        n = np.linalg.norm(d, axis=-1, keepdims=True)
        out[:, s] = np.where(n > 1e-9, d / np.where(n > 1e-9, n, 1.0), np.nan)
    return out


def segment_angles(a, b):
    """Angles in degrees (...) between unit directions a and b (..., 3)."""
    dot = np.clip(np.sum(np.asarray(a) * np.asarray(b), axis=-1), -1.0, 1.0)
    return np.degrees(np.arccos(dot))


def angle_excess(source, target, source_rest, target_rest, segments=SEGMENTS):
    """How far the target's segments point from the source's beyond what their
    rest (T-) poses already differ by.

    ``source``/``target``: {joint: world heads (F, 3)} on the same frames;
    ``*_rest``: {joint: world head (3,)} in each one's T-pose. Returns a dict:
    ``excess_deg`` (mean over frames and segments of the angle less the
    segment's rest angle), ``mean_deg``, ``max_deg`` (raw angles), ``rest_deg``
    (mean rest angle), ``per_segment`` {name: mean excess}. Segments missing
    on either side are left out; none left is an error."""
    src = segment_directions(source, segments)
    tgt = segment_directions(target, segments)
    rest_s = segment_directions({k: np.asarray(v, dtype=np.float64)[None] for k, v in source_rest.items()},
                                segments)[0]
    rest_t = segment_directions({k: np.asarray(v, dtype=np.float64)[None] for k, v in target_rest.items()},
                                segments)[0]
    if src.shape != tgt.shape:
        raise MotionMatchingError("The source has %d frames and the target %d." % (len(src), len(tgt)))
    angles = segment_angles(src, tgt)                       # (F, S)
    rest = segment_angles(rest_s, rest_t)                   # (S,)
    ok = np.isfinite(rest) & np.all(np.isfinite(angles), axis=0)
    if not ok.any():
        raise MotionMatchingError("No segment is known on both characters.")
    excess = angles[:, ok].mean(axis=0) - rest[ok]
    names = [segments[s][0] for s in np.flatnonzero(ok)]
    return {
        "excess_deg": float(excess.mean()),
        "mean_deg": float(angles[:, ok].mean()),
        "max_deg": float(angles[:, ok].max()),
        "rest_deg": float(rest[ok].mean()),
        "per_segment": dict(zip(names, excess.tolist())),
    }


def path_length(points):
    """Horizontal length (m) of a path of points (F, 3): the sum of its steps."""
    p = np.asarray(points, dtype=np.float64)
    if len(p) < 2:
        return 0.0
    return float(np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1).sum())


def horizontal_distance(a, b):
    """Horizontal distance per frame between two paths (F, 3), with its mean and max."""
    d = np.linalg.norm(np.asarray(a, dtype=np.float64)[:, :2] - np.asarray(b, dtype=np.float64)[:, :2], axis=1)
    return d, float(d.mean()), float(d.max())


def travel(hips, controller):
    """The hips' travel against the controller's: a dict of both path lengths
    (m), their ratio in percent (100: the same distance), and the horizontal
    distance between them (mean, max)."""
    hips_m = path_length(hips)
    ctrl_m = path_length(controller)
    _d, mean, worst = horizontal_distance(hips, controller)
    return {"hips_m": hips_m, "controller_m": ctrl_m,
            "percent": 100.0 * hips_m / ctrl_m if ctrl_m > 0 else float("nan"),
            "distance_mean_m": mean, "distance_max_m": worst}


def lowest_heights(points):
    """The lowest height (F,) of each frame's points (F, V, 3)."""
    return np.asarray(points, dtype=np.float64)[..., 2].min(axis=-1)


def standing_frames(positions, fps, speed=0.1):
    """Frames (F,) bool on which a character whose hips are at ``positions``
    (F, 3) stands: horizontal speed under ``speed`` m/s (central differences)."""
    p = np.asarray(positions, dtype=np.float64)[:, :2]
    if len(p) < 2:
        return np.ones(len(p), dtype=bool)
    v = np.gradient(p, axis=0) * float(fps)
    return np.linalg.norm(v, axis=1) < speed


def soles_height(lowest, standing):
    """The height of the soles while standing: the median of the lowest mesh
    point over standing frames (NaN when the character never stands)."""
    lowest = np.asarray(lowest, dtype=np.float64)
    standing = np.asarray(standing, dtype=bool)
    return float(np.median(lowest[standing])) if standing.any() else float("nan")
