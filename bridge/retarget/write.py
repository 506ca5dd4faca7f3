"""The retargeted result written as a new action in bulk, every pose channel
kept to put back if the write fails."""

import bpy
import numpy as np

from ..blender import armature_data, compat
from .rigify import switch_to_fk


class _PoseBackup:
    """The pose channels of every bone, to put back after a failed write."""

    PROPS = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3),
             ("rotation_axis_angle", 4), ("scale", 3))

    def __init__(self, obj):
        self.obj = obj
        pbones = obj.pose.bones
        self.values = {}
        for prop, n in self.PROPS:
            buf = np.empty(len(pbones) * n, dtype=np.float32)
            pbones.foreach_get(prop, buf)
            self.values[prop] = buf
        self.modes = [pb.rotation_mode for pb in pbones]
        self.props = []        # (bone, custom property, old value)

    def reset_to_rest(self):
        pbones = self.obj.pose.bones
        J = len(pbones)
        rest = {"location": np.zeros(3), "rotation_quaternion": np.array([1.0, 0, 0, 0]),
                "rotation_euler": np.zeros(3), "rotation_axis_angle": np.array([0.0, 0, 1, 0]),
                "scale": np.ones(3)}
        for prop, _n in self.PROPS:
            pbones.foreach_set(prop, np.tile(rest[prop], J).astype(np.float32))

    def restore(self):
        pbones = self.obj.pose.bones
        for pb, mode in zip(pbones, self.modes):
            pb.rotation_mode = mode
        for prop, _n in self.PROPS:
            pbones.foreach_set(prop, self.values[prop])
        for bone, prop, value in self.props:
            pbones[bone][prop] = value


def write_action(target, setup, result, frames, name):
    """The result as a new action on ``target`` (assigned to it), in bulk:
    keyed bones switched to quaternions, every other pose channel put at
    rest, Rigify limbs whose FK controls got keys switched to FK, and the
    automatic mappings stored. On failure everything is put back and the
    error raised. Returns (action, names of the switched Rigify limbs)."""
    names = setup.target.names
    channels, columns = [], []
    for k, j in enumerate(result.keyed):
        for i in range(4):
            channels.append((armature_data.bone_path(names[j], "rotation_quaternion"), i, names[j]))
            columns.append(result.rotations[:, k, i])
    for k, j in enumerate(result.located):
        for i in range(3):
            channels.append((armature_data.bone_path(names[j], "location"), i, names[j]))
            columns.append(result.locations[:, k, i])
    values = np.stack(columns, axis=1)
    ad = target.animation_data
    old_action = ad.action if ad else None
    backup = _PoseBackup(target)
    new = None
    try:
        new = compat.new_action(target, name)
        for j in result.keyed:
            target.pose.bones[names[j]].rotation_mode = "QUATERNION"
        backup.reset_to_rest()
        compat.write_curves(new, target, channels, frames, values)
        switched = switch_to_fk(target, [names[j] for j in result.keyed], backup)
    except Exception:
        backup.restore()
        if new is not None:
            if old_action is not None:
                compat.assign_action(target, old_action)
            else:
                target.animation_data.action = None
            bpy.data.actions.remove(new)
        raise
    return new, switched
