"""How well a baked character follows a path, measured from joint positions
alone. numpy only: the callers read world positions from the baked
keys (or any animation) and pass arrays; nothing here knows about the bake.

Conventions: positions in metres, Z up, a character faces -Y at rest; ``fps`` is
the rate of the given samples; arrays of feet are ``(T, 2, 3)``, left then right.
A "step" of an array is the interval between two consecutive samples.

Measures
--------
Sliding (the one definition; the bake report, the path benchmark and the tests
all use :func:`planted` and :func:`ankle_sliding`). A foot (ankle, or toe) is
planted on a step when it is below ``floor + margin`` (``floor``: the take's
planted height) at both ends and moves slower than ``max_speed``; optionally only
where a contact flag (the played data's) is set at both ends too, and only inside
one piece of ``segments`` (clips: a step between two clips is no step). Sliding
is the horizontal distance a planted foot travels, per foot (the mean of both)
per second of movement (steps where the hips move faster than 0.2 m/s
horizontally), in centimetres. The report's "low foot" figures are the same
measure with the speed and contact conditions off (``max_speed=None``): a foot
that is merely low.

The seed write-up's figure: horizontal distance travelled by ankles under 13 cm,
both feet summed, in metres, scaled to 14.5 s (the length of its run).

Facing: the body faces along ``(left hip - right hip) x Z`` on the ground. The
travel direction is the hips' horizontal displacement over a centred window
(half a second by default: the sway of single steps cancels). Errors are mean
absolute angles in degrees over the frames moving faster than 0.5 m/s (travel),
or every frame (an asked facing).

Planted heights: :func:`planted_height` (ankles over the frames whose toe is
slow) is the floor of the planted measure; ``contact_height`` (any heights
over the frames the data flags as contact; core.skeleton.contacts holds it, so
that the bake's toe floor shares it) is the floor of the low-foot figures and
of the bake's toe floor.

Frozen glides: stretches longer than 0.5 s in which the hips travel faster than
0.5 m/s and neither foot changes between planted and not planted (no foot lands
or lifts: a frozen pose, or feet that skate too fast ever to count as planted).

Rotation steps: the angle between consecutive local rotations of each joint;
the bake's largest against the raw take's 99.9th percentile, per joint.
"""

import math

import numpy as np

from ..errors import MotionMatchingError
from ..skeleton.contacts import contact_height

PLANT_MARGIN = 0.03       # m above the planted ankle height that still counts as low
PLANT_MAX_SPEED = 1.0     # m/s: a faster ankle is swinging, not planted
MOVING_SPEED = 0.2        # m/s of hips speed that counts as a second of movement
CONTACT_SPEED = 0.15      # m/s: a toe slower than this is in contact (for the planted height)
SEED_HEIGHT = 0.13        # m: the seed write-up's ankle threshold
SEED_SECONDS = 14.5       # s: the length of the seed write-up's run
TRAVEL_SPEED = 0.5        # m/s: facing against travel is judged above this hips speed
TRAVEL_WINDOW = 0.5       # s: centred window of the travel direction
GLIDE_SPEED = 0.5         # m/s: hips speed of a glide
GLIDE_SECONDS = 0.5       # s: a glide lasts longer than this without a step
GLIDE_MIN_SECONDS = 0.4   # s: travel with no still ankle this long is a glide (glides)
ROTATION_PERCENTILE = 99.9


class PathMetricsError(MotionMatchingError):
    """Arrays that cannot be measured."""


def _points(a, ndim, name):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != ndim or a.shape[-1] != 3 or (ndim == 3 and a.shape[1] != 2):
        shape = "(T, 3)" if ndim == 2 else "(T, 2, 3)"
        raise PathMetricsError("The %s must be an array of shape %s (got %s)." % (name, shape, a.shape))
    if len(a) < 2:
        raise PathMetricsError("The %s need at least two samples (got %d)." % (name, len(a)))
    if not np.all(np.isfinite(a)):
        raise PathMetricsError("The %s hold NaN or infinite values." % name)
    return a


def _same_length(**arrays):
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise PathMetricsError("The %s must have as many samples (got %s)." % (
            " and ".join(lengths), ", ".join(str(n) for n in lengths.values())))


def _rate(fps):
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not math.isfinite(fps) or fps <= 0:
        raise PathMetricsError("The frame rate must be a positive number (got %r)." % (fps,))
    return float(fps)


