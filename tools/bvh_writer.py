"""Write BVH files (any channel layout, rotation order, frame rate): for the tests, the benches and the
convention takes (tools/convention_takes.py), whose joints are given by their world rotations and positions
(write_skeleton)."""

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
    """names, parents, offsets, channels, end sites of a parsed take (core.io.bvh_data.BvhData)."""
    ends = {j: tuple(e) for j, e in enumerate(bvh.end_sites) if e is not None}
    return list(bvh.names), list(bvh.parents), bvh.offsets.copy(), list(bvh.channels), ends


def synthetic_bvh(joints, frames, seed=0, frame_time=1.0 / 60.0, reach=50):
    """BVH text (str) of a made-up skeleton of ``joints`` joints and ``frames`` frames.

    Joint j > 0 hangs under one of the ``reach`` joints made just before it (a
    bushy tree whose depth grows like joints / reach); the root has six
    channels, every other joint three rotations. Written without recursion, so
    any size works. Angles stay within +-30 degrees.
    """
    rng = np.random.default_rng(seed)
    parents = np.full(joints, -1, dtype=np.int64)
    for j in range(1, joints):
        parents[j] = rng.integers(max(0, j - reach), j)
    offsets = rng.uniform(-5.0, 5.0, size=(joints, 3))
    offsets[0] = 0.0
    children = [[] for _ in range(joints)]
    for j in range(1, joints):
        children[parents[j]].append(j)
    lines = ["HIERARCHY"]
    # Depth-first emission with an explicit stack: ("open", j, depth) or ("close", j, depth).
    stack = [("open", 0, 0)]
    order = []
    while stack:
        what, j, depth = stack.pop()
        pad = "\t" * depth
        if what == "close":
            if not children[j]:
                lines += [pad + "\tEnd Site", pad + "\t{", pad + "\t\tOFFSET 0.0 1.0 0.0", pad + "\t}"]
            lines.append(pad + "}")
            continue
        order.append(j)
        lines.append("%s%s J%d" % (pad, "ROOT" if j == 0 else "JOINT", j))
        lines.append(pad + "{")
        lines.append("%s\tOFFSET %.4f %.4f %.4f" % (pad, *offsets[j]))
        if j == 0:
            lines.append(pad + "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation")
        else:
            lines.append(pad + "\tCHANNELS 3 Zrotation Xrotation Yrotation")
        stack.append(("close", j, depth))
        for c in reversed(children[j]):
            stack.append(("open", c, depth + 1))
    n_channels = 3 * joints + 3
    motion = rng.uniform(-30.0, 30.0, size=(frames, n_channels)).astype(np.float32)
    motion[:, :3] = rng.uniform(-10.0, 10.0, size=(frames, 3))
    lines += ["MOTION", "Frames: %d" % frames, "Frame Time: %.8f" % frame_time]
    body = "\n".join(" ".join("%.3f" % v for v in row) for row in motion)
    return "\n".join(lines) + "\n" + body + "\n"


# ---------------------------------------------------------------------------
# A skeleton from world rotations and positions (the convention takes)


def matrix_to_euler(m, order):
    """Angles in degrees (..., 3), listed in ``order`` ("ZYX" or "ZXY"), such that
    core.maths.transforms.euler_to_matrix gives ``m`` back."""
    if order == "ZYX":   # R = Rz Ry Rx
        a = np.stack([np.arctan2(m[..., 1, 0], m[..., 0, 0]), np.arcsin(np.clip(-m[..., 2, 0], -1, 1)),
                      np.arctan2(m[..., 2, 1], m[..., 2, 2])], axis=-1)
    elif order == "ZXY":  # R = Rz Rx Ry
        a = np.stack([np.arctan2(-m[..., 0, 1], m[..., 1, 1]), np.arcsin(np.clip(m[..., 2, 1], -1, 1)),
                      np.arctan2(-m[..., 2, 0], m[..., 2, 2])], axis=-1)
    else:
        raise ValueError("order must be ZYX or ZXY")
    return np.degrees(np.unwrap(a, axis=0))


def write_skeleton(path, names, parents, offsets, channels, rot, pos, frame_time, unit=1.0, end_sites=None):
    """Write joints whose world rotations ``rot`` (F, J, 3, 3) and positions
    ``pos`` (F, J, 3) are given: each joint's channels are its rotation and
    place relative to its parent. A joint without position channels must sit at
    its OFFSET from its parent on every frame. ``unit``: file units per input
    unit."""
    cols = []
    for j, p in enumerate(parents):
        r_parent = rot[:, p] if p >= 0 else np.eye(3)
        t_parent = pos[:, p] if p >= 0 else np.zeros(3)
        local_r = np.swapaxes(r_parent, -1, -2) @ rot[:, j]
        local_t = np.einsum("fji,fj->fi", np.broadcast_to(r_parent, rot[:, j].shape), pos[:, j] - t_parent)
        chans = channels[j]
        if not any(c.endswith("position") for c in chans):
            gap = np.abs(local_t - offsets[j]).max()
            if gap > 1e-6 * max(1.0, np.abs(offsets[j]).max()):
                raise ValueError("%s does not stay at its OFFSET (%.3g off)" % (names[j], gap))
        order = "".join(c[0] for c in chans if c.endswith("rotation"))
        angles = matrix_to_euler(local_r, order)
        k = 0
        for c in chans:
            if c.endswith("position"):
                cols.append(local_t[:, "XYZ".index(c[0])] * unit)
            else:
                cols.append(angles[:, k])
                k += 1
    # A file lists joints depth first and its channels in that order.
    order = _depth_first(parents)
    new = {j: k for k, j in enumerate(order)}
    starts = np.cumsum([0] + [len(c) for c in channels])
    motion = np.stack(cols, axis=1)[:, np.concatenate([np.arange(starts[j], starts[j + 1]) for j in order])]
    return write_bvh(path, [names[j] for j in order], [new[parents[j]] if parents[j] >= 0 else -1 for j in order],
                     np.asarray(offsets)[order] * unit, [channels[j] for j in order], motion, frame_time,
                     end_sites={new[j]: tuple(np.asarray(e) * unit) for j, e in (end_sites or {}).items()})


def _depth_first(parents):
    """Joint indices in the order a BVH file lists them (children in index order)."""
    children = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            children[p].append(j)
    order, stack = [], [j for j, p in enumerate(parents) if p < 0][::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    return order
