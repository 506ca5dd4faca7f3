"""The coverage report: what a set of tagged clips covers.

:func:`coverage_report` measures, per move of a card, the seconds tagged, and over
all usable frames a capability map: seconds of motion per bin of root speed (m/s)
and turning rate (deg/s). :func:`format_report_text` writes it as plain text.
"""

from __future__ import annotations

import math

import numpy as np

from .dance_card import DanceCard
from ..errors import MotionMatchingError
from .tags import DEFAULT_EXCLUDE_NAMES, is_int, range_mask, validate_tags

__all__ = [
    "CoverageError",
    "DEFAULT_SPEED_BINS",
    "DEFAULT_TURN_BINS",
    "speed_name",
    "turn_phrase",
    "root_speed_and_turn",
    "coverage_report",
    "format_report_text",
]


class CoverageError(MotionMatchingError):
    """The data given to the coverage report cannot be measured."""


DEFAULT_SPEED_BINS = (0.0, 0.2, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, math.inf)
DEFAULT_TURN_BINS = (0.0, 15.0, 45.0, 90.0, 180.0, math.inf)
THIN_SECONDS = 1.0

# Pace zones (lower edge in m/s, name) and turning zones (lower edge in deg/s, phrase).
_SPEED_ZONES = ((0.0, "idle"), (0.2, "idle to walk"), (0.5, "walk"),
                (1.5, "walk to run"), (2.0, "run"))
_TURN_ZONES = ((0.0, "going straight"), (15.0, "with gentle turns"), (45.0, "with turns"),
               (90.0, "with sharp turns"), (180.0, "with very sharp turns"))


def _zone_name(lo, hi, zones):
    names = [name for i, (edge, name) in enumerate(zones)
             if edge < hi and (i + 1 == len(zones) or zones[i + 1][0] > lo)]
    if len(names) == 1:
        return names[0]
    return f"{names[0]} .. {names[-1]}"


def speed_name(lo, hi):
    """Name of the pace of speeds in [lo, hi) m/s: idle under 0.2, walk 0.5-1.5, run
    from 2.0, 'idle to walk' and 'walk to run' between; a bin spanning several zones
    is named by its first and last."""
    return _zone_name(lo, hi, _SPEED_ZONES)


def turn_phrase(lo, hi):
    """Phrase for turning rates in [lo, hi) deg/s, e.g. 'with sharp turns'."""
    return _zone_name(lo, hi, _TURN_ZONES)


def _fmt(x, min_decimals):
    s = f"{x:g}"
    if min_decimals and "." not in s and "e" not in s:
        s = f"{x:.{min_decimals}f}"
    return s


def _bin_labels(edges, unit, min_decimals):
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if math.isinf(hi):
            out.append(f"{_fmt(lo, min_decimals)}+ {unit}")
        else:
            out.append(f"{_fmt(lo, min_decimals)}-{_fmt(hi, min_decimals)} {unit}")
    return out


def _check_edges(edges, what):
    e = [float(x) for x in edges]
    if len(e) < 2 or any(math.isnan(x) for x in e) or e[0] < 0 or \
            any(b <= a for a, b in zip(e[:-1], e[1:])) or math.isinf(e[0]):
        raise CoverageError(f"The {what} bins must be at least two rising numbers from 0 up, "
                            f"not {list(edges)!r}.")
    return e


def root_speed_and_turn(root_pos, facing, fps):
    """Per-frame root ground speed (m/s) and absolute turning rate (deg/s).

    Central differences (one-sided at the ends) of the root's x, y position and of
    its unwrapped facing angle, times ``fps``. ``facing`` is (F, 2) or (F, 3); only
    its x, y matter. A single frame has speed and rate 0.
    """
    p = np.asarray(root_pos, dtype=np.float64)[:, :2]
    f = np.asarray(facing, dtype=np.float64)[:, :2]
    if p.shape[0] < 2:
        z = np.zeros(p.shape[0])
        return z, z.copy()
    vel = np.gradient(p, axis=0) * fps
    yaw = np.unwrap(np.arctan2(f[:, 1], f[:, 0]))
    rate = np.abs(np.degrees(np.gradient(yaw) * fps))
    return np.hypot(vel[:, 0], vel[:, 1]), rate


