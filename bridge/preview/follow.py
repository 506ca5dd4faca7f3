"""The live preview follows edits: when an input of its simulation changes, it
simulates again and shows the new result, with no restart.

What is followed: the bake settings, the tag query, the stored database, the
armature chosen (and where it stands), the frame range and rate, and the
controller's path as the bake samples it (its keys, constraints, the curve it
follows, parents: bridge.preview.inputs).

When: on every frame change (frame_change_pre) and depsgraph update, the
preview compares the cheap digest of its inputs (bridge.preview.inputs.head:
settings, keys, constraints, followed curves...) with the simulation shown's;
a depsgraph update of the controller, an object it follows or its action, and
undo or redo, ask for a check too. A check samples the controller's path as
the bake does and compares it: only a changed path or digest simulates again. A check or a new simulation
then runs in slices from a timer (:func:`tick`), each giving Blender back after
about :data:`SLICE_S` seconds, so that scrubbing and playback stay responsive;
until it is done :func:`status` says "updating..." with the frame reached, which
the viewport (a text overlay) and the Preview panel show. When the new
simulation is done its pose replaces the old one at once. A refusal (a setting
out of range, the controller gone) keeps the last pose and shows the sentence.

Background Blender (tests, the command line) has no event loop: the timer is
registered all the same and :func:`finish_pending` calls it until it is done.
"""

import threading
import time

import bpy
from bpy.app.handlers import persistent

from ...core.job import run as core_run
from ...core.errors import MotionMatchingError
from ..bake import bake as bake_bridge
from ..blender import bake_settings
from ..database import store as database_store
from ..blender.scene_data import scene_fps
from . import character, preview, inputs as preview_inputs

SLICE_S = 0.05          # seconds a timer call works before giving Blender back
WAIT_S = 0.02           # seconds between looks at a simulation running on its thread
WAIT = "wait"           # what a refresh yields while its simulation runs
SAMPLE_CHUNK = 24       # controller steps sampled per slice when the scene is stepped frame by frame

_jobs = {}              # preview key -> the refresh generator (None: a check is wanted)
_progress = {}          # preview key -> frame reached by the refresh ("" while checking)
_refused = {}           # preview key -> why the preview cannot update (a sentence)
_text_handle = []


def status(scene):
    """What the viewport and the panel say about the preview's state: None when
    the pose shown is up to date, else a short sentence."""
    mm = getattr(scene, "motion_matching", None)
    if mm is None or not mm.preview_active:
        return None
    key = mm.preview_key
    if key in _jobs:
        reached = _progress.get(key)
        return "Preview updating..." + ("" if reached is None else " frame %d" % reached)
    if key in _refused:
        return "Preview not updated: " + _refused[key][0]
    return None


def pending():
    """Whether a check or a new simulation is waiting or running."""
    return bool(_jobs)


def wants_check(scene):
    """Ask for a check of ``scene``'s preview (run by the timer)."""
    mm = scene.motion_matching
    if not mm.preview_active or preview.inputs_of(scene) is None:
        return
    running = _jobs.get(mm.preview_key)
    if running is not None:
        running.close()         # its inputs are out of date: start again
    _jobs[mm.preview_key] = None
    _progress.pop(mm.preview_key, None)
    _schedule()
    _redraw()


def changed(scene):
    """Whether the cheap digest of the inputs (bridge.preview.inputs.head)
    differs from the simulation shown's. For a controller read in bulk it
    covers the whole path (its keys and own values); for others an update of
    what moves them asks for a check as well (:func:`on_depsgraph_update`)."""
    inputs = preview.inputs_of(scene)
    return inputs is not None and preview_inputs.head(scene) != inputs[0]


