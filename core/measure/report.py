"""The bake report: what a bake did and how well, one shape for every bake.

:func:`measure_bake` builds a :class:`BakeReport` from arrays (the bake's
result, its frames and the database's take); :meth:`BakeReport.to_json` gives
the dictionary written to report.json and :meth:`BakeReport.to_text` the table
the command line prints and the text block shows.

Fields of report.json (metres, seconds, degrees; null where a figure cannot be
measured, e.g. the planted figures of a rig without two leg chains):

- ``frames``, ``frame_start``, ``frame_end``, ``fps`` (scene), ``database_fps``,
  ``steps`` (simulation steps), ``searches``, ``jumps``, ``foot_locks``.
- ``floor_raised_frames``, ``floor_raised_max_m``: how often and how far a foot was raised onto the floor.
- Low-foot sliding (the planted measure of core.measure.path_metrics with the
  speed and contact conditions off), the bake against the raw take:
  ``foot_sliding_m`` {left, right} and ``foot_sliding_cm_per_foot_per_moving_s``
  (toes), ``raw_foot_sliding_m``, ``raw_foot_sliding_cm_per_foot_per_moving_s``,
  ``ankle_sliding_cm_per_foot_per_moving_s``,
  ``raw_ankle_sliding_cm_per_foot_per_moving_s``, ``planted_toe_height_m``,
  ``moving_s``.
- ``planted_ankle_height_m``: the take's planted ankle height (the floor of the
  planted measure).
- ``tracking_error_mean_m``, ``tracking_error_max_m``: the root to the controller.
- ``match_cost_mean``, ``match_cost_max``, ``worst_moments`` [{frame, cost}].
- ``bake_seconds``, ``real_time_factor``, ``final_distance_m``.
- Planted sliding (the main figure): ``contact_sliding_cm_per_foot_per_moving_s``,
  ``raw_contact_sliding_cm_per_foot_per_moving_s``, ``contact_sliding_ratio``,
  ``contact_sliding_m`` {left, right}; ``seed_ankle_sliding_m_per_14_5_s``.
- ``facing_error_travel_mean_deg``, ``facing_error_asked_mean_deg``,
  ``hips_facing_error_asked_mean_deg``; ``hips_tracking_mean_m``,
  ``hips_tracking_max_m``: the hips to the path; ``warnings`` (sentences), ``note``.
- Only after a bake onto another rig: ``sole_shift_m``, ``target_foot_locks``,
  ``size_ratio``, ``retargeted_onto``.
"""

from dataclasses import dataclass, field, fields, replace
from typing import Optional

import numpy as np

from ..bake import pipeline as core_bake
from ..bake.legs.floor import lift_summary, lift_words
from ..bake.pose import joint_heads, leg_joints
from ..maths.resample import resample, sample_positions
from . import bake_quality, moves_figures
from . import path_metrics as pm
from . import rig_metrics
from .joints import above_ground, skeleton_joints, take_clips

# m above the take's height (median over contact rows) that counts as low, per foot point.
LOW_MARGINS = (("toe", 0.02), ("ankle", 0.03))
RETARGET_FIELDS = ("sole_shift_m", "target_foot_locks", "size_ratio", "retargeted_onto")


@dataclass
class PerFrame:
    """Per scene frame figures, keyed as custom properties (not in the JSON)."""

    match_cost: np.ndarray       # (F,) cost of the last search
    jump: np.ndarray             # (F,) bool: a search jumped since the previous frame
    contact: np.ndarray          # (F, 2) bool: the played data's contacts
    lock: np.ndarray             # (F, 2) bool: foot lock holds the foot
    tracking_error: np.ndarray   # (F,) m, the root (or the target's hips) to the controller
    root_yaw: np.ndarray         # (F,) rad


def _sides():
    return {"left": 0.0, "right": 0.0}


