"""Armatures and their animation as numpy arrays, in bulk.

Reading: rest matrices with one ``foreach_get``; action curves sampled on whole
frames (keys read with ``foreach_get``; curves that are not keyed on every asked
frame fall back to Blender's own ``FCurve.evaluate``). Writing: see compat.
"""

import numpy as np

from ...core.maths import transforms as tf
from . import compat


def bone_order(arm_data):
    """Bone names with every parent before its children, and parent indices
    (depth first, children in Blender's order; no recursion, so any depth works)."""
    names, parents = [], []
    stack = [(bone, -1) for bone in reversed([b for b in arm_data.bones if b.parent is None])]
    while stack:
        bone, parent = stack.pop()
        names.append(bone.name)
        parents.append(parent)
        here = len(names) - 1
        stack.extend((child, here) for child in reversed(bone.children))
    return names, np.array(parents, dtype=np.int64)


def _bone_index(bones):
    """{name: position in ``Armature.bones``}."""
    return {name: i for i, name in enumerate(bones.keys())}


def rest_matrices(arm_data, names=None):
    """(J, 4, 4) Bone.matrix_local in armature space, in ``names`` order."""
    bones = arm_data.bones
    buf = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", buf)
    # foreach_get hands matrices over column by column.
    mats = buf.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
    if names is None:
        return mats
    pos = _bone_index(bones)
    return mats[[pos[n] for n in names]]


def rest_tails(arm_data, names):
    """(J, 3) Bone.tail_local in armature space, in ``names`` order."""
    bones = arm_data.bones
    buf = np.empty(len(bones) * 3, dtype=np.float32)
    bones.foreach_get("tail_local", buf)
    pos = _bone_index(bones)
    return buf.reshape(-1, 3).astype(np.float64)[[pos[n] for n in names]]


def rest_offsets(arm_data, names):
    """(J, 4, 4) each bone's rest relative to its parent, as Blender's pose
    evaluation builds it: the bone's roll matrix (Bone.matrix) and its head,
    which lies in the parent's space with the parent's length added along Y.
    Root bones: Bone.matrix_local."""
    bones = arm_data.bones
    n = len(bones)
    rot = np.empty(n * 9, dtype=np.float32)
    bones.foreach_get("matrix", rot)
    rot = rot.reshape(-1, 3, 3).transpose(0, 2, 1).astype(np.float64)
    head = np.empty(n * 3, dtype=np.float32)
    bones.foreach_get("head", head)
    head = head.reshape(-1, 3).astype(np.float64)
    length = np.empty(n, dtype=np.float32)
    bones.foreach_get("length", length)
    local = rest_matrices(arm_data)
    pos = _bone_index(bones)
    wanted = [pos[name] for name in names]
    parent = np.array([pos[bones[name].parent.name] if bones[name].parent else -1 for name in names],
                      dtype=np.int64)
    out = np.zeros((len(names), 4, 4))
    out[:, :3, :3] = rot[wanted]
    out[:, :3, 3] = head[wanted]
    out[:, 1, 3] += np.where(parent >= 0, length[parent], 0.0)
    out[:, 3, 3] = 1.0
    roots = parent < 0
    out[roots] = local[np.array(wanted, dtype=np.int64)[roots]]
    return out


_EXTRAPOLATION = {"CONSTANT": 0, "LINEAR": 1}


def split_bone_path(path):
    """('bone name', 'property') of a pose-bone data path, or None for other paths."""
    if not path.startswith(_BONE_PREFIX):
        return None
    start = len(_BONE_PREFIX)
    if "\\" not in path:
        end = path.find('"]', start)
        if end < 0 or path[end + 2:end + 3] != ".":
            return None
        return path[start:end], path[end + 3:]
    name, i = [], start
    while i < len(path):
        c = path[i]
        if c == "\\" and i + 1 < len(path):
            name.append(path[i + 1])
            i += 2
            continue
        if c == '"':
            break
        name.append(c)
        i += 1
    if path[i:i + 3] != '"].':
        return None
    return "".join(name), path[i + 3:]


