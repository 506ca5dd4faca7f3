"""The bake report's planted figures and warnings, from joint positions.

numpy only. The caller passes world (or armature-space) positions of the hips,
hip joints, ankles and toes on every frame of the bake, the played data's
contact flags, and the raw take sampled at the same rate; the figures are those
of :mod:`core.measure.path_metrics` (the same functions the path benchmark measures the
keys with), so the report and an independent measurement agree.

Warnings are plain sentences naming frame ranges (scene frames): where most
searches jump (a frozen pose), where the feet do not step while the body
travels, where a planted foot slides more than 5 cm in one step, where the body
faces more than 20 degrees off the travel direction (or the asked facing), and
where the path asks for a speed or turn rate the database does not cover, or
stands where the database cannot. Against an asked facing (Strafe) the body is
the upper body (upper-arm heads) when it is known: the strafe warp turns the legs
toward the travel on purpose; the hip joints' figure is reported beside it.
"""

from dataclasses import dataclass

import numpy as np

from . import path_metrics as pm

STEP_SLIDE_LIMIT = 0.05       # m a planted foot may slide in one step before a warning
FACING_LIMIT = 20.0           # degrees off before a warning
FACING_SECONDS = 0.5          # ... held at least this long
JUMP_RUN = 6                  # consecutive searches that all jump back: a frozen pose
FROZEN_ROWS = 20              # ... to within this many rows of the row played at the search before
COVERAGE_MARGIN = 1.1         # the path may ask this much more than the database's largest
COVERAGE_SECONDS = 0.25       # ... for at least this long before a warning
MAX_RANGES = 4                # frame ranges named per warning


@dataclass
class Joints:
    """Joint positions sampled ``fps`` times a second (metres, Z up)."""

    fps: float
    hips: np.ndarray          # (T, 3)
    hip_joints: np.ndarray    # (T, 2, 3) left, right upper-leg heads
    ankles: np.ndarray        # (T, 2, 3)
    toes: np.ndarray          # (T, 2, 3)
    contacts: np.ndarray      # (T, 2) bool: the played data's contact flags
    shoulders: np.ndarray = None   # (T, 2, 3) left, right upper-arm heads, when known


def pooled_sliding(takes, floor, contacts=True):
    """:func:`path_metrics.ankle_sliding` over several :class:`Joints` (clips)
    pooled: metres and moving seconds summed, then cm per foot per moving second."""
    left = right = moving = 0.0
    for j in takes:
        if len(j.hips) < 2:
            continue
        s = pm.ankle_sliding(j.ankles, j.hips, j.fps, floor, contacts=j.contacts if contacts else None)
        left, right, moving = left + s["left_m"], right + s["right_m"], moving + s["moving_s"]
    per = 100.0 * 0.5 * (left + right) / moving if moving > 0 else 0.0
    return {"left_m": left, "right_m": right, "moving_s": moving, "cm_per_foot_per_moving_s": per}