@dataclass
class BakeReport:
    """One bake's figures; the fields are report.json's (see the module notes)."""

    frames: int = 0
    frame_start: int = 0
    frame_end: int = 0
    fps: float = 0.0
    database_fps: float = 0.0
    steps: int = 0
    searches: int = 0
    jumps: int = 0
    foot_locks: int = 0
    foot_sliding_m: dict = field(default_factory=_sides)
    foot_sliding_cm_per_foot_per_moving_s: float = 0.0
    raw_foot_sliding_m: dict = field(default_factory=_sides)
    raw_foot_sliding_cm_per_foot_per_moving_s: float = 0.0
    ankle_sliding_cm_per_foot_per_moving_s: float = 0.0
    raw_ankle_sliding_cm_per_foot_per_moving_s: float = 0.0
    planted_toe_height_m: float = 0.0
    planted_ankle_height_m: Optional[float] = None
    moving_s: float = 0.0
    tracking_error_mean_m: float = 0.0
    tracking_error_max_m: float = 0.0
    match_cost_mean: float = 0.0
    match_cost_max: float = 0.0
    worst_moments: list = field(default_factory=list)
    bake_seconds: float = 0.0
    real_time_factor: float = 0.0
    final_distance_m: float = 0.0
    contact_sliding_cm_per_foot_per_moving_s: Optional[float] = None
    raw_contact_sliding_cm_per_foot_per_moving_s: Optional[float] = None
    contact_sliding_ratio: Optional[float] = None
    contact_sliding_m: Optional[dict] = None
    seed_ankle_sliding_m_per_14_5_s: Optional[float] = None
    facing_error_travel_mean_deg: Optional[float] = None
    facing_error_asked_mean_deg: Optional[float] = None
    hips_facing_error_asked_mean_deg: Optional[float] = None
    hips_tracking_mean_m: Optional[float] = None
    hips_tracking_max_m: Optional[float] = None
    warnings: list = field(default_factory=list)
    note: str = ""
    sole_shift_m: Optional[float] = None
    floor_raised_frames: int = 0          # frames the floor clearance raised a foot on (core.bake.legs.floor)
    floor_raised_max_m: float = 0.0       # the most it raised one
    target_foot_locks: Optional[int] = None
    size_ratio: Optional[float] = None
    retargeted_onto: Optional[str] = None
    per_frame: Optional[PerFrame] = None
    # Per move along the timeline (core.job.moves.moves_report): frame, query, first_frame, last_frame, frames,
    # share (of its frames playing rows carrying its query), sliding and tracking (core.measure.moves_figures).
    moves: Optional[list] = None

    def track_target(self, hips, controller):
        """Tracking measured on the rig a bake was retargeted onto: its hips
        (F, 3) against the controller (F, 3), both in world space."""
        d, self.tracking_error_mean_m, self.tracking_error_max_m = rig_metrics.horizontal_distance(hips, controller)
        self.per_frame.tracking_error = d
        self.final_distance_m = float(d[-1])

    def to_json(self):
        """The report.json dictionary: every field but ``per_frame``; the
        retarget fields only after a bake onto another rig."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "per_frame" or (f.name in RETARGET_FIELDS + ("moves",) and value is None):
                continue
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data):
        """A report from a report.json dictionary (fields it lacks keep their defaults)."""
        names = {f.name for f in fields(cls)} - {"per_frame"}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_text(self):
        """The report as a plain-text table, warnings and note below it."""
        rows = [
            ("frames", "%d (%d-%d at %g fps; database %g fps)" % (
                self.frames, self.frame_start, self.frame_end, self.fps, self.database_fps)),
            ("searches / jumps", "%d / %d" % (self.searches, self.jumps)),
            ("foot locks", "%d" % self.foot_locks),
            ("feet raised onto the floor", lift_words(self.floor_raised_frames, self.floor_raised_max_m)),
            ("foot sliding (m, L/R)", "%.3f / %.3f" % (self.foot_sliding_m["left"], self.foot_sliding_m["right"])),
            ("toe sliding cm/foot/moving s", "%.2f (raw take %.2f)" % (
                self.foot_sliding_cm_per_foot_per_moving_s, self.raw_foot_sliding_cm_per_foot_per_moving_s)),
            ("ankle sliding cm/foot/moving s", "%.2f (raw take %.2f)" % (
                self.ankle_sliding_cm_per_foot_per_moving_s, self.raw_ankle_sliding_cm_per_foot_per_moving_s)),
            ("tracking error (m)", "mean %.3f, max %.3f" % (self.tracking_error_mean_m, self.tracking_error_max_m)),
            ("planted sliding cm/foot/moving s", _planted(self)),
            ("seed ankle figure m/14.5 s", _num("%.2f", self.seed_ankle_sliding_m_per_14_5_s)),
            ("facing off travel / asked (deg)", "%s / %s" % (_num("%.1f", self.facing_error_travel_mean_deg),
                                                             _num("%.1f", self.facing_error_asked_mean_deg))),
        ]
        if self.hips_facing_error_asked_mean_deg is not None:
            rows.append(("hip joints off asked facing (deg)", "%.1f" % self.hips_facing_error_asked_mean_deg))
        rows += [
            ("hips to path (m)", "-" if self.hips_tracking_mean_m is None else "mean %.3f, max %.3f" % (
                self.hips_tracking_mean_m, self.hips_tracking_max_m)),
            ("match cost", "mean %.3f, max %.3f" % (self.match_cost_mean, self.match_cost_max)),
            ("worst moments", ", ".join("frame %d (%.2f)" % (w["frame"], w["cost"]) for w in self.worst_moments)
             or "-"),
            ("bake", "%.2f s, %.1fx real time" % (self.bake_seconds, self.real_time_factor)),
        ]
        width = max(len(k) for k, _ in rows)
        lines = ["%-*s  %s" % (width, k, v) for k, v in rows]
        if self.size_ratio is not None:
            lines.append("%-*s  %.3f (onto %s)" % (width, "size ratio", self.size_ratio,
                                                   self.retargeted_onto or "another rig"))
        lines += [moves_figures.line(width, m) for m in self.moves or ()]
        lines += ["Warning: %s" % w for w in self.warnings]
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    def summary_lines(self):
        """The short summary the Report panel shows: [(text, icon)], icon
        "ERROR" on the worst moments, "NONE" elsewhere."""
        lines = [
            "%d frames, %d searches, %d jumps" % (self.frames, self.searches, self.jumps),
            "Foot locks: %d" % self.foot_locks,
            "Planted sliding: %s cm/foot/s (take %s, %sx)" % (
                _num("%.1f", self.contact_sliding_cm_per_foot_per_moving_s),
                _num("%.1f", self.raw_contact_sliding_cm_per_foot_per_moving_s),
                _num("%.2f", self.contact_sliding_ratio)),
            "Facing off travel: %s deg" % _num("%.1f", self.facing_error_travel_mean_deg),
            "Hips to path: mean %s cm, max %s cm" % (_num("%.1f", _cm(self.hips_tracking_mean_m)),
                                                     _num("%.1f", _cm(self.hips_tracking_max_m))),
            "Match cost: mean %.2f, max %.2f" % (self.match_cost_mean, self.match_cost_max),
        ]
        out = [(text, "NONE") for text in lines]
        out += [("Frame %d: cost %.2f" % (w["frame"], w["cost"]), "ERROR") for w in self.worst_moments]
        out.append(("Baked in %.2f s (%.0fx real time)" % (self.bake_seconds, self.real_time_factor), "NONE"))
        return out


def _num(fmt, value):
    return "-" if value is None else fmt % value


def _cm(value):
    return None if value is None else 100.0 * value


def _planted(r):
    if r.contact_sliding_cm_per_foot_per_moving_s is None:
        return "-"
    return "%.2f (raw take %.2f, %.2fx)" % (r.contact_sliding_cm_per_foot_per_moving_s,
                                           r.raw_contact_sliding_cm_per_foot_per_moving_s, r.contact_sliding_ratio)


def worst_moments(frames, costs, count=3, min_gap=10):
    """The ``count`` highest costs, at least ``min_gap`` frames apart (ties: the
    earlier search first): [(frame, cost)]."""
    order = np.argsort(-np.asarray(costs), kind="stable")
    picked = []
    for i in order:
        if all(abs(int(frames[i]) - f) >= min_gap for f, _c in picked):
            picked.append((int(frames[i]), float(costs[i])))
        if len(picked) == count:
            break
    return picked


def any_between(flags, at):
    """Per frame: did a flag rise on any step since the previous frame (``at``:
    each frame's step)."""
    c = np.concatenate([[0], np.cumsum(flags)])
    prev = np.concatenate([[-1], at[:-1]])
    return (c[at + 1] - c[prev + 1]) > 0


def low_foot_sliding(take, baked_toes, baked_ankles, baked_root, fps, cache=None):
    """The low-foot figures: toes and ankles of the bake (S, 2, 3) each, or None
    without legs, along ``baked_root`` (S, 3) at ``fps``, against the take's own
    rows measured the same way (steps between clips not counted); the floors are
    the take's heights over its contact rows. ``cache(key, make)`` (optional, see
    :func:`measure_bake`) keeps the take's own figures."""
    cache = cache or (lambda _key, make: make())
    measured = {}
    for key, margin in LOW_MARGINS:
        baked = baked_toes if key == "toe" else baked_ankles
        raw, floor = cache("raw_low_sliding_%s_%r_%r" % (key, margin, fps),
                           lambda key=key, margin=margin: _raw_sliding(take, key, margin, fps))
        ours = pm.ankle_sliding(baked, baked_root, fps, floor, margin=margin, max_speed=None) \
            if baked is not None else None
        measured[key] = (raw, ours, floor)

    def pair(m):
        return {"left": m["left_m"], "right": m["right_m"]} if m else _sides()

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
        "planted_toe_height_m": toe[2],
        "moving_s": toe[1]["moving_s"] if toe[1] else 0.0,
    }


