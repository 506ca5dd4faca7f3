"""Long work run at once (``execute``) or in slices on a timer (``invoke``):
the part Bake and Bake All share.

The work is a generator that yields the fraction done and returns its value
(core.bake.pipeline.run_to_end drives one to the end). Run in slices, each
timer event runs it for about ``slice_seconds``, the status bar shows the
progress and Esc stops it; either way the scene's frame is given back.
"""

import time

from ..core.bake.pipeline import run_to_end
from ..core.errors import MotionMatchingError


class SlicedRun:
    """Mixin for an operator. It defines ``start_work(context)`` (the
    generator; a MotionMatchingError refuses with nothing changed),
    ``finish_work(context, value)`` and ``stopped_work(context)`` (the
    operator's result when the work ends or Esc stops it) and ``status_text``."""

    slice_seconds = 0.05   # work per timer event; tests set 0 for one slice per event
    status_text = ""

    def run_at_once(self, context):
        wm = context.window_manager
        frame = context.scene.frame_current
        wm.progress_begin(0, 100)
        try:
            self.begin_slices(context)
            value = run_to_end(self._steps, lambda f: wm.progress_update(int(100 * f)))
            return self.finish_work(context, value)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
            context.scene.frame_set(frame)

    def run_in_slices(self, context):
        if context.window is None:
            return self.execute(context)
        try:
            self.begin_slices(context)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        context.workspace.status_text_set(self.status_text)
        return {"RUNNING_MODAL"}

    def begin_slices(self, context):
        """The state :meth:`modal` runs from (tests drive modal() from here, without a window)."""
        self._frame = context.scene.frame_current
        self._timer = None
        self._fraction = 0.0
        self._steps = None
        self._steps = self.start_work(context)

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        if context.workspace is not None:   # none without a window
            context.workspace.status_text_set(None)
        self._steps.close()
        context.scene.frame_set(self._frame)

    def modal(self, context, event):
        if event.type == "ESC":
            self._stop(context)
            return self.stopped_work(context)
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            # At least one slice per event, more while the event's time budget lasts.
            deadline = time.perf_counter() + self.slice_seconds
            while True:
                self._fraction = next(self._steps)
                context.window_manager.progress_update(int(100 * self._fraction))
                if time.perf_counter() >= deadline:
                    break
        except StopIteration as done:
            self._stop(context)
            try:
                return self.finish_work(context, done.value)
            except MotionMatchingError as ex:
                self.report({"ERROR"}, str(ex))
                return {"CANCELLED"}
        except MotionMatchingError as ex:
            self._stop(context)
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        return {"RUNNING_MODAL"}