def step_speeds(points, fps):
    """Speed of each step (T-1, ...) in m/s: 3D distance between consecutive samples."""
    p = np.asarray(points, dtype=np.float64)
    return np.linalg.norm(np.diff(p, axis=0), axis=-1) * fps


def horizontal_steps(points):
    """Horizontal length of each step (T-1, ...)."""
    p = np.asarray(points, dtype=np.float64)
    return np.linalg.norm(np.diff(p[..., :2], axis=0), axis=-1)


def _same_segment(segments, T):
    """(T-1,) bool: the step joins two samples of one segment (all True without ``segments``)."""
    if segments is None:
        return np.ones(T - 1, dtype=bool)
    seg = np.asarray(segments)
    if seg.shape != (T,):
        raise PathMetricsError("The segments must give one id per sample (%d, got %s)." % (T, seg.shape))
    return seg[1:] == seg[:-1]


def moving_seconds(hips, fps, speed=MOVING_SPEED, segments=None):
    """Seconds (steps / fps) in which the hips move faster than ``speed``
    horizontally (steps between two ``segments`` not counted)."""
    hips = _points(hips, 2, "hips")
    fps = _rate(fps)
    moving = (horizontal_steps(hips) * fps > speed) & _same_segment(segments, len(hips))
    return float(np.count_nonzero(moving) / fps)


def planted_height(ankles, toes, fps, contact_speed=CONTACT_SPEED):
    """The take's planted ankle height: the median ankle height over the samples
    whose toe is in contact (slower than ``contact_speed``, central differences;
    all samples when none is)."""
    ankles = _points(ankles, 3, "ankles")
    toes = _points(toes, 3, "toes")
    v = np.gradient(toes, axis=0) * _rate(fps)
    contact = np.linalg.norm(v, axis=-1) < contact_speed
    return contact_height(ankles[..., 2], contact)


def planted(ankles, fps, floor, margin=PLANT_MARGIN, max_speed=PLANT_MAX_SPEED, contacts=None, segments=None):
    """(T-1, 2) bool: each foot planted on each step (see the module docstring).
    ``max_speed`` None: no speed condition; ``contacts`` (T, 2) bool, optional:
    also require the flag at both ends; ``segments`` (T,), optional: only steps
    inside one segment."""
    ankles = _points(ankles, 3, "ankles")
    low = ankles[..., 2] < floor + margin
    out = low[1:] & low[:-1] & _same_segment(segments, len(ankles))[:, None]
    if max_speed is not None:
        out &= step_speeds(ankles, _rate(fps)) < max_speed
    if contacts is not None:
        c = np.asarray(contacts, dtype=bool)
        if c.shape != ankles.shape[:2]:
            raise PathMetricsError("The contacts must have shape %s like the ankles (got %s)."
                                   % (ankles.shape[:2], c.shape))
        out &= c[1:] & c[:-1]
    return out


def ankle_sliding(ankles, hips, fps, floor, margin=PLANT_MARGIN, max_speed=PLANT_MAX_SPEED, contacts=None,
                  segments=None):
    """Planted sliding of ``ankles`` (or toes) (T, 2, 3) along ``hips`` (T, 3):
    metres per foot, moving seconds, and centimetres per foot (mean of both)
    per moving second (see :func:`planted` for the options)."""
    ankles = _points(ankles, 3, "ankles")
    _same_length(ankles=ankles, hips=_points(hips, 2, "hips"))
    mask = planted(ankles, fps, floor, margin, max_speed, contacts, segments)
    slide = np.where(mask, horizontal_steps(ankles), 0.0).sum(axis=0)
    moving = moving_seconds(hips, fps, segments=segments)
    per = 100.0 * float(slide.mean()) / moving if moving > 0 else 0.0
    return {"left_m": float(slide[0]), "right_m": float(slide[1]), "moving_s": moving,
            "cm_per_foot_per_moving_s": per, "planted_s": float(mask.sum() / fps / 2.0)}


def seed_sliding(ankles, fps, height=SEED_HEIGHT, seconds=SEED_SECONDS):
    """The seed write-up's figure: metres travelled horizontally by ankles under
    ``height`` at both ends of a step, both feet summed; and the same scaled to
    ``seconds`` of animation."""
    ankles = _points(ankles, 3, "ankles")
    fps = _rate(fps)
    low = ankles[..., 2] < height
    total = float(np.where(low[1:] & low[:-1], horizontal_steps(ankles), 0.0).sum())
    duration = (len(ankles) - 1) / fps
    return {"total_m": total, "duration_s": duration,
            "m_per_seconds": total * seconds / duration if duration > 0 else 0.0}