_BONE_PREFIX = 'pose.bones["'


def curves_by_bone(action, obj):
    """{bone name: [F-Curve, ...]} of the action's pose-bone curves, in one pass."""
    out = {}
    for fc in compat.fcurves(action, obj):
        split = split_bone_path(fc.data_path)
        if split is not None:
            out.setdefault(split[0], []).append(fc)
    return out


def sample_curves(action, obj, frames, curves=None):
    """Values of every curve of ``action`` (or of the F-Curves ``curves`` only)
    on ``frames``: {(path, index): (F,)}.

    Curves keyed on every asked frame are read straight from their keys (a curve
    passes through its keys whatever the interpolation). Others are evaluated in
    bulk by core.io.fcurve_eval, which reproduces Blender's own evaluation; a curve
    it cannot do (modifiers, elastic easing) is left to ``FCurve.evaluate``.
    """
    from ...core.io import fcurve_eval, fcurve_keys

    frames = np.asarray(frames, dtype=np.float64)
    out = {}
    sparse, sparse_keys = [], []
    for fc in (compat.fcurves(action, obj) if curves is None else curves):
        if fc.mute or len(fc.keyframe_points) == 0:
            continue
        key = (fc.data_path, fc.array_index)
        n = len(fc.keyframe_points)
        co = compat.read_curve(fc, ("co",))["co"].astype(np.float64)
        hit = np.clip(np.searchsorted(co[:, 0], frames), 0, n - 1)
        exact = np.abs(co[hit, 0] - frames) < 1e-4
        if len(fc.modifiers) == 0 and exact.all():
            out[key] = co[hit, 1]
            continue
        supported = len(fc.modifiers) == 0 and fc.extrapolation in _EXTRAPOLATION
        keys = compat.read_curve(fc) if supported else None
        if supported:
            try:
                fcurve_eval.check_curve(keys["co"], keys["interpolation"], _EXTRAPOLATION[fc.extrapolation],
                                        None)
            except fcurve_keys.UnsupportedCurve:
                supported = False
        if supported:
            sparse.append((key, fc))
            sparse_keys.append(keys)
        else:
            evaluate = fc.evaluate
            out[key] = np.array([evaluate(f) for f in frames])
    if sparse:
        values = fcurve_eval.evaluate_curves(
            sparse_keys, frames, extrapolation=[_EXTRAPOLATION[fc.extrapolation] for _k, fc in sparse])
        for (key, _fc), v in zip(sparse, values):
            out[key] = v
    return out


_EULER_LISTING = {  # Blender's Euler mode names the axis applied first first.
    "XYZ": "ZYX", "XZY": "YZX", "YXZ": "ZXY", "YZX": "XZY", "ZXY": "YXZ", "ZYX": "XYZ",
}


def pose_channels(obj, action, frames, names=None, by_bone=None):
    """Each pose bone's location (F, J, 3), rotation as unit quaternions
    (F, J, 4) and scale (F, J, 3) on ``frames``, whatever its rotation mode.

    Channels without a curve keep the pose bone's current value, as Blender
    does when it evaluates the action. Only the curves of ``names`` are read
    (``by_bone``: :func:`curves_by_bone` of the action, when the caller has it).
    """
    if names is None:
        names, _ = bone_order(obj.data)
    frames = np.asarray(frames, dtype=np.float64)
    F, J = len(frames), len(names)
    if action is not None:
        if by_bone is None:
            by_bone = curves_by_bone(action, obj)
        wanted = [fc for name in names for fc in by_bone.get(name, ())]
        values = sample_curves(action, obj, frames, curves=wanted)
    else:
        values = {}
    loc, quat, scale = np.empty((F, J, 3)), np.empty((F, J, 4)), np.empty((F, J, 3))
    for j, name in enumerate(names):
        pb = obj.pose.bones[name]
        prefix = 'pose.bones["%s"].' % _escape(name)

        def channel(prop, size, current):
            arr = np.empty((F, size))
            for k in range(size):
                v = values.get((prefix + prop, k))
                arr[:, k] = current[k] if v is None else v
            return arr

        loc[:, j] = channel("location", 3, pb.location)
        scale[:, j] = channel("scale", 3, pb.scale)
        mode = pb.rotation_mode
        if mode == "QUATERNION":
            # Blender normalises the (interpolated) quaternion before use.
            quat[:, j] = tf.quat_normalize(channel("rotation_quaternion", 4, pb.rotation_quaternion))
        elif mode == "AXIS_ANGLE":
            aa = channel("rotation_axis_angle", 4, pb.rotation_axis_angle)
            quat[:, j] = tf.quat_from_axis_angle(aa[:, 1:], aa[:, 0])
        else:
            eul = channel("rotation_euler", 3, pb.rotation_euler)
            listing = _EULER_LISTING[mode]
            quat[:, j] = tf.euler_to_quat(eul[:, ["XYZ".index(a) for a in listing]], listing)
    return loc, quat, scale