@dataclass
class BakeFrames:
    """What the bake produced on the scene's frames."""

    frames: np.ndarray        # (F,) scene frames
    times: np.ndarray         # (F,) seconds from the first
    fps: float                # the scene's rate
    locations: np.ndarray     # (F, J, 3) pose channels on those frames
    rotations: np.ndarray     # (F, J, 4)


def measure_bake(take, skeleton, result, baked, allowed, facing, seconds, path_scale=1.0, cache=None, moves=None):
    """The :class:`BakeReport` of a bake: ``take`` (core.measure.joints.Take),
    ``skeleton`` (core.bake.pipeline.BakeSkeleton), ``result`` (its BakeResult),
    ``baked`` (:class:`BakeFrames`), ``allowed`` (N,) the rows the search could
    play, ``facing`` (S, 2) the asked facing per step or None, ``seconds`` the
    simulation's time. ``path_scale``: distances are reported times it (a bake
    for another rig's size). ``cache(key, make)``: returns ``make()``, or what
    it returned before for ``key`` on the same database (default: no cache). ``moves``: the
    entries of core.job.moves.moves_report (or None), given their figures (core.measure.moves_figures)."""
    cache = cache or (lambda _key, make: make())
    report = BakeReport(**_bake_figures(take, skeleton, result, baked, seconds, path_scale, cache), moves=moves)
    if len(skeleton.legs) >= 2:
        for k, v in _quality(take, skeleton, result, baked, allowed, facing, path_scale, cache, moves).items():
            setattr(report, k, v)
    report.warnings += moves_figures.warnings(moves or [])
    return report


