"""What the report says of each move along the timeline beyond its share: the
planted sliding and the hips' tracking measured on the move's frames alone (the
whole bake's measures of core.measure.bake_quality, restricted), and a warning
naming each move the data could not honour."""

import numpy as np

from . import path_metrics as pm

# A move whose frames played rows carrying its query on less than this share is named in a warning.
HONOURED_SHARE = 0.5


def add_figures(entries, frames, bake, path, floor):
    """Add to each move entry (core.job.moves.moves_report) holding for some frames its
    ``sliding_cm_per_foot_per_moving_s``, ``tracking_mean_m`` and ``tracking_max_m``: the
    bake's planted sliding and hips-to-path distance over its frames (None over one
    frame). ``frames`` (F,)
    the scene frames baked, ``bake`` (core.measure.bake_quality.Joints) and ``path`` (F, 3)
    on them, ``floor`` the planted ankle height."""
    whole = np.rint(np.asarray(frames)).astype(np.int64)
    for entry in entries:
        if entry.get("first_frame") is None:
            continue
        on = (whole >= entry["first_frame"]) & (whole <= entry["last_frame"])
        if np.count_nonzero(on) < 2:        # one frame: no motion to measure
            entry.update(sliding_cm_per_foot_per_moving_s=None, tracking_mean_m=None, tracking_max_m=None)
            continue
        slide = pm.ankle_sliding(bake.ankles[on], bake.hips[on], bake.fps, floor, contacts=bake.contacts[on])
        t = pm.tracking(bake.hips[on], path[on])
        entry.update(sliding_cm_per_foot_per_moving_s=slide["cm_per_foot_per_moving_s"],
                     tracking_mean_m=t["mean_m"], tracking_max_m=t["max_m"])


def measured(entry):
    """The report line's words for a move's figures ("" without them)."""
    if entry.get("tracking_mean_m") is None:
        return ""
    return ", sliding %.2f cm/foot/s, hips to path mean %.3f m" % (entry["sliding_cm_per_foot_per_moving_s"],
                                                                     entry["tracking_mean_m"])


def warnings(entries, threshold=HONOURED_SHARE):
    """One sentence per move whose frames played rows carrying its query on less than
    ``threshold`` of them (moves holding for no frame say nothing)."""
    out = []
    for i, entry in enumerate(entries):
        share = entry.get("share")
        if share is None or share >= threshold:
            continue
        out.append("Move %d (frame %g, tag query '%s') played rows carrying its query on only %.0f%% of its "
                   "frames %d-%d (below %.0f%%): the data could not honour it (a move too short for its "
                   "transition, or too few such frames near the path); lengthen it, tag more frames or widen "
                   "the query." % (i + 1, entry["frame"], entry["query"] or "all", 100 * share,
                                                  entry["first_frame"], entry["last_frame"], 100 * threshold))
    return out


def line(width, move):
    """The report table's line of one move along the timeline."""
    where = ("frames %d-%d, %.0f%% on its tags" % (move["first_frame"], move["last_frame"], 100 * move["share"])
             if move["share"] is not None else "not within the frames baked")
    where += measured(move)
    return "%-*s  %s" % (width, "move at %g" % move["frame"], "'%s': %s" % (move["query"] or "all", where))
