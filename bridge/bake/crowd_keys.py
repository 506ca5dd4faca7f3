"""One baked crowd character carried from one Blender file to another: what
Bake All's other processes write (:func:`save`, one .npz per pair) and the open
file reads back (:func:`load`).

A file holds everything a bake leaves on its armature: every F-Curve of the
action it plays (:func:`compat.record_curves`: paths, groups, keys and handles),
the armature's ``mm_`` properties, each pose bone's rotation mode, pose channels
and number properties, and the bake's report (its JSON). Loading makes the
action anew with the name a bake in this file gives it, so the keys are those of
the process that baked them, bit for bit.
"""

import json
import os
import re

import numpy as np

from ...core.errors import MotionMatchingError
from ...core.measure.report import BakeReport
from ..blender import compat

POSE = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
        ("scale", 3))


def file_name(folder, index):
    return os.path.join(folder, "pair_%05d.npz" % index)


class Claimed:
    """The pairs numbered ``order`` (from ``pairs``), for :func:`crowd.bake_pairs`:
    each is handed out, as the bake comes to it, only if no other process has
    claimed it first (a file made in ``folder`` that only one process can make).
    ``taken``: the numbers of the pairs handed out, in turn."""

    def __init__(self, folder, pairs, order):
        self.folder, self.pairs, self.order, self.taken = folder, pairs, list(order), []

    def __len__(self):
        return len(self.order)

    def __iter__(self):
        for i in self.order:
            try:
                os.close(os.open(os.path.join(self.folder, "claim_%05d" % i), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            self.taken.append(i)
            yield self.pairs[i]


def _pose(obj):
    pbones = obj.pose.bones
    out = {}
    for prop, n in POSE:
        buf = np.empty(len(pbones) * n, dtype=np.float32)
        pbones.foreach_get(prop, buf)
        out["pose_" + prop] = buf
    return out


def _numbers(owner, prefix=""):
    return {k: owner[k] for k in owner.keys() if k.startswith(prefix) and isinstance(owner[k], (int, float))}


def save(folder, index, armature, report):
    """Write pair ``index``'s baked ``armature`` and its BakeReport to its file in
    ``folder`` (whole or not at all: written aside, then renamed)."""
    action = armature.animation_data.action
    state = {"action": re.sub(r"\.\d{3,}$", "", action.name), "report": report.to_json(),
             "object": _numbers(armature, "mm_"),
             "modes": [pb.rotation_mode for pb in armature.pose.bones],
             "bones": {pb.name: _numbers(pb) for pb in armature.pose.bones if _numbers(pb)}}
    arrays = compat.record_curves(action, armature)
    arrays.update(_pose(armature))
    arrays["bone_names"] = np.array([pb.name for pb in armature.pose.bones], dtype=str)
    arrays["state"] = np.array(json.dumps(state))
    path = file_name(folder, index)
    with open(path + ".part", "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(path + ".part", path)


def read(path):
    """The arrays and the state of a pair's file."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, json.loads(str(arrays.pop("state")))


def load(path, armature):
    """Make what the file holds on ``armature``: a new action (assigned, the one
    it played kept with a fake user as a bake keeps it) and the rest; returns
    (action, BakeReport). On failure nothing is left."""
    import bpy

    arrays, state = read(path)
    names = [pb.name for pb in armature.pose.bones]
    if names != [str(n) for n in arrays["bone_names"]]:
        raise MotionMatchingError("%s changed while the crowd was baking: its bones are not the ones baked." % armature.name)
    ad = armature.animation_data
    previous = ad.action if ad else None
    if previous is not None:
        previous.use_fake_user = True   # keep the take the armature played
    action = compat.new_action(armature, state["action"])
    try:
        compat.replay_curves(action, armature, arrays)
    except BaseException:
        bpy.data.actions.remove(action)
        if previous is not None:
            compat.assign_action(armature, previous)
        raise
    pbones = armature.pose.bones
    for pb, mode in zip(pbones, state["modes"]):
        if pb.rotation_mode != mode:
            pb.rotation_mode = mode
    for prop, _n in POSE:
        pbones.foreach_set(prop, arrays["pose_" + prop])
    for key, value in state["object"].items():
        armature[key] = value
    for bone, values in state["bones"].items():
        for key, value in values.items():
            pbones[bone][key] = value
    return action, BakeReport.from_json(state["report"])