def _unpack_clip(i, clip):
    if not isinstance(clip, (tuple, list)) or len(clip) not in (6, 7):
        raise CoverageError(f"Clip {i} of the coverage report must be (name, fps, frames, "
                            "tags, root positions, root facing[, excluded]).")
    name, fps, n, tags, pos, facing = clip[:6]
    excl = clip[6] if len(clip) == 7 else None
    if not isinstance(fps, (int, float, np.integer, np.floating)) or isinstance(fps, bool) \
            or not math.isfinite(fps) or fps <= 0:
        raise CoverageError(f"Clip '{name}' has frame rate {fps!r}; it must be a positive "
                            "number.")
    if not is_int(n) or n < 1:
        raise CoverageError(f"Clip '{name}' has {n!r} frames; it needs at least one.")
    n = int(n)
    pos = np.asarray(pos, dtype=np.float64)
    facing = np.asarray(facing, dtype=np.float64)
    if pos.shape != (n, 3):
        raise CoverageError(f"Clip '{name}' has root positions of shape {pos.shape}; "
                            f"expected ({n}, 3).")
    if facing.ndim != 2 or facing.shape[0] != n or facing.shape[1] not in (2, 3):
        raise CoverageError(f"Clip '{name}' has root facings of shape {facing.shape}; "
                            f"expected ({n}, 2) or ({n}, 3).")
    if not (np.isfinite(pos).all() and np.isfinite(facing).all()):
        raise CoverageError(f"Clip '{name}' has a NaN or infinite root position or facing.")
    if (np.hypot(facing[:, 0], facing[:, 1]) < 1e-9).any():
        raise CoverageError(f"Clip '{name}' has a root facing with no horizontal direction "
                            "on some frame; rebuild its virtual root.")
    if excl is not None:
        excl = np.asarray(excl, dtype=bool)
        if excl.shape != (n,):
            raise CoverageError(f"Clip '{name}' has an exclusion mask of shape {excl.shape}; "
                                f"expected ({n},).")
    tags = validate_tags(tags, n, name)
    return str(name), float(fps), n, tags, pos, facing, excl


def coverage_report(dance_card, clips, speed_bins=DEFAULT_SPEED_BINS,
                    turn_bins_deg_per_s=DEFAULT_TURN_BINS,
                    exclude_names=DEFAULT_EXCLUDE_NAMES, thin_s=THIN_SECONDS):
    """What the clips cover, as a JSON-serialisable dict.

    ``clips``: a list of ``(name, fps, n_frames, tags, root_pos (F, 3), facing (F, 2|3))``
    with an optional 7th item, an (F,) bool mask of frames to leave out. Frames tagged
    with an ``exclude_names`` tag are left out too. Left-out frames count in
    ``totals.excluded_*`` only: not in moves, extra tags, nor the map.

    Keys:
    - ``moves`` (one per card move, in card order): name, description, seconds,
      frames, expected_s (or None), ratio (seconds / expected, or None), status
      ('ok', 'short' under the expected duration, 'missing' with no frame), clips;
    - ``extra_tags``: tags on the clips that the card does not list (exclusion tags
      aside): name, seconds, frames, clips;
    - ``totals``: clips, frames, seconds, excluded_frames, excluded_seconds,
      usable_seconds;
    - ``capability``: speed_edges and turn_edges (None for an open last edge),
      speed_labels, speed_names, turn_labels, turn_phrases and ``seconds`` [speed][turn];
    - ``gaps``: the map cells with under ``thin_s`` seconds, each with speed, turn,
      seconds, kind ('empty' or 'thin') and a sentence.

    Seconds of a tag count each frame once, even where ranges of the tag overlap.
    Speeds and rates are rounded to 6 decimals before binning, so exactly 90 deg/s
    falls in the bin starting at 90 despite rounding errors.
    """
    s_edges = _check_edges(speed_bins, "speed")
    t_edges = _check_edges(turn_bins_deg_per_s, "turning rate")
    if not isinstance(thin_s, (int, float)) or thin_s < 0:
        raise CoverageError(f"The thin threshold must be 0 seconds or more, not {thin_s!r}.")
    if dance_card is not None and not isinstance(dance_card, DanceCard):
        raise CoverageError("The dance card must be a DanceCard (see load_dance_card).")
    excl_names = {str(n).lower() for n in (exclude_names or ())}

    grid, per_tag, totals = _measure_clips(clips, s_edges, t_edges, excl_names)
    moves, card_keys = _move_rows(dance_card, per_tag)
    extra = [dict(name=v[0], seconds=float(v[2]), frames=int(v[1]), clips=list(v[3]))
             for k, v in sorted(per_tag.items())
             if k not in card_keys and k not in excl_names]
    s_labels = _bin_labels(s_edges, "m/s", 1)
    t_labels = _bin_labels(t_edges, "deg/s", 0)
    s_names = [speed_name(a, b) for a, b in zip(s_edges[:-1], s_edges[1:])]
    t_phrases = [turn_phrase(a, b) for a, b in zip(t_edges[:-1], t_edges[1:])]
    gaps = _map_gaps(grid, thin_s, s_labels, t_labels, s_names, t_phrases)

    def edges_out(e):
        return [None if math.isinf(x) else x for x in e]

    return dict(
        title=dance_card.title if dance_card is not None else None,
        moves=moves,
        extra_tags=extra,
        totals=totals,
        capability=dict(speed_edges=edges_out(s_edges), turn_edges=edges_out(t_edges),
                        speed_labels=s_labels, speed_names=s_names,
                        turn_labels=t_labels, turn_phrases=t_phrases,
                        seconds=grid.tolist()),
        thin_s=float(thin_s),
        gaps=gaps,
    )


