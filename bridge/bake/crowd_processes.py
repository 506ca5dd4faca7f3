"""Bake All on several processors: background Blender processes started
(``blender -b -c motion_matching crowd-pairs``, :mod:`.child_process`) and,
while they start, the open file saved to a temporary copy they then open; the
pairs baked by them and by this process, each pair by whichever comes to it
first (a claim file, :class:`.crowd_keys.Claimed`), every one as one process
would bake it. The others compute each pair's bake (:func:`.bake_job.compute`:
the pose arrays and the report, nothing keyed) and write it to a file of its
own (:mod:`.crowd_keys`); this process keys it as it keys its own
(:func:`.bake_job.write`), as the files come, between its own bakes. After its
first bake it leaves what it derived from the database for them to start from.

:func:`bake_pairs` is the generator Bake All runs instead of
:func:`.crowd.bake_pairs`: it yields the fraction of pairs done and returns the
results, in the crowd list's order. Closed early (Esc), it stops the processes
and keeps the pairs already keyed; the temporary folder goes either way.
"""

import os
import shutil
import subprocess
import tempfile
import time

import bpy

from ...core.errors import MotionMatchingError
from .. import child_process
from ..blender import scene_data
from . import bake as bake_bridge, crowd, crowd_keys

WORKER = "crowd-pairs"   # the internal command (cli.crowd_worker)
POLL_SECONDS = 0.02
END_SECONDS = 3.0        # with every pair done, a process is given this long to end of itself (it has nothing left)


def machine_processors():
    """The processors this process may run on."""
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


def process_count(asked, pairs):
    """How many processes bake ``pairs`` pairs: ``asked``, 0 for the machine's
    processors, never more than the pairs."""
    return max(1, min(asked if asked > 0 else machine_processors(), pairs))


def copy_path(folder):
    """Where the copy of the open file goes in ``folder``."""
    return os.path.join(folder, "crowd.blend")


def save_copy(folder):
    """The open file saved as a copy in ``folder`` (the open file keeps its
    path), under its name only once it is whole: the processes wait for it."""
    path = copy_path(folder)
    aside = os.path.join(folder, "saving.blend")
    try:
        result = bpy.ops.wm.save_as_mainfile(filepath=aside, copy=True, check_existing=False)
        if "FINISHED" in result and os.path.isfile(aside):
            os.replace(aside, path)
    except (RuntimeError, OSError) as ex:
        raise MotionMatchingError("Cannot save a copy of this file for the other processes (%s)." % (
            str(ex).strip().splitlines()[-1] if str(ex).strip() else type(ex).__name__)) from None
    if not os.path.isfile(path):
        raise MotionMatchingError("Cannot save a copy of this file for the other processes.")
    return path


class _Processes:
    """The background processes, their logs and the pairs they still owe. They
    start before the copy (``copy``) is saved, and wait for it."""

    def __init__(self, folder, copy, shares):
        self.folder, self.procs, self.logs = folder, [], []
        for share in shares:
            log = tempfile.TemporaryFile("w+")     # gone when closed
            self.logs.append(log)
            argv = [WORKER, "--blend", copy, "--pairs", ",".join(map(str, share)), "--keys", folder]
            self.procs.append((subprocess.Popen(child_process.command(argv), stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, env=dict(os.environ)), share))

    def failed(self, pending):
        """The sentence for a process that failed, or for pairs (numbers ``pending``)
        that no process will bake; else None."""
        for (proc, _share), log in zip(self.procs, self.logs):
            if proc.poll() in (None, 0):
                continue
            log.flush()
            log.seek(0)
            lines = [ln.strip() for ln in log.read().splitlines() if ln.strip()]
            said = [ln for ln in lines if ln.startswith(child_process.COMMAND + ":")]
            why = (said or lines or ["status %d" % proc.returncode])[-1]
            return "Another process baking the crowd stopped before its characters were done: %s" % why
        if all(proc.poll() is not None for proc, _share in self.procs) and not all(
                os.path.exists(crowd_keys.file_name(self.folder, i)) for i in pending):
            return "The other processes baking the crowd ended before every character was done."
        return None

    def stop(self, done):
        """End the processes: ``done``, they are ending of themselves (given
        :data:`END_SECONDS`); else (Esc, a failure) they are told to stop now."""
        deadline = time.perf_counter() + (END_SECONDS if done else 0.0)
        for proc, _share in self.procs:
            while done and proc.poll() is None and time.perf_counter() < deadline:
                time.sleep(POLL_SECONDS)
            if proc.poll() is None:
                proc.terminate()
        for proc, _share in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()


