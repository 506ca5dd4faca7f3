"""Stride warping: scale each step's length along the
direction of travel so that planted feet stay planted when the root travels
faster or slower than the rows it plays.

The bake moves the root by the played rows' own root motion, then pulls it
toward the path (up to half its own motion) and clamps it. A foot the data
plants then slides by the difference between the root's travel and the
data's. Placing each toe, relative to the root, at ``k`` times its distance
along the data's direction of travel (``k`` the root's travel along that
direction over the data's, both summed over a short window) makes a planted
toe move back under the body exactly as fast as the root moves forward; a
swinging toe covers ``k`` times the data's stride. The legs' IK puts the feet
there (core.bake); heights are left alone.
"""

import numpy as np

from .leg_release import slew_limited

STRIDE_WINDOW = 0.2          # s: the travel compared is summed over this centred window
STRIDE_SPEED = (0.15, 0.4)   # m/s of the data's travel over which the warp fades in
STRIDE_RANGE = (0.6, 1.6)    # the step length is scaled by at most these factors
PLAYING = (0.5, 0.8)         # share of the window's steps that play on (no jump) over which the warp fades in


def data_travel(root_pos, root_yaw, row_steps, rows):
    """(S, 2) the played rows' own ground travel of each step into the next,
    turned into the world by the root's yaw (the last step repeats)."""
    local = np.asarray(row_steps, dtype=np.float64)[rows, :2]
    c, s = np.cos(root_yaw), np.sin(root_yaw)
    return np.stack([c * local[:, 0] - s * local[:, 1], s * local[:, 0] + c * local[:, 1]], axis=1)


def _window_sum(v, half):
    """Sums of ``v`` (S, 2) over the centred windows of 2 * half + 1 samples (cut at the ends)."""
    c = np.concatenate([np.zeros((1, v.shape[1])), np.cumsum(v, axis=0)])
    i = np.arange(len(v))
    return c[np.minimum(i + half + 1, len(v))] - c[np.maximum(i - half, 0)]


def stride_scale(root_pos, data_steps, dt, jumped=None, window=STRIDE_WINDOW, speeds=STRIDE_SPEED,
                 limits=STRIDE_RANGE, rate=0.0):
    """Per step: the scale ``k`` (S,) of the step length and the data's unit
    direction of travel (S, 2). ``root_pos`` (S, 2 or 3) the baked root;
    ``data_steps`` (S, 2) the data's own travel from each step to the next;
    ``jumped`` (S,) the steps where the played row jumped (None: none). Where
    most steps of the window jump, the pose hardly plays its own steps (a
    frozen pose), so there is no stride to scale. ``rate`` > 0: the scale
    changes by at most this much a second (a swinging toe half a metre from
    the root moves by the change times that distance, so a scale that swings
    from its least to its most in a few steps, as the speeds of a start or a
    jump change, snaps the knee)."""
    root = np.asarray(root_pos, dtype=np.float64)[:, :2]
    actual = np.diff(root, axis=0, append=root[-1:])
    actual[-1] = actual[-2] if len(actual) > 1 else 0.0
    half = max(1, int(round(0.5 * window / dt)))
    A, D = _window_sum(actual, half), _window_sum(np.asarray(data_steps, dtype=np.float64), half)
    length = np.linalg.norm(D, axis=1)
    u = D / np.maximum(length, 1e-12)[:, None]
    k = np.clip(np.sum(A * u, axis=1) / np.maximum(length, 1e-12), *limits)
    # Where the data hardly travels (standing, turning on the spot) there is no stride to scale.
    span = (np.minimum(np.arange(len(D)) + half, len(D) - 1) - np.maximum(np.arange(len(D)) - half, 0) + 1) * dt
    fade = np.clip((length / span - speeds[0]) / (speeds[1] - speeds[0]), 0.0, 1.0)
    if jumped is not None:
        playing = 1.0 - _window_sum(np.asarray(jumped, dtype=np.float64)[:, None], half)[:, 0] * dt / span
        fade *= np.clip((playing - PLAYING[0]) / (PLAYING[1] - PLAYING[0]), 0.0, 1.0)
    k = 1.0 + (k - 1.0) * fade
    if rate > 0 and len(k):
        k = slew_limited(k, rate * dt)
    return k, u


def warped_toes(toes, root_pos, k, u):
    """Toes (S, n, 3) moved so that each one's distance from the root along
    ``u`` (S, 2) is scaled by ``k`` (S,); heights unchanged."""
    toes = np.asarray(toes, dtype=np.float64)
    rel = toes[..., :2] - np.asarray(root_pos, dtype=np.float64)[:, None, :2]
    along = np.sum(rel * u[:, None], axis=-1)
    out = toes.copy()
    out[..., :2] += ((k - 1.0)[:, None] * along)[..., None] * u[:, None]
    return out
