"""Numbers that judge a bake against its own data.

Foot sliding (notes section 10): for each foot, the horizontal distance its toe
travels between consecutive frames while it is low (under the take's planted toe
height plus a margin), summed in metres, and per foot per second of movement
(frames whose root moves faster than 0.2 m/s). The raw take is measured the same
way, so a bake is judged against the sliding already in its data.
"""

import numpy as np

LOW_MARGIN = 0.02      # m above the planted toe height that still counts as low
MOVING_SPEED = 0.2     # m/s of root speed that counts as moving


def planted_height(toe_heights, contacts):
    """The toe height of planted feet: the median height over contact frames
    (all frames when there is none)."""
    h = np.asarray(toe_heights, dtype=np.float64)
    c = np.asarray(contacts, dtype=bool)
    return float(np.median(h[c])) if c.any() else float(np.median(h))


def foot_sliding(toes, root_pos, fps, floor, segments=None, margin=LOW_MARGIN):
    """Sliding of each foot. ``toes`` (T, 2, 3) (toes, or ankles with a larger
    margin), ``root_pos`` (T, 3); ``floor`` the planted height; ``margin`` how
    far above it still counts as low; ``segments`` (T,) ids of continuous pieces (steps
    across pieces, e.g. between clips, are not counted).

    Returns a dict: metres per foot, moving seconds, and centimetres per foot per
    moving second (the mean of both feet).
    """
    toes = np.asarray(toes, dtype=np.float64)
    root = np.asarray(root_pos, dtype=np.float64)
    T = len(toes)
    if T < 2:
        return {"left_m": 0.0, "right_m": 0.0, "moving_s": 0.0, "cm_per_foot_per_moving_s": 0.0}
    same = np.ones(T - 1, dtype=bool) if segments is None else (segments[1:] == segments[:-1])
    low = toes[:, :, 2] < floor + margin
    both_low = low[1:] & low[:-1] & same[:, None]
    step = np.linalg.norm(toes[1:, :, :2] - toes[:-1, :, :2], axis=2)
    slide = np.where(both_low, step, 0.0).sum(axis=0)
    speed = np.linalg.norm(root[1:, :2] - root[:-1, :2], axis=1) * fps
    moving_s = float(np.sum((speed > MOVING_SPEED) & same) / fps)
    per = 100.0 * slide.mean() / moving_s if moving_s > 0 else 0.0
    return {"left_m": float(slide[0]), "right_m": float(slide[1]), "moving_s": moving_s,
            "cm_per_foot_per_moving_s": float(per)}


SLIDING_MARGINS = (("toe", 0.02), ("ankle", 0.03))   # m above the planted height that counts as low


def sliding_report(baked_toes, baked_ankles, baked_root, take_toes, take_ankles, take_root, contacts, fps,
                   segments=None):
    """The bake report's sliding figures: toes and ankles of the bake (S, 2, 3)
    each, or None without legs, at ``fps`` along ``baked_root`` (S, 3), judged
    against the take's own (N, 2, 3) along ``take_root`` (N, 3) measured the
    same way; the planted heights come from the take's ``contacts`` (N, 2).
    ``segments`` (N,): the take's clip of each row (steps between clips are not
    counted). Returns a dict of the report's fields (README, report.json)."""
    contacts = np.asarray(contacts, dtype=bool)
    measured = {}
    for key, margin in SLIDING_MARGINS:
        take, baked = (take_toes, baked_toes) if key == "toe" else (take_ankles, baked_ankles)
        take = np.asarray(take)
        floor = planted_height(take[:, :, 2].ravel(), contacts.ravel())
        raw = foot_sliding(take, take_root, fps, floor, segments=segments, margin=margin)
        ours = foot_sliding(baked, baked_root, fps, floor, margin=margin) if baked is not None else None
        measured[key] = (raw, ours, floor)

    def pair(m):
        return {"left": m["left_m"], "right": m["right_m"]} if m else {"left": 0.0, "right": 0.0}

    def per(m):
        return m["cm_per_foot_per_moving_s"] if m else 0.0

    toe, ankle = measured["toe"], measured["ankle"]
    return {
        "foot_sliding_m": pair(toe[1]),
        "foot_sliding_cm_per_foot_per_moving_s": per(toe[1]),
        "raw_foot_sliding_m": pair(toe[0]),
        "raw_foot_sliding_cm_per_foot_per_moving_s": per(toe[0]),
        "ankle_sliding_cm_per_foot_per_moving_s": per(ankle[1]),
        "raw_ankle_sliding_cm_per_foot_per_moving_s": per(ankle[0]),
        "planted_toe_height_m": toe[2], "planted_ankle_height_m": ankle[2],
        "moving_s": toe[1]["moving_s"] if toe[1] else 0.0,
    }


def tracking(root_pos, controller_pos):
    """Horizontal distance between the baked root and the controller per frame,
    with mean and max."""
    d = np.linalg.norm(np.asarray(root_pos)[:, :2] - np.asarray(controller_pos)[:, :2], axis=1)
    return d, float(d.mean()), float(d.max())


def worst_moments(frames, costs, count=3, min_gap=10):
    """The ``count`` highest costs, at least ``min_gap`` frames apart: [(frame, cost)]."""
    order = np.argsort(-np.asarray(costs), kind="stable")
    picked = []
    for i in order:
        if all(abs(int(frames[i]) - f) >= min_gap for f, _c in picked):
            picked.append((int(frames[i]), float(costs[i])))
        if len(picked) == count:
            break
    return picked


def largest_rotation_steps(quats):
    """Per joint, the largest angle (radians) between consecutive frames of
    quaternions (T, J, 4)."""
    q = np.asarray(quats, dtype=np.float64)
    if len(q) < 2:
        return np.zeros(q.shape[1])
    dots = np.abs(np.sum(q[1:] * q[:-1], axis=-1)) / (
        np.linalg.norm(q[1:], axis=-1) * np.linalg.norm(q[:-1], axis=-1))
    return (2.0 * np.arccos(np.clip(dots, -1.0, 1.0))).max(axis=0)
