"""motion_matching.bake: motion matching along the controller, baked to keys."""

import json
import time

import bpy
from bpy.props import BoolProperty, FloatProperty, IntProperty, StringProperty

from ..core.bake import BakeSettings, run_to_end
from ..core.errors import MotionMatchingError
from ..motion_matching_addon import bake_bridge

_D = BakeSettings()


class MOTION_MATCHING_OT_bake(bpy.types.Operator):
    """Simulate motion matching along the controller over the frame range and key the result on the armature"""

    bl_idname = "motion_matching.bake"
    bl_label = "Bake Motion Matching"
    bl_options = {"REGISTER", "UNDO"}

    controller: StringProperty(name="Controller", description="Object to follow (empty: the scene's controller)")
    armature: StringProperty(name="Armature", description="Armature to key (empty: the scene's choice)")
    frame_start: IntProperty(name="Start", description="First frame (0 with End 0: the scene's range)", default=0)
    frame_end: IntProperty(name="End", description="Last frame (0: the scene's end)", default=0)
    search_interval: FloatProperty(
        name="Search Interval", default=_D.search_interval, min=1.0 / 120.0, soft_max=1.0, unit="TIME_ABSOLUTE",
        description="Seconds between searches: shorter reacts faster to the path, longer plays longer pieces of mocap")
    keep_window: IntProperty(
        name="Keep Window", default=_D.keep_window, min=0, soft_max=60,
        description="Frames: a best match this close to the frame playing is not a jump (fewer, longer pieces)")
    inertialization_halflife: FloatProperty(
        name="Blend Half-Life", default=_D.inertialization_halflife, min=0.01, soft_max=0.5, unit="TIME_ABSOLUTE",
        description="How fast a jump's pose difference fades: shorter is snappier, longer hides jumps better")
    sim_halflife: FloatProperty(
        name="Path Half-Life", default=_D.sim_halflife, min=0.01, soft_max=1.0, unit="TIME_ABSOLUTE",
        description="Smoothing of the controller's path: shorter follows it tightly, longer asks for gentler motion")
    adjustment_halflife: FloatProperty(
        name="Adjustment Half-Life", default=_D.adjustment_halflife, min=0.01, soft_max=1.0, unit="TIME_ABSOLUTE",
        description="How fast the root is pulled toward the path: faster tracks better, slower keeps the mocap's own steps")
    adjustment_ratio: FloatProperty(
        name="Adjustment Limit", default=_D.adjustment_ratio, min=0.0, soft_max=2.0, subtype="FACTOR",
        description="The pull toward the path is at most this fraction of the root's own motion: "
                    "higher tracks better, lower slides the feet less")
    clamp_distance: FloatProperty(
        name="Clamp", default=_D.clamp_distance, min=0.001, soft_max=1.0, unit="LENGTH",
        description="The root never strays farther than this from the path (tight clamps can make feet slide)")
    clamp_angle: FloatProperty(
        name="Clamp Angle", default=_D.clamp_angle, min=0.0, max=3.14159, subtype="ANGLE",
        description="The character never faces farther than this from the wanted facing")
    force_search_angle: FloatProperty(
        name="Turn Search", default=_D.force_search_angle, min=0.0, max=3.14159, subtype="ANGLE",
        description="Search at once when the wanted direction turns this much: reacts to sharp turns sooner")
    force_search_speed: FloatProperty(
        name="Speed Search", default=_D.force_search_speed, min=0.0, soft_max=5.0, unit="VELOCITY",
        description="Search at once when the wanted speed changes this much (m/s): reacts to starts and stops sooner")
    use_facing: BoolProperty(
        name="Strafe (Use Controller Rotation)", default=False,
        description="Face where the controller faces instead of where it goes")
    use_foot_lock: BoolProperty(
        name="Foot Lock", default=True, description="Pin planted toes with two-joint leg IK")
    lock_speed: FloatProperty(
        name="Lock Speed", default=_D.lock_speed, min=0.0, soft_max=2.0, unit="VELOCITY",
        description="A planted toe slower than this locks: higher locks more often (less sliding), "
                    "but can hold a foot that should move")
    lock_on_data: BoolProperty(
        name="Lock by Data", default=_D.lock_on_data,
        description="Lock a toe when the take says it is planted and still, even if the path's corrections drag "
                    "the baked toe: about 2.5x more locks and less sliding, but legs may snap when a lock "
                    "holds through a jump; off: only when the baked toe itself is still")
    lock_blend_halflife: FloatProperty(
        name="Release Half-Life", default=_D.lock_blend_halflife, min=0.01, soft_max=0.5, unit="TIME_ABSOLUTE",
        description="How fast a released foot blends back to the animation")
    unlock_distance: FloatProperty(
        name="Unlock Distance", default=_D.unlock_distance, min=0.01, soft_max=1.0, unit="LENGTH",
        description="Release a pinned toe when the animation pulls it this far away")
    tag_query: StringProperty(name="Tag Query", description="Restrict matching to tagged frames (empty: the scene's query)")
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

    def settings(self):
        return BakeSettings(
            search_interval=self.search_interval, keep_window=self.keep_window,
            inertialization_halflife=self.inertialization_halflife, sim_halflife=self.sim_halflife,
            adjustment_halflife=self.adjustment_halflife, adjustment_ratio=self.adjustment_ratio,
            clamp_distance=self.clamp_distance, clamp_angle=self.clamp_angle,
            force_search_angle=self.force_search_angle, force_search_speed=self.force_search_speed,
            use_facing=self.use_facing, foot_lock=self.use_foot_lock, lock_speed=self.lock_speed,
            lock_on_data=self.lock_on_data,
            lock_blend_halflife=self.lock_blend_halflife, unlock_distance=self.unlock_distance)

    def _start(self, context):
        """Check the input and return (steps generator, target, setup)."""
        scene = context.scene
        fs = self.frame_start or scene.frame_start
        fe = self.frame_end or scene.frame_end
        query = self.tag_query or scene.motion_matching.tag_query
        ctrl = bake_bridge.controller_object(context, self.controller)
        target = bake_bridge.bake_target(context, self.armature)
        _db, arrays, note = bake_bridge.ensure_database(context)
        setup = None
        if bake_bridge.needs_retarget(target, bake_bridge.skeleton_of(arrays)):
            setup = bake_bridge.retarget_setup(context, target)
        steps = bake_bridge.run_steps(context, ctrl, target, self.settings(), tag_query=query, frame_start=fs,
                                      frame_end=fe, path_scale=setup.plan.scale if setup else 1.0)
        self._note = note
        return steps, target, setup

    def _finish(self, context, output, target, setup):
        """Key the result, write the report; returns the operator's result."""
        result, frames, _t, locs, rots, skeleton, report = output
        if self._note and not report["note"]:
            report["note"] = self._note
        if setup is not None:
            _action, warnings = bake_bridge.write_retargeted(context, target, skeleton, frames, locs, rots,
                                                             report, self.settings(), setup)
            for w in warnings:
                self.report({"WARNING"}, "Retargeted onto %s: %s." % (target.name, w))
        else:
            bake_bridge.write(target, skeleton, frames, locs, rots, report)
        scene = context.scene
        text = bake_bridge.report_text(report)
        block = bpy.data.texts.get("Motion Matching Bake") or bpy.data.texts.new("Motion Matching Bake")
        block.clear()
        block.write(text + "\n")
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
        if context.window is None:
            return self.execute(context)
        self._frame = context.scene.frame_current
        try:
            self._steps, self._target_obj, self._setup = self._start(context)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.01, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        context.workspace.status_text_set("Baking motion matching... Esc to cancel")
        return {"RUNNING_MODAL"}

    def _stop(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
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
            deadline = time.perf_counter() + 0.05
            while time.perf_counter() < deadline:
                context.window_manager.progress_update(int(100 * next(self._steps)))
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
