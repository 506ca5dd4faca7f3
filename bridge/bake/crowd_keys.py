"""One crowd character's bake carried from one Blender process to another:
what Bake All's other processes write (:func:`save`, one .npz per pair) and
Blender's own process reads back (:func:`load`) to key it there.

A file holds what :func:`.bake_job.compute` returned, before anything is keyed:
the frames, the database skeleton's pose-bone locations and rotations (or, onto
another rig, the retarget's result), the report's per-frame figures and the
report itself (its JSON), with the armature's bone names to check it against.
Blender's own process keys it with the very write functions a bake in one
process uses (:func:`.bake_job.write`), so the keys are the same bit for bit.

Another file holds what Blender's own process derived from the database (the
bake's tables, :func:`save_derived`), so that the others need not derive it again.
"""

import dataclasses
import json
import os
import pickle

import numpy as np

from ...core.errors import MotionMatchingError
from ...core.job.run import skeleton_of
from ...core.measure.report import BakeReport, PerFrame
from ...core.retarget.frames import Result
from . import bake as bake_bridge

DERIVED = "derived.pickle"   # what the database gave Blender's own process (caches), for the others


def file_name(folder, index):
    return os.path.join(folder, "pair_%05d.npz" % index)


def save_derived(folder, database_id, values):
    """Write what Blender's own process derived from the database stored as
    ``database_id`` (database_store.stored_id, derived_values) for the others
    to start from (whole or not at all). Only these processes read it: a file
    of this process's own, in a folder only this user can write (tempfile.mkdtemp)."""
    path = os.path.join(folder, DERIVED)
    try:
        data = pickle.dumps((database_id, values), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        # Some of it cannot be carried: the others derive that themselves.
        data = pickle.dumps((database_id, _picklable(values)), protocol=pickle.HIGHEST_PROTOCOL)
    with open(path + ".part", "wb") as fh:
        fh.write(data)
    os.replace(path + ".part", path)


def _picklable(values):
    out = {}
    for name, value in values.items():
        try:
            pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            continue
        out[name] = value
    return out


def load_derived(folder, database_id):
    """What :func:`save_derived` wrote for the database stored as
    ``database_id``, or {} when it is not there (yet)."""
    try:
        with open(os.path.join(folder, DERIVED), "rb") as fh:
            stored, values = pickle.load(fh)
    except FileNotFoundError:
        return {}
    return values if stored == database_id else {}


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


def _per_frame(report):
    return {"per_" + f.name: getattr(report.per_frame, f.name) for f in dataclasses.fields(PerFrame)}


def save(folder, index, armature, computed):
    """Write pair ``index``'s computed bake (bake_job.compute: a BakeOutput, or a
    bake.Retargeted) for ``armature`` to its file in ``folder`` (whole or not at
    all: written aside, then renamed). Returns its report."""
    report = computed.report
    arrays = {"frames": computed.frames, **_per_frame(report)}
    if isinstance(computed, bake_bridge.Retargeted):   # onto another rig
        result = computed.result
        arrays.update(keyed=np.asarray(result.keyed), located=np.asarray(result.located),
                      rotations=result.rotations, locations=result.locations)
        names = list(result.names)
    else:
        arrays.update(rotations=computed.rotations, locations=computed.locations)
        names = list(computed.skeleton.names)
    state = {"report": report.to_json(), "names": names, "bones": [pb.name for pb in armature.pose.bones],
             "warnings": list(getattr(computed, "warnings", []))}
    arrays["state"] = np.array(json.dumps(state))
    path = file_name(folder, index)
    with open(path + ".part", "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(path + ".part", path)
    return report


def read(path):
    """The arrays and the state of a pair's file."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, json.loads(str(arrays.pop("state")))


def load(path, job):
    """What a pair's file holds, as :func:`.bake_job.compute` returned it for
    ``job`` (a bake_job.BakeJob set up here for the same pair), for
    :func:`.bake_job.write`; refused when the armature's bones are not those baked."""
    arrays, state = read(path)
    armature = job.target
    if state["bones"] != [pb.name for pb in armature.pose.bones]:
        raise MotionMatchingError("%s changed while the crowd was baking: its bones are not the ones baked." % armature.name)
    report = BakeReport.from_json(state["report"])
    report.per_frame = PerFrame(**{f.name: arrays["per_" + f.name] for f in dataclasses.fields(PerFrame)})
    if job.setup is not None:
        if list(job.setup.target.names) != state["names"]:
            raise MotionMatchingError("%s changed while the crowd was baking: its bones are not the ones baked." % armature.name)
        result = Result(arrays["keyed"], arrays["rotations"], arrays["located"], arrays["locations"], state["names"])
        return bake_bridge.Retargeted(result=result, frames=arrays["frames"], report=report, warnings=state["warnings"])
    skeleton = bake_bridge.database_cache(job.database)("bake_skeleton", lambda: skeleton_of(job.database))
    if list(skeleton.names) != state["names"]:
        raise MotionMatchingError("The database changed while the crowd was baking: bake the crowd again.")
    return bake_bridge.BakeOutput(result=None, frames=arrays["frames"], times=None, locations=arrays["locations"],
                                  rotations=arrays["rotations"], skeleton=skeleton, settings=None, report=report)