class _Simulation:
    """The bake's simulation (core.job.run.bake, which reads no Blender data)
    run to the end on a thread of its own; ``cancel`` stops it at its next
    progress report."""

    def __init__(self, steps):
        self.steps = steps
        self.fraction = 0.0
        self.output = None
        self.error = None
        self.cancel = False
        self.thread = threading.Thread(target=self._run, name="motion matching preview", daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.cancel:
                self.fraction = next(self.steps)
        except StopIteration as done:
            self.output = done.value
        except Exception as ex:  # noqa: BLE001  (handed to the main thread, which reports it)
            self.error = ex


def _refresh(scene):
    """Check the inputs and simulate again when they changed. A generator
    yielding after each slice of work: a number (the share done) when there is
    more to do at once, :data:`WAIT` while the simulation runs on its thread."""
    mm = scene.motion_matching
    key = mm.preview_key
    head = preview_inputs.head(scene)
    sampled = yield from preview_inputs.sample_steps(scene, SAMPLE_CHUNK)
    inputs = (head, preview_inputs.path_digest(sampled))
    if inputs == preview.inputs_of(scene):
        preview.apply(scene)        # an undo may have brought another pose back
        return
    context = preview_inputs.context_of(scene)
    ctrl = bake_bridge.controller_object(context)
    armature = bake_bridge.bake_target(context)
    database = database_store.load(scene)
    posing = character.posing_for(context, armature, database)      # None: the database skeleton
    where = bake_bridge.controller_path(context, ctrl, armature, database, sampled=sampled,
                                        **character.path_options(posing))
    settings = bake_settings.to_core(mm.bake_settings)
    cache = bake_bridge.database_cache(database)
    bake_bridge.search_index(database)      # made here: the cache is the main thread's
    moves = preview_inputs.moves(scene)
    # Searched again only from the first step the edit reaches; with moves along
    # the timeline, from the start (which rows each step may play can change).
    shown = None if moves else preview.simulation_result(scene)
    steps = core_run.bake(database, where.path, settings, mm.tag_query, cache=cache, previous=shown,
                          measure=False, moves=moves, ground=where.ground)     # poses only: no report shown
    # A character's retarget and replanting run on the simulation's thread too.
    simulation = _Simulation(character.posed_steps(steps, posing, scene_fps(scene)))
    frames = where.frames
    try:
        while simulation.thread.is_alive():
            _progress[key] = int(frames[0] + simulation.fraction * (frames[-1] - frames[0]))
            yield WAIT
    finally:
        simulation.cancel = True
    if simulation.error is not None:
        raise simulation.error
    output, posed = simulation.output
    output = bake_bridge.with_controller(output, "", where)
    if posing is None:
        bake_bridge.check_skeleton(armature, output.skeleton)
    preview.replace(scene, output, inputs, armature, posed)


def _previewing_scenes():
    return {s.motion_matching.preview_key: s for s in bpy.data.scenes
            if getattr(s, "motion_matching", None) is not None and s.motion_matching.preview_active}


def tick():
    """The timer: run pending checks for about :data:`SLICE_S` seconds and look
    at the simulations running; returns when to be called again (None:
    nothing is left)."""
    deadline = time.perf_counter() + SLICE_S
    scenes = _previewing_scenes()
    for key in list(_jobs):
        scene = scenes.get(key)
        if scene is None:
            _forget(key)
            continue
        if _jobs[key] is None:
            _jobs[key] = _refresh(scene)
        try:
            while time.perf_counter() < deadline and next(_jobs[key]) is not WAIT:
                pass
        except StopIteration:
            _forget(key)
        except Exception as ex:  # noqa: BLE001  (a timer that raises is never called again)
            _forget(key)
            _refused[key] = (str(ex) if isinstance(ex, MotionMatchingError) else
                             "the armature or controller is gone." if isinstance(ex, (ReferenceError, KeyError)) else
                             "%s: %s" % (type(ex).__name__, ex), _head_or_none(scene))
    _redraw()
    return WAIT_S if _jobs else None


def _head_or_none(scene):
    try:
        return preview_inputs.head(scene)
    except (MotionMatchingError, ReferenceError):
        return None


def _forget(key):
    _jobs.pop(key, None)
    _progress.pop(key, None)
    _refused.pop(key, None)


def finish_pending():
    """Call the timer until nothing is pending, waiting between calls as Blender
    does (background Blender runs no timers). Returns the longest single call
    in seconds."""
    longest = 0.0
    while True:
        t0 = time.perf_counter()
        again = tick()
        longest = max(longest, time.perf_counter() - t0)
        if again is None:
            return longest
        time.sleep(again)


def _schedule():
    if not bpy.app.timers.is_registered(tick):
        bpy.app.timers.register(tick, first_interval=0.0)


def _relevant_ids(scene):
    """Names of the IDs whose update may move the controller's path."""
    names = set()
    obj, seen = scene.motion_matching.controller, []
    todo = [obj] if obj is not None else []
    while todo:
        ob = todo.pop()
        if ob is None or ob in seen:
            continue
        seen.append(ob)
        names.add(("OBJECT", ob.name))
        if ob.data is not None and ob is not obj:
            names.add(("DATA", ob.data.name))
        action = ob.animation_data.action if ob.animation_data else None
        if action is not None:
            names.add(("ACTION", action.name))
        todo.append(ob.parent)
        todo += [getattr(c, "target", None) for c in ob.constraints]
    return names


def _kind(id_data):
    if isinstance(id_data, bpy.types.Object):
        return "OBJECT"
    if isinstance(id_data, bpy.types.Action):
        return "ACTION"
    return "DATA"


def _check(scene):
    """Ask for a check when the cheap look sees a change; never raises."""
    key = scene.motion_matching.preview_key
    try:
        if preview.inputs_of(scene) is None or key in _jobs:
            return
        refused = _refused.get(key)
        if refused is not None and refused[1] is not None and refused[1] == _head_or_none(scene):
            return              # the inputs refused are still there: keep saying why
        if changed(scene):
            wants_check(scene)
        elif _refused.pop(key, None) is not None:
            _redraw()           # back to the inputs shown: nothing to say any more
    except (MotionMatchingError, ReferenceError):
        wants_check(scene)


@persistent
def on_depsgraph_update(scene, depsgraph):
    if preview_inputs.busy or not getattr(scene, "motion_matching", None) or not scene.motion_matching.preview_active:
        return
    # A controller read in bulk is compared as sampled (cheap); for one that is
    # not (Follow Path), an update of what moves it asks for a check.
    if not preview_inputs.cheap_to_sample(scene):
        relevant = _relevant_ids(scene)
        for u in depsgraph.updates:
            kind = _kind(u.id)
            moved = kind != "OBJECT" or u.is_updated_transform or u.is_updated_geometry
            if moved and (kind, u.id.name) in relevant:
                wants_check(scene)
                return
    _check(scene)


@persistent
def on_frame_change_pre(scene, depsgraph=None):
    if preview_inputs.busy or not getattr(scene, "motion_matching", None) or not scene.motion_matching.preview_active:
        return
    _check(scene)


@persistent
def on_undo_redo(*_args):
    for scene in _previewing_scenes().values():
        wants_check(scene)


@persistent
def on_load(*_args):
    for job in _jobs.values():
        if job is not None:
            job.close()         # stops its simulation's thread
    _jobs.clear()
    _progress.clear()
    _refused.clear()


# ---------------------------------------------------------------------------
# The viewport's text


def _draw_text():
    try:
        text = status(bpy.context.scene)
        if text is None:
            return
        import blf

        blf.size(0, 14)
        blf.color(0, 1.0, 0.8, 0.2, 1.0)
        blf.position(0, 20, 60, 0)
        blf.draw(0, text)
    except Exception:  # noqa: BLE001  (an overlay must never break drawing)
        pass


def _redraw():
    wm = getattr(bpy.context, "window_manager", None)
    for window in (wm.windows if wm is not None else ()):
        for area in window.screen.areas:
            if area.type in {"VIEW_3D", "PROPERTIES"}:
                area.tag_redraw()


handlers = (("depsgraph_update_post", on_depsgraph_update), ("frame_change_pre", on_frame_change_pre),
            ("undo_post", on_undo_redo), ("redo_post", on_undo_redo), ("load_pre", on_load))


def register():
    for name, fn in handlers:
        if fn not in getattr(bpy.app.handlers, name):
            getattr(bpy.app.handlers, name).append(fn)
    if not bpy.app.background and not _text_handle:
        _text_handle.append(bpy.types.SpaceView3D.draw_handler_add(_draw_text, (), "WINDOW", "POST_PIXEL"))


def unregister():
    for name, fn in handlers:
        if fn in getattr(bpy.app.handlers, name):
            getattr(bpy.app.handlers, name).remove(fn)
    if bpy.app.timers.is_registered(tick):
        bpy.app.timers.unregister(tick)
    while _text_handle:
        bpy.types.SpaceView3D.draw_handler_remove(_text_handle.pop(), "WINDOW")
    on_load()
