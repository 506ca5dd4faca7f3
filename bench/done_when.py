"""The path suite's pass/fail checks on one measured row of the path suite
(bench/bench_paths.py), and which of its frozen glides the bake report's
warnings name. Plain Python: no Blender, so tests can check the rules.

A row is the dictionary ``tools.path_measure.measure`` returns, with the bake
report under ``"report"``, the path's name under ``"path"`` and the clamp
distance (metres) the bake ran with under ``"clamp_m"``.
"""

import math
import re

SLIDE_LIMIT = 1.5          # contact-aware sliding, times the raw take's
STRAFE_SLIDE_LIMIT = 2.0   # ... on the strafe
SEED_LIMIT = 3.72          # m per 14.5 s: the seed's port, on the showcase
FACING_LIMIT = 10.0        # degrees, mean
ROTATION_LIMIT = 1.5       # largest rotation step / the raw take's 99.9th percentile
TOE_LIMIT = -0.01          # m below the raw take's lowest toe
HIPS_MARGIN = 0.02         # m beyond the clamp
REPORT_LENGTH = 0.01       # m: the report's lengths equal the measured ones within this
REPORT_SHARE = 0.10        # ... its other figures within this share
REALTIME_LIMIT = 30.0      # times real time

CHECKS = ("c ratio", "seed", "facing", "glides warned", "rot x", "toe", "hips max", "report", "rt")

# Warnings that name where a pose freezes or the feet stop stepping (core/bake_quality).
_GLIDE_WARNINGS = ("The feet do not step while the body travels", "Most searches jump")
_RANGE = re.compile(r"\b(\d+)-(\d+)\b")


def named_ranges(warnings):
    """(first, last) scene frames named by the warnings about glides and frozen poses."""
    out = []
    for w in warnings:
        if w.startswith(_GLIDE_WARNINGS):
            out += [(int(a), int(b)) for a, b in _RANGE.findall(w)]
    return out


def warned_glides(glides, warnings, slack=1):
    """How many of ``glides`` ((first, last) scene frames) the warnings name: every
    frame of the glide, less ``slack`` frames at either end, lies in a named range."""
    named = named_ranges(warnings)
    count = 0
    for a, b in glides:
        frames = range(a + slack, b - slack + 1)
        if all(any(lo <= f <= hi for lo, hi in named) for f in frames):
            count += 1
    return count


def _close(reported, measured, absolute):
    if reported is None or measured is None:
        return False
    return abs(reported - measured) <= max(absolute, REPORT_SHARE * abs(measured))


def _facing(row):
    """(measured, reported) mean facing error: against the asked facing where one
    is asked (the upper body), else against travel."""
    rep = row["report"]
    if row.get("facing_asked"):
        return row["facing_asked"]["mean_deg"], rep.get("facing_error_asked_mean_deg")
    return row["facing_travel"]["mean_deg"], rep.get("facing_error_travel_mean_deg")


def report_agrees(row):
    """The report's contact sliding, its ratio, the seed figure and the facing within
    10% of the measured ones (0.01 or 0.5 degree at least), its hips maximum
    within 1 cm."""
    rep = row["report"]
    if "contact_sliding_ratio" not in rep:
        return False
    face, rface = _facing(row)
    return (_close(rep["contact_sliding_cm_per_foot_per_moving_s"], row["sliding_contact"]["cm_per_foot_per_moving_s"],
                   0.01)
            and _close(rep["contact_sliding_ratio"], row["sliding_contact_ratio"], 0.01)
            and _close(rep["seed_ankle_sliding_m_per_14_5_s"], row["seed"]["m_per_seconds"], 0.01)
            and (_close(rface, face, 0.5) or (math.isnan(face) and rface is not None and math.isnan(rface)))
            and abs(rep["hips_tracking_max_m"] - row["tracking"]["max_m"]) <= REPORT_LENGTH)


def checks(row):
    """{check: True (pass), False (fail) or None (does not apply)} for one row."""
    rep = row["report"]
    strafe = bool(row.get("facing_asked"))
    face, _ = _facing(row)
    glides = row["glides"]
    return {
        "c ratio": row.get("sliding_contact_ratio", math.inf) <= (STRAFE_SLIDE_LIMIT if strafe else SLIDE_LIMIT),
        "seed": row["seed"]["m_per_seconds"] < SEED_LIMIT if row["path"] == "showcase" else None,
        "facing": face <= FACING_LIMIT,
        "glides warned": warned_glides(glides, rep.get("warnings", [])) == len(glides),
        "rot x": row["rotation"]["ratio"] <= ROTATION_LIMIT,
        "toe": row["toe_margin_m"] >= TOE_LIMIT,
        "hips max": row["tracking"]["max_m"] <= row["clamp_m"] + HIPS_MARGIN,
        "report": report_agrees(row),
        "rt": rep["real_time_factor"] >= REALTIME_LIMIT,
    }


def mark(value):
    return "-" if value is None else ("PASS" if value else "FAIL")


LEGEND = """\
Done-when checks: c ratio <= %.1f (strafe %.1f); seed < %.2f m per 14.5 s (showcase only); facing: mean
  degrees off travel <= %.0f, off the asked facing on the strafe (upper body); glides warned: every frozen glide the
  bench counts lies in frames a report warning names; rot x <= %.1f; toe >= %+.0f cm; hips max <= clamp + %.0f cm;
  report: its contact sliding, ratio, seed figure and facing within %.0f%% of the measured, hips max within %.0f cm;
  rt >= %.0fx real time (the report's; it moves with the machine's load)""" % (
    SLIDE_LIMIT, STRAFE_SLIDE_LIMIT, SEED_LIMIT, FACING_LIMIT, ROTATION_LIMIT, 100 * TOE_LIMIT, 100 * HIPS_MARGIN,
    100 * REPORT_SHARE, 100 * REPORT_LENGTH, REALTIME_LIMIT)