def basis_matrices(loc, quat, scale):
    """(F, J, 4, 4) local transforms from channels (translation, rotation, scale)."""
    m = tf.compose(loc, tf.quat_to_matrix(quat))
    m[..., :3, :3] *= scale[..., None, :]
    return m


def pose_basis(obj, action, frames, names=None):
    """(F, J, 4, 4) each pose bone's local transform on ``frames``."""
    return basis_matrices(*pose_channels(obj, action, frames, names))


def _escape(name):
    return name.replace("\\", "\\\\").replace('"', '\\"')


def bone_path(name, prop):
    return 'pose.bones["%s"].%s' % (_escape(name), prop)


def armature_pose(obj, action, frames):
    """Armature-space pose matrices (F, J, 4, 4) and the bone names and parents."""
    names, parents = bone_order(obj.data)
    rest = rest_matrices(obj.data, names)
    basis = pose_basis(obj, action, frames, names)
    return names, parents, rest, tf.pose_fk(parents, rest, basis, rest_offsets(obj.data, names))


def write_bone_transforms(action, obj, name, frames, basis, write_location=True):
    """Key one bone's location and quaternion rotation from basis matrices (F, 4, 4)."""
    quats = tf.quat_unroll(tf.matrix_to_quat(basis[:, :3, :3]), axis=0)
    if write_location:
        compat.write_channels(action, obj, bone_path(name, "location"), frames, basis[:, :3, 3], group=name)
    compat.write_channels(action, obj, bone_path(name, "rotation_quaternion"), frames, quats, group=name)


def fk_world(obj, names, parents, fk, wanted, frames, basis_of):
    """World positions (F, K, 3) of the bones ``wanted`` and the world matrices
    (F, 4, 4) of the last of them, by forward kinematics on ``fk`` (indices of
    ``wanted`` and their ancestors, parents first) a block of frames at a time;
    ``basis_of(f0, f1)``: the (f1 - f0, len(fk), 4, 4) pose bases of the fk bones."""
    slot = {int(j): k for k, j in enumerate(fk)}
    fk_names = [names[j] for j in fk]
    fk_parents = np.array([slot[int(parents[j])] if parents[j] >= 0 else -1 for j in fk], dtype=np.int64)
    rest = rest_matrices(obj.data, fk_names)
    offsets = rest_offsets(obj.data, fk_names)
    matrix_world = np.asarray(obj.matrix_world, dtype=np.float64)
    want = [slot[names.index(n)] for n in wanted]
    positions, last = np.empty((frames, len(wanted), 3)), np.empty((frames, 4, 4))
    chunk = max(1, (1 << 16) // max(len(fk), 1))
    for f0 in range(0, frames, chunk):
        f1 = min(frames, f0 + chunk)
        world = tf.mm4(matrix_world, tf.pose_fk(fk_parents, rest, basis_of(f0, f1), offsets))
        positions[f0:f1] = world[:, want][:, :, :3, 3]
        last[f0:f1] = world[:, want[-1]]
    return positions, last