def _raw_sliding(take, key, margin, fps):
    """(the take's own sliding figures, its floor) of the ``key`` points ("toe" or "ankle")."""
    raw_points = np.asarray(take.toe_positions if key == "toe" else take.foot_positions)
    floor = pm.contact_height(raw_points[:, :, 2], np.asarray(take.contacts, dtype=bool))
    return pm.ankle_sliding(raw_points, take.root_positions, fps, floor, margin=margin, max_speed=None,
                            segments=take.clip_index), floor


def _bake_figures(take, skeleton, result, baked, seconds, path_scale, cache=None):
    """The report's counts, low-foot sliding, tracking and costs, and the per-frame figures."""
    frames, times, sfps = baked.frames, baked.times, baked.fps
    fps = take.fps
    at = core_bake.step_index(result, times)
    ctrl = result.controller
    d = np.linalg.norm((result.root_pos * path_scale)[:, :2] - (ctrl * path_scale)[:, :2], axis=1)
    toes, ankles = _leg_points(skeleton, result.locations, result.rotations)
    searches = int(result.searched.sum())
    costs = result.cost[result.searched]
    search_frames = frames[0] + np.flatnonzero(result.searched) * result.dt * sfps
    worst = worst_moments(np.rint(search_frames), costs) if searches else []
    duration = times[-1] if len(times) else 0.0
    return {
        "frames": int(len(frames)), "frame_start": int(frames[0]), "frame_end": int(frames[-1]),
        "fps": float(sfps), "database_fps": float(fps), "steps": int(len(result.rows)),
        "searches": searches, "jumps": int(result.jumped.sum()), "foot_locks": int(result.lock_count),
        **dict(zip(("floor_raised_frames", "floor_raised_max_m"), lift_summary(result.floor_lifts, at))),
        **low_foot_sliding(take, toes, ankles, result.root_pos, fps, cache),
        "tracking_error_mean_m": float(d.mean()), "tracking_error_max_m": float(d.max()),
        "match_cost_mean": float(costs.mean()) if searches else 0.0,
        "match_cost_max": float(costs.max()) if searches else 0.0,
        "worst_moments": [{"frame": f, "cost": c} for f, c in worst],
        "bake_seconds": float(seconds),
        "real_time_factor": float(duration / seconds) if seconds > 0 else 0.0,
        "final_distance_m": float(path_scale * np.linalg.norm(result.root_pos[-1, :2] - ctrl[-1, :2])),
        "per_frame": PerFrame(match_cost=result.cost[at], jump=any_between(result.jumped, at),
                              contact=result.contacts[at], lock=result.locked[at], tracking_error=d[at],
                              root_yaw=core_bake.yaw_of(result.root_quat[at])),
    }


