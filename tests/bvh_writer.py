"""Write BVH files for tests (any channel layout, rotation order, frame rate)."""

import numpy as np


def write_bvh(path, names, parents, offsets, channels, motion, frame_time,
              end_sites=None, newline="\n", indent="  ", frames_declared=None):
    """``channels`` per joint: tuple of names like ("Zrotation", "Xrotation", ...);
    ``motion`` (F, C) in the order the channels are listed."""
    children = {j: [] for j in range(len(names))}
    roots = []
    for j, p in enumerate(parents):
        (children[p] if p >= 0 else roots).append(j)
    end_sites = end_sites or {}
    lines = ["HIERARCHY"]

    def emit(j, depth):
        pad = indent * depth
        lines.append("%s%s %s" % (pad, "ROOT" if parents[j] < 0 else "JOINT", names[j]))
        lines.append(pad + "{")
        lines.append("%s%sOFFSET %.6f %.6f %.6f" % (pad, indent, *offsets[j]))
        if channels[j]:
            lines.append("%s%sCHANNELS %d %s" % (pad, indent, len(channels[j]), " ".join(channels[j])))
        else:
            lines.append("%s%sCHANNELS 0" % (pad, indent))
        for c in children[j]:
            emit(c, depth + 1)
        if not children[j] or j in end_sites:
            tip = end_sites.get(j, (0.0, 5.0, 0.0))
            lines.append("%s%sEnd Site" % (pad, indent))
            lines.append("%s%s{" % (pad, indent))
            lines.append("%s%s%sOFFSET %.6f %.6f %.6f" % (pad, indent, indent, *tip))
            lines.append("%s%s}" % (pad, indent))
        lines.append(pad + "}")

    for r in roots:
        emit(r, 0)
    motion = np.asarray(motion, dtype=np.float64)
    lines.append("MOTION")
    lines.append("Frames: %d" % (frames_declared if frames_declared is not None else len(motion)))
    lines.append("Frame Time: %.8f" % frame_time)
    for row in motion:
        lines.append(" ".join("%.6f" % v for v in row))
    with open(path, "w", newline="") as fh:
        fh.write(newline.join(lines) + newline)
    return path


def sample_layout(bvh):
    """names, parents, offsets, channels, end sites of a parsed take (core.bvh.BvhData)."""
    ends = {j: tuple(e) for j, e in enumerate(bvh.end_sites) if e is not None}
    return list(bvh.names), list(bvh.parents), bvh.offsets.copy(), list(bvh.channels), ends