def body_facing(left_hip, right_hip):
    """(T, 2) unit ground facing of the body: (left - right) x Z, normalised.
    A character facing -Y has its left hip on +X."""
    lr = np.asarray(left_hip, dtype=np.float64) - np.asarray(right_hip, dtype=np.float64)
    f = np.stack([lr[:, 1], -lr[:, 0]], axis=1)
    return f / np.maximum(np.linalg.norm(f, axis=1, keepdims=True), 1e-12)


def travel_velocity(hips, fps, window_s=TRAVEL_WINDOW):
    """(T, 2) horizontal hips velocity over a centred window of ``window_s``
    seconds (shortened at the ends)."""
    hips = _points(hips, 2, "hips")
    fps = _rate(fps)
    T = len(hips)
    half = max(1, int(round(window_s * fps / 2.0)))
    i = np.arange(T)
    a, b = np.maximum(i - half, 0), np.minimum(i + half, T - 1)
    span = np.maximum(b - a, 1)[:, None] / fps
    return (hips[b, :2] - hips[a, :2]) / span


def angle_between(a, b):
    """Unsigned angles (degrees) between ground vectors (T, 2)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    cross = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    dot = np.sum(a * b, axis=1)
    return np.degrees(np.abs(np.arctan2(cross, dot)))


def travel_facing_error(facing, hips, fps, min_speed=TRAVEL_SPEED, window_s=TRAVEL_WINDOW):
    """Mean, median and largest angle (degrees) between the body facing (T, 2)
    and the travel direction over the frames moving faster than ``min_speed``,
    and how many frames count (the angles are nan when none does)."""
    _same_length(facings=np.asarray(facing), hips=hips)
    v = travel_velocity(hips, fps, window_s)
    mask = np.linalg.norm(v, axis=1) > min_speed
    if not mask.any():
        return {"mean_deg": math.nan, "median_deg": math.nan, "max_deg": math.nan, "frames": 0}
    err = angle_between(np.asarray(facing)[mask], v[mask])
    return {"mean_deg": float(err.mean()), "median_deg": float(np.median(err)), "max_deg": float(err.max()),
            "frames": int(mask.sum())}


def asked_facing_error(facing, asked):
    """Mean and max angle (degrees) between the body facing and an asked facing
    (both (T, 2)), over every frame."""
    _same_length(facings=np.asarray(facing), **{"asked facings": np.asarray(asked)})
    err = angle_between(facing, asked)
    return {"mean_deg": float(err.mean()), "max_deg": float(err.max()), "frames": int(len(err))}


def tracking(hips, target):
    """Horizontal distance between the hips (T, 3) and the path (T, 2 or 3): mean and max."""
    h = _points(hips, 2, "hips")
    t = np.asarray(target, dtype=np.float64)
    _same_length(hips=h, **{"path positions": t})
    d = np.linalg.norm(h[:, :2] - t[:, :2], axis=1)
    return {"mean_m": float(d.mean()), "max_m": float(d.max()), "max_frame": int(np.argmax(d))}


def frozen_glides(planted_steps, hips, fps, speed=GLIDE_SPEED, seconds=GLIDE_SECONDS, window_s=TRAVEL_WINDOW):
    """Stretches where the legs do not step while the body travels.

    ``planted_steps`` (T-1, 2) from :func:`planted`. A frame is travelling when
    the hips' :func:`travel_velocity` exceeds ``speed``. Within each run of
    travelling frames, a gap longer than ``seconds`` between changes of either
    foot's planted state (or the run's ends) is a glide. Returns a list of
    (first frame, last frame), 0-based."""
    p = np.asarray(planted_steps, dtype=bool)
    T = len(p) + 1
    _same_length(**{"planted steps plus one": np.empty(T), "hips": _points(hips, 2, "hips")})
    state = np.concatenate([p, p[-1:]], axis=0)          # per frame: the step that starts there
    change = np.zeros(T, dtype=bool)
    change[1:] = np.any(state[1:] != state[:-1], axis=1)
    moving = np.linalg.norm(travel_velocity(hips, fps, window_s), axis=1) > speed
    edges = np.diff(np.concatenate([[0], moving.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    glides = []
    limit = seconds * fps
    for s, e in zip(starts, ends):
        marks = np.concatenate([[s], s + np.flatnonzero(change[s:e + 1]), [e]])
        for a, b in zip(marks[:-1], marks[1:]):
            if b - a > limit:
                glides.append((int(a), int(b)))
    return glides


def _unsupported_runs(ankles, hips, fps, speed, still):
    """Lengths (in steps) of the runs where the hips move horizontally faster
    than ``speed`` m/s while neither ankle is under ``still`` m/s (per step)."""
    ankles = _points(ankles, 3, "ankles")
    _same_length(ankles=ankles, hips=_points(hips, 2, "hips"))
    fps = _rate(fps)
    travel = horizontal_steps(hips) * fps > speed
    no_foot = np.all(horizontal_steps(ankles) * fps >= still, axis=1)
    bad = np.concatenate([[0], (travel & no_foot).astype(np.int8), [0]])
    edges = np.diff(bad)
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1), fps


def unsupported_stretch(ankles, hips, fps, speed=0.5, still=0.3):
    """The longest stretch, in seconds, where the hips move horizontally faster
    than ``speed`` m/s while neither ankle is nearly still (horizontal speed
    under ``still`` m/s): a body travelling with no foot holding the ground
    (a frozen glide or feet skating). Speeds are per step."""
    runs, fps = _unsupported_runs(ankles, hips, fps, speed, still)
    return float(runs.max() / fps) if len(runs) else 0.0


def glides(ankles, hips, fps, speed=GLIDE_SPEED, still=0.3, seconds=GLIDE_MIN_SECONDS):
    """Glides: stretches of :func:`unsupported_stretch`'s kind lasting at least
    ``seconds``. Returns their count, total and longest length in seconds."""
    runs, fps = _unsupported_runs(ankles, hips, fps, speed, still)
    runs = runs[runs / fps >= seconds - 1e-9]
    return {"count": int(len(runs)), "total_s": float(runs.sum() / fps),
            "longest_s": float(runs.max() / fps) if len(runs) else 0.0}


def rotation_steps(quats):
    """(T-1, J) angle in radians between consecutive rotations (quaternions
    (T, J, 4), w first, any sign)."""
    q = np.asarray(quats, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    dots = np.abs(np.sum(q[1:] * q[:-1], axis=-1))
    return 2.0 * np.arccos(np.clip(dots, 0.0, 1.0))


def rotation_change(quats, raw_quats, names=None, percentile=ROTATION_PERCENTILE, min_raw=1e-4, raw_pairs=None):
    """Each joint's largest rotation step in ``quats`` against the
    ``percentile`` of its steps in ``raw_quats`` (the same joints, at the same
    rate; a list of arrays: a take's clips, pooled). Joints whose raw figure is under ``min_raw`` radians (still joints)
    are left out. ``raw_pairs`` (J,), each joint's counterpart, when the data
    played holds the take's mirror image too: a joint's raw steps then include
    its counterpart's (which its mirror image plays, at the same angles).
    Returns the worst ratio, its joint, and both angles in degrees."""
    clips = list(raw_quats) if isinstance(raw_quats, (list, tuple)) else [raw_quats]
    for q in clips:
        if np.shape(quats)[1:] != np.shape(q)[1:]:
            raise PathMetricsError("The baked and raw rotations must cover the same joints (got %s and %s)."
                                   % (np.shape(quats)[1:], np.shape(q)[1:]))
    steps = rotation_steps(quats)
    # A take of several clips: the steps within each clip (none across two).
    raw_steps = np.concatenate([rotation_steps(q) for q in clips])
    if raw_pairs is not None:
        raw_steps = np.concatenate([raw_steps, raw_steps[:, np.asarray(raw_pairs)]])
    raw = np.percentile(raw_steps, percentile, axis=0)
    worst = steps.max(axis=0)
    ok = raw > min_raw
    if not ok.any():
        return {"ratio": math.nan, "joint": None, "max_deg": math.nan, "raw_deg": math.nan, "frame": -1}
    ratio = np.where(ok, worst / np.where(ok, raw, 1.0), -np.inf)
    j = int(np.argmax(ratio))
    return {"ratio": float(ratio[j]), "joint": names[j] if names is not None else j,
            "max_deg": float(np.degrees(worst[j])), "raw_deg": float(np.degrees(raw[j])),
            "frame": int(np.argmax(steps[:, j]) + 1)}


def lowest(points):
    """The lowest height (metres) reached by any of ``points`` (..., 3)."""
    return float(np.min(np.asarray(points, dtype=np.float64)[..., 2]))
