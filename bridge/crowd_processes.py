"""Bake All on several processors: the open file saved to a temporary copy,
its pairs dealt out to background Blender processes (``blender -b -c
motion_matching crowd-pairs``, :mod:`.child_process`), each baking its pairs as
one process would and writing each pair's keys to a file of its own
(:mod:`.crowd_keys`), and those files loaded here as they come.

:func:`bake_pairs` is the generator Bake All runs instead of
:func:`.crowd.bake_pairs`: it yields the fraction of pairs done and returns the
results, in the crowd list's order. Closed early (Esc), it stops the processes
and keeps the pairs already loaded; the temporary folder goes either way.
"""

import os
import shutil
import subprocess
import tempfile
import time

import bpy

from ..core.errors import MotionMatchingError
from . import bake as bake_bridge, child_process, crowd_keys, scene_data

WORKER = "crowd-pairs"   # the internal command (cli.crowd_worker)
POLL_SECONDS = 0.02


def machine_processors():
    """The processors this process may run on."""
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


def process_count(asked, pairs):
    """How many processes bake ``pairs`` pairs: ``asked``, 0 for the machine's
    processors, never more than the pairs."""
    return max(1, min(asked if asked > 0 else machine_processors(), pairs))


def deal(count, processes):
    """Pair numbers for each process, in turn: 0, N, 2N... for the first."""
    return [list(range(k, count, processes)) for k in range(processes)]


def save_copy(folder):
    """The open file saved as a copy in ``folder`` (the open file keeps its path)."""
    path = os.path.join(folder, "crowd.blend")
    try:
        result = bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, check_existing=False)
    except (RuntimeError, OSError) as ex:
        raise MotionMatchingError("Cannot save a copy of this file for the other processes (%s)." % (
            str(ex).strip().splitlines()[-1] if str(ex).strip() else type(ex).__name__)) from None
    if "FINISHED" not in result or not os.path.isfile(path):
        raise MotionMatchingError("Cannot save a copy of this file for the other processes.")
    return path


class _Processes:
    """The background processes, their logs and the pairs they still owe."""

    def __init__(self, folder, copy, shares):
        self.folder, self.procs, self.logs = folder, [], []
        for k, share in enumerate(shares):
            log = open(os.path.join(folder, "process%d.log" % k), "w+")
            self.logs.append(log)
            argv = [WORKER, "--blend", copy, "--pairs", ",".join(map(str, share)), "--keys", folder]
            self.procs.append((subprocess.Popen(child_process.command(argv), stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, env=dict(os.environ)), share))

    def failed(self):
        """The sentence for a process that ended owing pairs (their files not there), or None."""
        for (proc, share), log in zip(self.procs, self.logs):
            if proc.poll() is None or all(os.path.exists(crowd_keys.file_name(self.folder, i)) for i in share):
                continue
            log.flush()
            log.seek(0)
            lines = [ln.strip() for ln in log.read().splitlines() if ln.strip()]
            said = [ln for ln in lines if ln.startswith(child_process.COMMAND + ":")]
            why = (said or lines or ["status %d" % proc.returncode])[-1]
            return "Another process baking the crowd stopped before its characters were done: %s" % why
        return None

    def stop(self):
        for proc, _share in self.procs:
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


def bake_pairs(context, pairs, processes, results):
    """Start baking ``pairs`` in ``processes`` background processes and return
    the generator that loads their keys (see the module notes). The copy is
    saved and the processes started before this returns: a MotionMatchingError
    then has changed nothing. ``results`` gets (armature name, BakeReport) in
    the list's order as pairs are loaded."""
    steps = _bake_steps(context, pairs, processes, results)
    next(steps)    # up to the first yield: the database checked, the copy saved, the processes started
    return steps


def _bake_steps(context, pairs, processes, results):
    # The database is checked (and rebuilt) once, here, as Bake All does before its first pair.
    _database, note = bake_bridge.ensure_database(context)
    try:
        folder = tempfile.mkdtemp(prefix="mm_crowd_")
    except OSError as ex:
        raise MotionMatchingError("Cannot make a folder for the other processes: %s." % (ex.strerror or ex)) from None
    run, loaded, made = None, {}, []
    try:
        copy = save_copy(folder)
        run = _Processes(folder, copy, deal(len(pairs), processes))
        yield 0.0
        while len(loaded) < len(pairs):
            ready = [i for i in range(len(pairs)) if i not in loaded and os.path.exists(crowd_keys.file_name(folder, i))]
            for i in ready:
                loaded[i] = _load(context, pairs[i], crowd_keys.file_name(folder, i), note if i == 0 else "")
                made.append(i)
                results[:] = [loaded[k][1] for k in sorted(loaded)]
                yield len(loaded) / len(pairs)
            if not ready:
                failed = run.failed()
                if failed:
                    raise MotionMatchingError(failed)
                time.sleep(POLL_SECONDS)
                yield len(loaded) / len(pairs)
        return results
    finally:
        if run is not None:
            run.stop()
        _name_in_list_order(loaded, made)
        _last_report(context, loaded)
        shutil.rmtree(folder, ignore_errors=True)


def _load(context, pair, path, note):
    """Pair's keys from its file onto its armature: (action, (name, report))."""
    _ctrl, arm = pair
    action, report = crowd_keys.load(path, arm)
    if note and not report.note:
        report.note = note
    return action, (arm.name, report)


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


def _last_report(context, loaded):
    """The Bake report text and the scene's last report: the last pair's, as one process leaves them."""
    if not loaded:
        return
    import json

    report = loaded[max(loaded)][1][1]
    scene_data.write_text("Motion Matching Bake", report.to_text() + "\n")
    context.scene.motion_matching.last_bake_report = json.dumps(report.to_json())
