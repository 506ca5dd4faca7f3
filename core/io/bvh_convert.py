"""A parsed BVH take converted to Blender's frame (:class:`BlenderMotion`):
scaled, mirrored when the source is left-handed, Euler channels as
quaternions, and numbers beyond the sane bounds refused."""

from dataclasses import dataclass

import numpy as np

from ..maths import transforms as tf
from .bvh_data import MAX_ANGLE, MAX_DISTANCE, MAX_SCALE, MIN_SCALE, BvhError, clip


@dataclass
class BlenderMotion:
    """A BVH take ready to become an armature and an action.

    Rest geometry (``heads``, ``tails``) is in the source's axes, mirrored to a
    right-handed frame when the source is left-handed, and scaled; ``conversion``
    is the proper rotation that then takes it to Blender's Z-up frame (the
    importer builds bones in source axes and rotates them, like Blender's own
    importer, so the bones get the same rest orientation).
    """

    names: list
    parents: np.ndarray
    heads: np.ndarray        # (J, 3) rest heads, source axes (right-handed), scaled
    tails: np.ndarray        # (J, 3) rest tails, same frame
    conversion: np.ndarray   # (3, 3) source axes -> Blender axes
    rotations: np.ndarray    # (F, J, 4) joint local rotations (quaternions), source axes
    translations: np.ndarray # (F, J, 3) joint translation minus rest offset, source axes
    has_loc: np.ndarray      # (J,) bool
    has_rot: np.ndarray      # (J,) bool
    frame_time: float
    offsets: np.ndarray      # (J, 3) rest offsets, source axes, scaled

    @property
    def frame_count(self):
        return self.rotations.shape[0]

    def world_positions(self):
        """(F, J, 3) joint positions in Blender's frame, from the channels alone."""
        F, J = self.rotations.shape[:2]
        rot_w = self._source_world_rotations()
        pos_w = np.empty((F, J, 3))
        local_t = self.offsets[None] + self.translations
        for j, p in enumerate(self.parents):
            if p < 0:
                pos_w[:, j] = local_t[:, j]
            else:
                pos_w[:, j] = pos_w[:, p] + np.einsum("fij,fj->fi", rot_w[:, p], local_t[:, j])
        return np.einsum("ij,fkj->fki", self.conversion, pos_w)

    def _source_world_rotations(self):
        local = tf.quat_to_matrix(self.rotations)
        rot_w = np.empty_like(local)
        for j, p in enumerate(self.parents):
            rot_w[:, j] = local[:, j] if p < 0 else rot_w[:, p] @ local[:, j]
        return rot_w

    def world_rotations(self):
        """(F, J, 3, 3) joint world rotations in Blender's frame (joint axes, not bone axes)."""
        c = self.conversion
        return c @ self._source_world_rotations() @ c.T


def _tails(bvh, heads, scale):
    """Bone tails as Blender's BVH importer places them (End Site, only child,
    or mean of children; a small step along +Y for a zero-length bone)."""
    J = len(bvh.names)
    tails = np.empty((J, 3))
    children = [[] for _ in range(J)]
    for j, p in enumerate(bvh.parents):
        if p >= 0:
            children[p].append(j)
    for j in range(J):
        if bvh.end_sites[j] is not None:
            tails[j] = heads[j] + bvh.end_sites[j] * scale
        elif children[j]:
            tails[j] = heads[children[j]].mean(axis=0)
        else:
            tails[j] = heads[j]
    short = np.linalg.norm(tails - heads, axis=1) <= 0.001 * scale
    tails[short, 1] += scale / 10.0
    return tails


def mirror_matrix(axis_forward):
    """The reflection that turns a left-handed source right-handed: it negates
    the source's forward axis (for a Unity-style file, z)."""
    m = np.eye(3)
    k = "XYZ".index(axis_forward[-1].upper())
    m[k, k] = -1.0
    return m


def check_scale(global_scale):
    """The scale as a float, or a BvhError when it is not a sane positive number."""
    try:
        scale = float(global_scale)
    except (TypeError, ValueError):
        raise BvhError("The scale must be a number (got %r)." % (global_scale,)) from None
    if not np.isfinite(scale) or scale <= 0:
        raise BvhError("The scale must be a positive number (got %s)." % global_scale)
    if not MIN_SCALE <= scale <= MAX_SCALE:
        raise BvhError("The scale %g is outside %g-%g." % (scale, MIN_SCALE, MAX_SCALE))
    return scale


