"""motion_matching.bake: motion matching along the controller, baked to keys."""

import json
import time

import bpy
from bpy.props import FloatProperty, IntProperty, StringProperty

from ..core.bake.pipeline import run_to_end
from ..core.errors import MotionMatchingError
from ..bridge import bake as bake_bridge, bake_props as bake_settings, scene_data


@bake_settings.with_knobs(options={"SKIP_SAVE"})
class MOTION_MATCHING_OT_bake(bpy.types.Operator):
    """Simulate motion matching along the controller over the frame range and key the result on the armature"""

    # Besides the options below, one option per knob of core.bake.BakeSettings
    # (bake_settings.with_knobs): given, it overrides the scene's bake setting.

    bl_idname = "motion_matching.bake"
    bl_label = "Bake Motion Matching"
    bl_options = {"REGISTER", "UNDO"}

    controller: StringProperty(name="Controller", description="Object to follow (empty: the scene's controller)")
    armature: StringProperty(name="Armature", description="Armature to key (empty: the scene's choice)")
    frame_start: IntProperty(name="Start", description="First frame (0 with End 0: the scene's range)", default=0)
    frame_end: IntProperty(name="End", description="Last frame (0: the scene's end)", default=0)
    tag_query: StringProperty(name="Tag Query", description="Restrict matching to tagged frames (empty: the scene's query)")
    scale: FloatProperty(name="Size", default=0.0, min=0.0, soft_max=100.0,
                         description="Onto another rig: its size against the database's skeleton "
                         "(0: automatic, the ratio of the standing hips heights)")
    report_path: StringProperty(name="Report JSON", description="Also write the report here (optional)",
                                subtype="FILE_PATH")

    @classmethod
    def poll(cls, context):
        settings = context.scene.motion_matching
        if settings.controller is None:
            cls.poll_message_set("Choose a controller in the Bake panel (or add one from a curve)")
            return False
        if not len(settings.entries) and "motion_matching_database" not in context.scene:
            cls.poll_message_set("Build a database first")
            return False
        return True

    def settings(self, context):
        """The scene's bake settings, with the options given to this call instead."""
        return bake_settings.to_core(context.scene.motion_matching.bake_settings, self)

    def _start(self, context):
        """Check the input and return (steps generator, target, setup)."""
        scene = context.scene
        fs = self.frame_start or scene.frame_start
        fe = self.frame_end or scene.frame_end
        query = self.tag_query or scene.motion_matching.tag_query
        ctrl = bake_bridge.controller_object(context, self.controller)
        target = bake_bridge.bake_target(context, self.armature)
        database = bake_bridge.ensure_database(context)
        _db, arrays, note = database
        setup = None
        if bake_bridge.needs_retarget(target, bake_bridge.skeleton_of(arrays)):
            setup = bake_bridge.retarget_setup(context, target, self.scale or None, arrays)
        steps = bake_bridge.run_steps(context, ctrl, target, self.settings(context), tag_query=query, frame_start=fs,
                                      frame_end=fe, path_scale=setup.plan.scale if setup else 1.0,
                                      to_bake=bake_bridge.controller_matrix(setup) if setup else None,
                                      database=database)
        self._note = note
        return steps, target, setup

    def _finish(self, context, output, target, setup):
        """Key the result, write the report; returns the operator's result."""
        report = output.report
        if self._note and not report["note"]:
            report["note"] = self._note
        if setup is not None:
            bake_bridge.write_retargeted(context, target, output, setup)   # its warnings join the report's
        else:
            bake_bridge.write(target, output)
        scene = context.scene
        text = bake_bridge.report_text(report)
        scene_data.write_text("Motion Matching Bake", text + "\n")
        data = bake_bridge.json_report(report)
        scene.motion_matching.last_bake_report = json.dumps(data)
        if self.report_path:
            try:
                with open(bpy.path.abspath(self.report_path), "w") as fh:
                    json.dump(data, fh, indent=2)
            except OSError as ex:
                self.report({"WARNING"}, "Baked, but cannot write %s: %s." % (self.report_path, ex.strerror or ex))
        self.report({"INFO"}, "Baked %d frames: %d searches, %d jumps, %d foot locks, tracking max %.1f cm, "
                    "%.1fx real time.%s" % (report["frames"], report["searches"], report["jumps"],
                                            report["foot_locks"], 100 * report["tracking_error_max_m"],
                                            report["real_time_factor"], (" " + report["note"]) if report["note"] else ""))
        for w in report.get("warnings", []):
            self.report({"WARNING"}, w)
        return {"FINISHED"}

    def execute(self, context):
        wm = context.window_manager
        scene = context.scene
        frame = scene.frame_current
        wm.progress_begin(0, 100)
        try:
            steps, target, setup = self._start(context)
            output = run_to_end(steps, lambda f: wm.progress_update(int(100 * f)))
            return self._finish(context, output, target, setup)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
            scene.frame_set(frame)

    # Interactive use: the bake runs a slice at a time on a timer, shows its
    # progress in the status bar, and Esc stops it with nothing written.

    def invoke(self, context, event):
        bake_settings.fill_unset(self, context.scene.motion_matching.bake_settings)
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
        context.workspace.status_text_set("Baking motion matching... Esc to cancel")
        return {"RUNNING_MODAL"}

    slice_seconds = 0.05   # work per timer event; tests set 0 for one slice per event

    def begin_slices(self, context):
        """The state :meth:`modal` runs from: the bake's step generator, its
        target and retarget setup, the frame to come back to. invoke sets it up
        before adding the timer and the modal handler (tests drive modal() from
        here, without a window)."""
        self._frame = context.scene.frame_current
        self._timer = None
        self._fraction = 0.0
        self._steps, self._target_obj, self._setup = self._start(context)

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
            self.report({"WARNING"}, "Bake cancelled: nothing was written.")
            return {"CANCELLED"}
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
                return self._finish(context, done.value, self._target_obj, self._setup)
            except MotionMatchingError as ex:
                self.report({"ERROR"}, str(ex))
                return {"CANCELLED"}
        except MotionMatchingError as ex:
            self._stop(context)
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        return {"RUNNING_MODAL"}


classes = (MOTION_MATCHING_OT_bake,)