def _leg_points(skeleton, locs, rots):
    """core.bake.pipeline.leg_points of the pose channels' forward kinematics (the
    heads alone are made)."""
    if not skeleton.legs:
        return None, None
    heads = joint_heads(skeleton, locs, rots, leg_joints(skeleton))
    return tuple(_as_in_matrices(heads[:, [leg[k] for leg in skeleton.legs]]) for k in (3, 2))


def _as_in_matrices(points):
    """``points`` (S, n, 3) laid out as leg_points' figures always were (the heads of
    ``pose[:, legs]``, which numpy lays out legs first), so sums over them add in the
    same order."""
    box = np.empty((points.shape[1], points.shape[0], 4, 4))
    box[:, :, :3, 3] = np.swapaxes(points, 0, 1)
    return np.swapaxes(box, 0, 1)[:, :, :3, 3]


def _scaled(j, s):
    return replace(j, hips=j.hips * s, hip_joints=j.hip_joints * s, ankles=j.ankles * s, toes=j.toes * s)


def _quality(take, skeleton, result, baked, allowed, facing, path_scale, cache, moves=None):
    """The planted figures and warnings (core.measure.bake_quality) of the baked
    joints on the scene's frames against the raw take at the same rate."""
    frames, times, sfps = baked.frames, baked.times, baked.fps
    at = core_bake.step_index(result, times)
    bake = skeleton_joints(skeleton, baked.locations, baked.rotations, sfps, result.contacts[at], path_scale)
    if getattr(result, "toe_ground", None) is not None:         # a Ground: feet judged over it
        bake = above_ground(bake, result.toe_ground[at] * path_scale)
    raw, floor = cache("raw_take_joints_%g" % sfps, lambda: take_clips(take, skeleton, sfps))
    floor *= path_scale
    if path_scale != 1.0:
        raw = [_scaled(j, path_scale) for j in raw]
    x = sample_positions(times, result.dt, len(result.controller))
    path = resample(result.controller, x) * path_scale
    asked = None
    if facing is not None:
        asked = resample(np.asarray(facing, dtype=np.float64), sample_positions(times, result.dt, len(facing)))
        asked /= np.maximum(np.linalg.norm(asked, axis=1, keepdims=True), 1e-12)
    out = bake_quality.figures(bake, raw, floor, path=path, asked_facing=asked)
    coverage = cache("coverage_%d" % hash(np.asarray(allowed).tobytes()), lambda: bake_quality.database_coverage(
        np.asarray(take.root_positions) * path_scale, core_bake.yaw_of(np.asarray(take.root_quats)),
        take.clip_index, take.fps, allowed))
    sim = resample(result.sim_pos, sample_positions(times, result.dt, len(result.sim_pos))) * path_scale
    out["warnings"] = bake_quality.warnings(bake, frames, floor, any_between(result.searched, at),
                                            any_between(result.jumped, at), path=sim, asked_facing=asked,
                                            coverage=coverage, rows=result.rows[at])
    moves_figures.add_figures(moves or [], frames, bake, path, floor)
    return out