def _column_peaks(motion, cols):
    """Largest magnitude in each of ``cols`` of ``motion``, without a full-size temporary."""
    if not len(cols):
        return np.zeros(0)
    peaks = np.zeros(len(cols))
    step = max(1, (1 << 20) // len(cols))
    for f0 in range(0, motion.shape[0], step):
        block = motion[f0:f0 + step, cols]
        np.maximum(peaks, np.maximum(block.max(axis=0), -block.min(axis=0)), out=peaks)
    return peaks


def _first_row_over(motion, col, limit):
    return int(np.argmax(np.abs(motion[:, col]) > limit))


def check_ranges(bvh, global_scale=1.0):
    """Refuse numbers that are finite but not sane (see the module docstring),
    naming the line, joint and channel. Rest heads are checked by :func:`to_blender`."""
    scale = check_scale(global_scale)
    src = bvh.source
    lines = bvh.offset_lines or [None] * len(bvh.names)
    over = np.nonzero(np.abs(bvh.offsets).max(axis=1) * scale > MAX_DISTANCE)[0] if len(bvh.names) else []
    if len(over):
        j = int(over[0])
        where = ("Line %d of %s" % (lines[j], src)) if lines[j] else src
        raise BvhError("%s: the OFFSET of joint %s is %s; scaled by %g that is beyond %g m."
                       % (where, clip(bvh.names[j]), _fmt_vec(bvh.offsets[j]), scale, MAX_DISTANCE))
    site_lines = bvh.end_site_lines or [None] * len(bvh.names)
    for j, site in enumerate(bvh.end_sites):
        if site is not None and np.abs(site).max() * scale > MAX_DISTANCE:
            where = ("Line %d of %s" % (site_lines[j], src)) if site_lines[j] else src
            raise BvhError("%s: the End Site OFFSET of joint %s is %s; scaled by %g that is beyond %g m."
                           % (where, clip(bvh.names[j]), _fmt_vec(site), scale, MAX_DISTANCE))
    pos_cols, rot_cols, labels = [], [], {}
    for j, chans in enumerate(bvh.channels):
        for k, c in enumerate(chans):
            col = int(bvh.channel_start[j]) + k
            (pos_cols if c.endswith("position") else rot_cols).append(col)
            labels[col] = (bvh.names[j], c)
    for cols, limit, factor, unit in ((pos_cols, MAX_DISTANCE, scale, "m"), (rot_cols, MAX_ANGLE, 1.0, "degrees")):
        peaks = _column_peaks(bvh.motion, cols) * factor
        bad = np.nonzero(peaks > limit)[0]
        if bad.size:
            col = cols[int(bad[0])]
            row = _first_row_over(bvh.motion, col, limit / factor)
            name, channel = labels[col]
            value = bvh.motion[row, col]
            scaled = "" if unit == "degrees" else " (scaled by %g: %g m)" % (scale, value * scale)
            raise BvhError("%s: %s of joint %s is %g%s; it must be within %g %s."
                           % (bvh.where_frame(row), channel, clip(name), value, scaled, limit, unit))
    return scale


def _fmt_vec(v):
    return "(%s)" % ", ".join("%g" % x for x in v)


def to_blender(bvh, global_scale=1.0, axis_forward="-Z", axis_up="Y", handedness="RIGHT"):
    """Convert parsed BVH data to :class:`BlenderMotion`.

    Positions are scaled by ``global_scale``. Euler channels compose in the
    order listed (``Zrotation Xrotation Yrotation`` gives Rz @ Rx @ Ry). A
    left-handed source is first mirrored along its forward axis: p -> M p and
    R -> M R M, which keeps every joint rotation proper. Numbers beyond the sane
    bounds (:func:`check_ranges`) are refused before anything is computed.
    """
    if handedness not in ("RIGHT", "LEFT"):
        raise BvhError("Handedness must be RIGHT or LEFT (got %s)." % handedness)
    scale = check_ranges(bvh, global_scale)
    conversion = tf.axis_conversion_matrix(axis_forward, axis_up)
    F, J = bvh.frame_count, len(bvh.names)
    offsets = bvh.offsets * scale
    rotations = np.zeros((F, J, 4))
    rotations[..., 0] = 1.0
    translations = np.zeros((F, J, 3))
    has_loc = np.zeros(J, dtype=bool)
    has_rot = np.zeros(J, dtype=bool)
    by_order = {}             # rotation order -> (joints, their columns)
    by_axis = ([], [], [])    # position axis -> (joint, column) pairs
    for j in range(J):
        chans = bvh.channels[j]
        start = int(bvh.channel_start[j])
        order = "".join(c[0] for c in chans if c.endswith("rotation"))
        if order:
            has_rot[j] = True
            joints, cols = by_order.setdefault(order, ([], []))
            joints.append(j)
            cols.append([start + k for k, c in enumerate(chans) if c.endswith("rotation")])
        for k, c in enumerate(chans):
            if c.endswith("position"):
                has_loc[j] = True
                by_axis["XYZ".index(c[0])].append((j, start + k))
    # Joints that share a rotation order are converted together, a block of
    # frames at a time so that temporaries stay small.
    for order, (joints, cols) in by_order.items():
        joints, cols = np.array(joints), np.array(cols)
        step = max(1, (1 << 16) // cols.size)
        for f0 in range(0, F, step):
            angles = np.radians(bvh.motion[f0:f0 + step][:, cols])
            rotations[f0:f0 + step, joints] = tf.euler_to_quat(angles, order)
    # A position channel replaces the offset on its axis; a missing axis keeps it.
    for k, pairs in enumerate(by_axis):
        if pairs:
            joints = np.array([p[0] for p in pairs])
            cols = np.array([p[1] for p in pairs])
            translations[:, joints, k] = bvh.motion[:, cols] * scale - offsets[joints, k]
    heads = np.zeros((J, 3))
    for j, p in enumerate(bvh.parents):
        heads[j] = offsets[j] + (heads[p] if p >= 0 else 0.0)
    far = np.nonzero(np.abs(heads).max(axis=1) > MAX_DISTANCE)[0]
    if far.size:
        j = int(far[0])
        raise BvhError("%s: at rest joint %s lies %g m from its root (the offsets of its chain add up); "
                       "it must be within %g m." % (bvh.source, clip(bvh.names[j]), np.abs(heads[j]).max(),
                                                    MAX_DISTANCE))
    tails = _tails(bvh, heads, scale)
    if handedness == "LEFT":
        m = mirror_matrix(axis_forward)
        heads, tails, offsets = heads @ m, tails @ m, offsets @ m
        translations = translations @ m
        rotations = mirror_quaternions(rotations, m)
    return BlenderMotion(
        names=list(bvh.names), parents=bvh.parents.copy(), heads=heads, tails=tails,
        conversion=conversion, rotations=rotations, translations=translations,
        has_loc=has_loc, has_rot=has_rot, frame_time=bvh.frame_time, offsets=offsets)


def skeleton_difference(a, b, tolerance=1e-5):
    """Why the converted takes ``a`` and ``b`` cannot play on one armature (a
    sentence fragment), or None when their joints, hierarchy and rest
    geometry (within ``tolerance`` in Blender units) are the same."""
    if list(a.names) != list(b.names):
        other = sorted(set(a.names) ^ set(b.names))
        return "its joints differ (%s)" % (", ".join(other[:5]) if other else "in their order")
    if not np.array_equal(np.asarray(a.parents), np.asarray(b.parents)):
        j = int(np.nonzero(np.asarray(a.parents) != np.asarray(b.parents))[0][0])
        return "joint %s hangs under another parent" % a.names[j]
    if not np.allclose(a.conversion, b.conversion):
        return "it was converted with other axes"
    far = np.maximum(np.abs(a.heads - b.heads).max(axis=1), np.abs(a.tails - b.tails).max(axis=1))
    if far.max() > tolerance:
        j = int(np.argmax(far))
        return "joint %s rests %.4g units away" % (a.names[j], float(far[j]))
    return None


def mirror_quaternions(q, m):
    """Quaternions of M R M for a diagonal reflection M: the axis u of R becomes
    M u and, the reflection reversing orientation, the angle changes sign, so
    (w, v) -> (w, -M v)."""
    return np.concatenate([q[..., :1], -q[..., 1:] * np.diag(m)], axis=-1)