def _runs(mask):
    """(first, last) index of each run of True in a 1-D bool array."""
    m = np.asarray(mask, dtype=np.int8)
    edges = np.diff(np.concatenate([[0], m, [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def _ranges(runs, frames, most=MAX_RANGES):
    """'frames 12-40, 80-95 and 3 more' for runs of indices into ``frames``
    (overlapping runs merged; at most ``most`` named, None: all)."""
    merged = []
    for a, b in sorted(runs):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    runs = merged
    most = len(runs) if most is None else most
    parts = ["%d-%d" % (frames[a], frames[b]) for a, b in runs[:most]]
    more = len(runs) - most
    text = ", ".join(parts)
    return "frames " + text + (" and %d more" % more if more > 0 else "")


def step_slides(ankles, fps, floor, contacts):
    """Each planted stance of each foot (a run of steps the foot is planted and
    the data says contact): (side, first frame index, last frame index, metres
    slid horizontally)."""
    planted = pm.planted(ankles, fps, floor, contacts=contacts)
    steps = pm.horizontal_steps(ankles)
    out = []
    for side in range(2):
        for a, b in _runs(planted[:, side]):
            out.append((side, int(a), int(b + 1), float(steps[a:b + 1, side].sum())))
    return out


def figures(bake, raw_takes, floor, path=None, asked_facing=None):
    """The report's measured figures of a bake (:class:`Joints`) against the raw
    take's clips (list of :class:`Joints` at the same rate). ``path`` (T, 2 or
    3): the controller on the bake's frames; ``asked_facing`` (T, 2) or None."""
    fps = bake.fps
    slide = pm.ankle_sliding(bake.ankles, bake.hips, fps, floor, contacts=bake.contacts)
    raw = pooled_sliding(raw_takes, floor)
    ratio = slide["cm_per_foot_per_moving_s"] / raw["cm_per_foot_per_moving_s"] \
        if raw["cm_per_foot_per_moving_s"] > 0 else float("nan")
    facing = pm.body_facing(bake.hip_joints[:, 0], bake.hip_joints[:, 1])
    travel = pm.travel_facing_error(facing, bake.hips, fps)
    out = {
        "planted_ankle_height_m": float(floor),
        "contact_sliding_cm_per_foot_per_moving_s": slide["cm_per_foot_per_moving_s"],
        "raw_contact_sliding_cm_per_foot_per_moving_s": raw["cm_per_foot_per_moving_s"],
        "contact_sliding_ratio": float(ratio),
        "contact_sliding_m": {"left": slide["left_m"], "right": slide["right_m"]},
        "seed_ankle_sliding_m_per_14_5_s": pm.seed_sliding(bake.ankles, fps)["m_per_seconds"],
        "facing_error_travel_mean_deg": travel["mean_deg"],
        "facing_error_asked_mean_deg": None,
        "hips_facing_error_asked_mean_deg": None,
    }
    if asked_facing is not None:
        # The asked facing is the upper body's (the strafe warp turns the legs toward
        # travel); the hip joints' figure is kept beside it.
        hips_off = pm.asked_facing_error(facing, asked_facing)["mean_deg"]
        out["hips_facing_error_asked_mean_deg"] = hips_off
        out["facing_error_asked_mean_deg"] = hips_off if bake.shoulders is None else pm.asked_facing_error(
            pm.body_facing(bake.shoulders[:, 0], bake.shoulders[:, 1]), asked_facing)["mean_deg"]
    if path is not None:
        t = pm.tracking(bake.hips, path)
        out["hips_tracking_mean_m"], out["hips_tracking_max_m"] = t["mean_m"], t["max_m"]
    return out


def warnings(bake, frames, floor, searched, jumped, path=None, asked_facing=None, coverage=None, rows=None):
    """Plain sentences with frame ranges (see the module notes). ``frames`` (T,)
    scene frames of the samples; ``searched`` and ``jumped`` (T,) bool per frame;
    ``path`` (T, 2 or 3) the controller; ``coverage``: the database's largest
    root speed (m/s) and turn rate (rad/s), or None; ``rows`` (T,) the database
    row played at each frame, or None."""
    fps = bake.fps
    frames = np.asarray(frames).astype(np.int64)
    out = []
    # A frozen pose: runs of searches that all jumped back to about the pose that
    # played at the search before (without ``rows``: that all jumped).
    at = np.flatnonzero(np.asarray(searched, dtype=bool))
    if len(at):
        j = np.asarray(jumped, dtype=bool)[at]
        if rows is not None:
            played = np.asarray(rows, dtype=np.int64)[at]
            j = j & (np.abs(np.diff(played, prepend=played[0] - 2 * FROZEN_ROWS)) <= FROZEN_ROWS)
        runs = [(at[a], at[b]) for a, b in _runs(j) if b - a + 1 >= JUMP_RUN]
        if runs:
            out.append("Most searches jump (%d of %d): the pose may freeze and glide at %s; the database lacks "
                       "motion that fits (widen the tag query or add takes)."
                       % (int(j.sum()), len(j), _ranges(runs, frames)))
    glides = pm.frozen_glides(pm.planted(bake.ankles, fps, floor), bake.hips, fps)
    if glides:
        # Every stretch is named: a glide no warning names is one the user cannot find.
        out.append("The feet do not step while the body travels at %s." % _ranges(glides, frames, most=None))
    slides = [s for s in step_slides(bake.ankles, fps, floor, bake.contacts) if s[3] > STEP_SLIDE_LIMIT]
    if slides:
        slides.sort(key=lambda s: -s[3])
        worst = slides[0]
        runs = sorted((a, b) for _side, a, b, _m in slides)
        times = "once" if len(slides) == 1 else "%d times" % len(slides)
        out.append("A planted foot slides more than %d cm during one contact %s (worst %.0f cm, %s foot at frames "
                   "%d-%d): %s." % (round(100 * STEP_SLIDE_LIMIT), times, 100 * worst[3],
                                    "left" if worst[0] == 0 else "right", frames[worst[1]], frames[worst[2]],
                                    _ranges(runs, frames)))
    facing = pm.body_facing(bake.hip_joints[:, 0], bake.hip_joints[:, 1])
    if asked_facing is not None:
        if bake.shoulders is not None:   # the upper body keeps the asked facing (the legs may warp)
            facing = pm.body_facing(bake.shoulders[:, 0], bake.shoulders[:, 1])
        off = pm.angle_between(facing, np.asarray(asked_facing, dtype=np.float64))
        what = "the asked facing"
    else:
        v = pm.travel_velocity(bake.hips, fps)
        moving = np.linalg.norm(v, axis=1) > pm.TRAVEL_SPEED
        off = np.where(moving, pm.angle_between(facing, v), 0.0)
        what = "the direction of travel"
    runs = [r for r in _runs(off > FACING_LIMIT) if (r[1] - r[0] + 1) >= FACING_SECONDS * fps]
    if runs:
        out.append("The body faces more than %d degrees off %s at %s." % (FACING_LIMIT, what, _ranges(runs, frames)))
    if path is not None and coverage is not None:
        out += _coverage_warnings(np.asarray(path, dtype=np.float64), fps, frames, coverage)
    return out


STAND_SPEED = 0.1      # m/s: the path stands below this ...
STAND_SECONDS = 0.5    # ... for at least this long
STANDING_ROWS = 0.2    # m/s: rows this slow can stand


def _coverage_warnings(path, fps, frames, coverage):
    """Where the path's speed or turn rate exceeds the database's, and where it
    stands while the database has no standing rows. ``coverage``: (largest speed,
    largest turn rate[, lowest speed]) of the rows the search may return."""
    top_speed, top_turn = coverage[:2]
    v = np.gradient(path[:, :2], axis=0) * fps
    speed = np.linalg.norm(v, axis=1)
    heading = np.unwrap(np.arctan2(v[:, 1], v[:, 0]))
    turn = np.where(speed > 0.3, np.abs(np.gradient(heading)) * fps, 0.0)
    out = []
    least = max(1, int(round(COVERAGE_SECONDS * fps)))
    for value, top, text, unit in ((speed, top_speed, "a speed", "m/s"), (turn, top_turn, "a turn rate", "deg/s")):
        runs = [r for r in _runs(value > COVERAGE_MARGIN * top) if r[1] - r[0] + 1 >= least]
        if runs:
            scale = 1.0 if unit == "m/s" else np.degrees(1.0)
            out.append("The path asks for %s up to %.1f %s, more than the database's %.1f %s, at %s." % (
                text, scale * float(value.max()), unit, scale * top, unit, _ranges(runs, frames)))
    if len(coverage) > 2 and coverage[2] > STANDING_ROWS:
        runs = [r for r in _runs(speed < STAND_SPEED) if r[1] - r[0] + 1 >= STAND_SECONDS * fps]
        if runs:
            out.append("The path stands still at %s, but the rows the search may play do not stand (99%% of them "
                       "move faster than %.1f m/s): the character steps in place there (add standing frames, e.g. "
                       "idle, to the tag query)." % (_ranges(runs, frames), coverage[2]))
    return out


def database_coverage(root_positions, root_yaws, clip_index, fps, allowed):
    """The largest root speed (m/s) and turn rate (rad/s) over the allowed rows
    (99th percentile, so single noisy frames do not count), per clip differences,
    and the lowest speed (1st percentile: 0 when the rows can stand)."""
    p = np.asarray(root_positions, dtype=np.float64)
    yaw = np.asarray(root_yaws, dtype=np.float64)
    clip = np.asarray(clip_index)
    same = clip[1:] == clip[:-1]
    speed = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1) * fps
    dyaw = np.abs(np.angle(np.exp(1j * np.diff(yaw)))) * fps
    ok = same & np.asarray(allowed, dtype=bool)[:-1]
    if not ok.any():
        return 0.0, 0.0, 0.0
    return (float(np.percentile(speed[ok], 99)), float(np.percentile(dyaw[ok], 99)),
            float(np.percentile(speed[ok], 1)))