def _measure_clips(clips, s_edges, t_edges, excl_names):
    """Stage 1 of the report: over the clips, the capability grid (seconds per
    speed bin and turn bin of usable frames), the usable frames and seconds per
    tag (key -> [spelling, frames, seconds, clip names]) and the totals."""
    grid = np.zeros((len(s_edges) - 1, len(t_edges) - 1))
    per_tag = {}  # key -> [spelling, frames, seconds, clip names]
    totals = dict(clips=0, frames=0, seconds=0.0, excluded_frames=0, excluded_seconds=0.0)
    for i, clip in enumerate(clips):
        name, fps, n, tags, pos, facing, excl = _unpack_clip(i, clip)
        left_out = range_mask([(t.start, t.end) for t in tags if t.key in excl_names], n)
        if excl is not None:
            left_out |= excl
        usable = ~left_out
        totals["clips"] += 1
        totals["frames"] += n
        totals["seconds"] += n / fps
        totals["excluded_frames"] += int(left_out.sum())
        totals["excluded_seconds"] += float(left_out.sum()) / fps
        _count_tags(per_tag, name, fps, n, tags, usable)
        _add_to_grid(grid, s_edges, t_edges, pos, facing, fps, usable)
    totals["usable_seconds"] = totals["seconds"] - totals["excluded_seconds"]
    return grid, per_tag, totals


def _count_tags(per_tag, name, fps, n, tags, usable):
    """Add one clip's usable frames and seconds per tag to ``per_tag`` (each
    frame once, however many ranges of the tag cover it)."""
    ranges = {}
    for t in tags:
        ranges.setdefault(t.key, (t.name, []))[1].append((t.start, t.end))
    for key, (spelling, rs) in ranges.items():
        frames = int((range_mask(rs, n) & usable).sum())
        entry = per_tag.setdefault(key, [spelling, 0, 0.0, []])
        entry[1] += frames
        entry[2] += frames / fps
        if frames:
            entry[3].append(name)


def _add_to_grid(grid, s_edges, t_edges, pos, facing, fps, usable):
    """Add one clip's usable seconds to the speed x turning-rate grid."""
    speed, turn = root_speed_and_turn(pos, facing, fps)
    speed, turn = np.round(speed[usable], 6), np.round(turn[usable], 6)
    si = np.searchsorted(s_edges, speed, side="right") - 1
    ti = np.searchsorted(t_edges, turn, side="right") - 1
    inside = (si >= 0) & (si < grid.shape[0]) & (ti >= 0) & (ti < grid.shape[1])
    np.add.at(grid, (si[inside], ti[inside]), 1.0 / fps)


def _move_rows(dance_card, per_tag):
    """Stage 2: one row per move of the card (seconds tagged against seconds
    wanted, and a status), and the set of the card's tag keys."""
    moves = []
    card_keys = set()
    for m in (dance_card.moves if dance_card is not None else []):
        key = m.name.lower()
        card_keys.add(key)
        _, frames, seconds, where = per_tag.get(key, (m.name, 0, 0.0, []))
        expected = m.duration_s
        if frames == 0:
            status = "missing"
        elif expected is not None and seconds < expected:
            status = "short"
        else:
            status = "ok"
        moves.append(dict(name=m.name, description=m.description, seconds=float(seconds),
                          frames=int(frames), expected_s=expected,
                          ratio=None if expected is None else float(seconds / expected),
                          status=status, clips=list(where)))
    return moves, card_keys