def bake_pairs(context, pairs, settings, processes, results):
    """Start baking ``pairs`` with core ``settings`` in ``processes`` processes,
    this one among them (:data:`BAKE_HERE`), and return the generator that bakes
    here and loads the others' keys (see the module notes). The copy is saved and
    the processes started before this returns: a MotionMatchingError then has
    changed nothing. ``results`` gets (armature name, BakeReport) in the list's
    order as pairs are done."""
    steps = _bake_steps(context, pairs, settings, processes, results)
    next(steps)    # up to the first yield: the database checked, the copy saved, the processes started
    return steps


BAKE_HERE = True   # this process bakes pairs too (tests set False: only the background processes bake)


def _bake_steps(context, pairs, settings, processes, results):
    # The database is checked (and rebuilt) once, here, as Bake All does before its first pair.
    database, note = bake_bridge.ensure_database(context)
    try:
        folder = tempfile.mkdtemp(prefix="mm_crowd_")
    except OSError as ex:
        raise MotionMatchingError("Cannot make a folder for the other processes: %s." % (ex.strerror or ex)) from None
    run, own, loaded, made = None, None, {}, []
    try:
        order = list(range(len(pairs)))
        # Started first: they load Python, bpy and this extension while the copy is saved.
        run = _Processes(folder, copy_path(folder), [order] * (processes - 1 if BAKE_HERE else processes))
        save_copy(folder)
        here = crowd_keys.Claimed(folder, pairs, order)
        own_results = []
        own = crowd.bake_pairs(context, here, settings, own_results, (database, "")) if BAKE_HERE else None
        yield 0.0
        next_look, shared = 0.0, not BAKE_HERE
        while len(loaded) < len(pairs):
            if own is not None:
                try:
                    next(own)
                except StopIteration:
                    own = None
                if own_results and not shared:     # the database's tables made by the first bake here
                    shared = _share_derived(context, folder, database)
                for i, entry in zip(here.taken, own_results):
                    if i not in loaded:
                        loaded[i] = (pairs[i][1].animation_data.action, entry)
                        made.append(i)
            ready = []
            if own is None or time.perf_counter() >= next_look:   # between own steps, now and then
                next_look = time.perf_counter() + POLL_SECONDS
                ready = [i for i in order if i not in loaded and os.path.exists(crowd_keys.file_name(folder, i))]
            for i in ready:
                loaded[i] = _load(context, pairs[i], crowd_keys.file_name(folder, i), settings, database)
                made.append(i)
            if len(results) != len(loaded):
                results[:] = [loaded[k][1] for k in sorted(loaded)]
            if own is None and not ready:
                failed = run.failed([i for i in order if i not in loaded])
                if failed:
                    raise MotionMatchingError(failed)
                time.sleep(POLL_SECONDS)
            yield len(loaded) / len(pairs)
        return results
    finally:
        if own is not None:
            own.close()     # the pair under way here writes nothing
        if run is not None:
            run.stop(done=len(loaded) == len(pairs))
        _name_in_list_order(loaded, made)
        _finish_reports(context, loaded, note)
        shutil.rmtree(folder, ignore_errors=True)


def _share_derived(context, folder, database):
    """What this process derived from the database, for the processes to start
    from (those not started on a pair yet; what cannot be carried, they derive
    themselves); True."""
    from ..database import store as database_store

    values = database_store.derived_values(database)
    crowd_keys.save_derived(folder, database_store.stored_id(context.scene), values)
    return True


def _load(context, pair, path, settings, database):
    """Pair's bake from its file keyed on its armature as this process keys its
    own (bake_job.write): (action, (name, report))."""
    from . import bake_job

    ctrl, arm = pair
    job = bake_job.start(context, settings, controller=ctrl.name, armature=arm.name, database=(database, ""))
    job.steps.close()      # computed by another process: only its armature and retarget set-up are used here
    report, _data = bake_job.write(context, job, crowd_keys.load(path, job))
    return arm.animation_data.action, (arm.name, report)


def _name_in_list_order(loaded, made):
    """Actions are named as they are made (MM_Bake, MM_Bake.001...); one process
    makes them in the list's order, so the names go to the pairs in that order
    (``made``: the pair numbers in the order their actions were made here)."""
    names = [loaded[i][0].name for i in made]
    if made == sorted(made):
        return
    for k, i in enumerate(made):
        loaded[i][0].name = "MM crowd renaming %d" % k
    for name, i in zip(names, sorted(made)):
        loaded[i][0].name = name


def _finish_reports(context, loaded, note):
    """The database's note on the first pair's report, and the Bake report text
    and the scene's last report the last pair's, as one process leaves them."""
    if not loaded:
        return
    import json

    if 0 in loaded and note and not loaded[0][1][1].note:
        loaded[0][1][1].note = note
    report = loaded[max(loaded)][1][1]
    scene_data.write_text("Motion Matching Bake", report.to_text() + "\n")
    context.scene.motion_matching.last_bake_report = json.dumps(report.to_json())
