"""One bake of the scene as the Bake operator runs it, from core settings.

:func:`start` checks the input and returns a :class:`BakeJob` whose ``steps``
(a generator yielding the fraction done) compute the bake; :func:`finish` keys
the result on the armature, writes the report's text block and the scene's last
report: :func:`compute` (retargeted when it is another rig; no Blender data
written) then :func:`write` (the keys), which Bake All's other processes split
(they compute, Blender's own process writes). ``motion_matching.bake`` runs
these with the scene's settings and its options; :func:`bake` runs them to the
end with any core settings (the benchmark's earlier behaviour, for instance).
"""

import json
from dataclasses import dataclass

import bpy

from ...core.bake.pipeline import run_to_end
from ...core.job.run import skeleton_of
from . import bake as bake_bridge, moves as bake_moves
from ..blender import scene_data


@dataclass
class BakeJob:
    """A bake set up: its step generator, the armature keyed, the retarget setup (None:
    the database's own skeleton), the database's note and the database."""

    steps: object
    target: object
    setup: object
    note: str
    database: object = None


def start(context, settings, controller="", armature="", frame_start=0, frame_end=0, tag_query="", scale=0.0,
          database=None, ground=""):
    """Check the input and set the bake up with core ``settings`` (empty or 0 arguments: the scene's).
    ``database``: (MotionDatabase, note) from bridge.bake.bake.ensure_database when the caller
    has just checked it (Bake All, once for every pair), else checked here. ``ground``: the
    name of the mesh walked on (empty: the scene's Ground)."""
    scene = context.scene
    fs = frame_start or scene.frame_start
    fe = frame_end or scene.frame_end
    query = tag_query or scene.motion_matching.tag_query
    ctrl = bake_bridge.controller_object(context, controller)
    target = bake_bridge.bake_target(context, armature)
    if database is None:
        database = bake_bridge.ensure_database(context)
    motion_database, note = database
    setup = None
    if bake_bridge.needs_retarget(target, skeleton_of(motion_database)):
        setup = bake_bridge.retarget_setup(context, target, scale or None, motion_database)
    steps = bake_bridge.run_steps(context, ctrl, target, settings, tag_query=query, frame_start=fs, frame_end=fe,
                                  path_scale=setup.plan.scale if setup else 1.0,
                                  to_bake=bake_bridge.controller_matrix(setup) if setup else None, database=database,
                                  moves=bake_moves.controller_moves(scene, ctrl), ground=ground)
    return BakeJob(steps=steps, target=target, setup=setup, note=note, database=motion_database)


def compute(context, job, output):
    """What :func:`write` keys, from the job's ``output`` (a bake BakeOutput):
    the output itself, or onto another rig its retargeted result
    (bake_bridge.Retargeted); the database's note on the report. Writes no
    Blender data (Bake All's other processes compute it and this one keys it)."""
    if job.note and not output.report.note:
        output.report.note = job.note
    if job.setup is None:
        return output
    return bake_bridge.retarget(context, job.target, output, job.setup)   # its warnings join the report's


def write(context, job, computed):
    """Key what :func:`compute` returned on the job's armature and write the
    report (text block, the scene's last report); returns (report, its JSON data)."""
    if job.setup is not None:
        bake_bridge.write_retargeted_result(job.target, job.setup, computed)
    else:
        bake_bridge.write(job.target, computed)
    report = computed.report
    scene_data.write_text("Motion Matching Bake", report.to_text() + "\n")
    data = report.to_json()
    context.scene.motion_matching.last_bake_report = json.dumps(data)
    return report, data


def finish(context, job, output):
    """:func:`compute` then :func:`write`: key the result and write the report;
    returns (report, its JSON data)."""
    return write(context, job, compute(context, job, output))


def write_json(path, data):
    """Write the report's JSON to ``path`` (Blender's relative paths allowed); None
    or the reason it cannot be written."""
    try:
        with open(bpy.path.abspath(path), "w") as fh:
            json.dump(data, fh, indent=2)
    except OSError as ex:
        return str(ex.strerror or ex)
    return None


def bake(context, settings, report_path="", **options):
    """Bake with core ``settings`` as the operator does, to the end (``options``:
    those of :func:`start`); returns the report's JSON data. The scene's frame stays."""
    frame = context.scene.frame_current
    try:
        job = start(context, settings, **options)
        _report, data = finish(context, job, run_to_end(job.steps))
    finally:
        context.scene.frame_set(frame)
    if report_path:
        error = write_json(report_path, data)
        if error:
            raise OSError("Cannot write %s: %s." % (report_path, error))
    return data