def _map_gaps(grid, thin_s, s_labels, t_labels, s_names, t_phrases):
    """Stage 3: the cells of the map with under ``thin_s`` seconds, each with a
    sentence saying what is missing."""
    gaps = []
    for a in range(grid.shape[0]):
        for b in range(grid.shape[1]):
            sec = float(grid[a, b])
            if sec >= thin_s:
                continue
            amount = "nothing" if sec == 0 else f"only {sec:.{1 if sec >= 0.1 else 2}f} s"
            gaps.append(dict(speed=s_labels[a], turn=t_labels[b], seconds=sec,
                             kind="empty" if sec == 0 else "thin",
                             speed_name=s_names[a], turn_phrase=t_phrases[b],
                             sentence=f"{s_names[a]} {t_phrases[b]} ({s_labels[a]}, "
                                      f"{t_labels[b]}): {amount}."))
    return gaps

def format_report_text(report):
    """Plain-text summary of :func:`coverage_report` for a Blender text datablock."""
    lines = []
    title = report.get("title")
    lines.append(f"Dance card coverage: {title}" if title else "Coverage of the clips")
    t = report["totals"]
    lines.append(f"{t['clips']} clip{'' if t['clips'] == 1 else 's'}, {t['seconds']:.1f} s ({t['frames']} frames); "
                 f"{t['excluded_seconds']:.1f} s left out; "
                 f"{t['usable_seconds']:.1f} s usable.")
    lines.append("")

    if report["moves"]:
        width = max(4, *(len(m["name"]) for m in report["moves"]))
        lines.append("Moves")
        lines.append(f"  {'move':<{width}}  {'tagged s':>8}  {'wanted s':>8}  "
                     f"{'ratio':>6}  status")
        for m in report["moves"]:
            exp = "-" if m["expected_s"] is None else f"{m['expected_s']:.1f}"
            ratio = "-" if m["ratio"] is None else f"{m['ratio']:.2f}"
            lines.append(f"  {m['name']:<{width}}  {m['seconds']:>8.1f}  {exp:>8}  "
                         f"{ratio:>6}  {m['status']}")
        missing = [m["name"] for m in report["moves"] if m["status"] == "missing"]
        short = [m["name"] for m in report["moves"] if m["status"] == "short"]
        if missing:
            lines.append(f"Missing: {', '.join(missing)}.")
        if short:
            lines.append(f"Shorter than wanted: {', '.join(short)}.")
        lines.append("")
    if report["extra_tags"]:
        label = "Tags not on the card" if report["moves"] or title else "Tags"
        lines.append(f"{label}: " + ", ".join(
            f"{e['name']} ({e['seconds']:.1f} s)" for e in report["extra_tags"]) + ".")
        lines.append("")

    cap = report["capability"]
    lines.append("Capability map: seconds per root speed (rows) and turning rate (columns)")
    row_heads = [f"{n} {lab}" for n, lab in zip(cap["speed_names"], cap["speed_labels"])]
    head_w = max(len(h) for h in row_heads)
    cols = [lab.replace(" deg/s", "") for lab in cap["turn_labels"]]
    col_w = max(6, *(len(c) for c in cols))
    lines.append(f"  {'deg/s':>{head_w}}  " + "  ".join(f"{c:>{col_w}}" for c in cols))
    for head, row in zip(row_heads, cap["seconds"]):
        lines.append(f"  {head:>{head_w}}  " + "  ".join(f"{v:>{col_w}.1f}" for v in row))
    lines.append("")

    gaps = report["gaps"]
    if gaps:
        lines.append(f"Gaps (under {report['thin_s']:g} s): a character asked for these "
                     "will get the nearest motion the clips have.")
        n_turn = len(cap["turn_labels"])
        by_speed = {}
        for g in gaps:
            by_speed.setdefault(g["speed"], []).append(g)
        for s_label, name in zip(cap["speed_labels"], cap["speed_names"]):
            row = by_speed.get(s_label, [])
            if len(row) == n_turn and all(g["kind"] == "empty" for g in row):
                lines.append(f"  - {name} ({s_label}): nothing at any turning rate.")
                continue
            lines += [f"  - {g['sentence']}" for g in row]
    else:
        lines.append(f"Every speed and turning rate has at least {report['thin_s']:g} s.")
    return "\n".join(lines) + "\n"
