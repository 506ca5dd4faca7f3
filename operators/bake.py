"""motion_matching.bake: motion matching along the controller, baked to keys."""

import bpy
from bpy.props import FloatProperty, IntProperty, StringProperty

from ..bridge.bake import bake_job
from ..bridge.blender import bake_settings
from .sliced_run import SlicedRun


@bake_settings.with_knobs(options={"SKIP_SAVE"})
class MOTION_MATCHING_OT_bake(SlicedRun, bpy.types.Operator):
    """Simulate motion matching along the controller over the frame range and key the result on the armature"""

    # Besides the options below, one option per knob of core.bake.settings
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
    ground: StringProperty(name="Ground", description="Mesh object walked on (empty: the scene's Ground)")
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
        """Check the input and return the bake job (bridge.bake.bake_job)."""
        return bake_job.start(context, self.settings(context), controller=self.controller, armature=self.armature,
                              frame_start=self.frame_start, frame_end=self.frame_end, tag_query=self.tag_query,
                              scale=self.scale, ground=self.ground)

    def _finish(self, context, output, job):
        """Key the result, write the report; returns the operator's result."""
        report, data = bake_job.finish(context, job, output)
        if self.report_path:
            error = bake_job.write_json(self.report_path, data)
            if error:
                self.report({"WARNING"}, "Baked, but cannot write %s: %s." % (self.report_path, error))
        self.report({"INFO"}, "Baked %d frames: %d searches, %d jumps, %d foot locks, tracking max %.1f cm, "
                    "%.1fx real time.%s" % (report.frames, report.searches, report.jumps,
                                            report.foot_locks, 100 * report.tracking_error_max_m,
                                            report.real_time_factor, (" " + report.note) if report.note else ""))
        for w in report.warnings:
            self.report({"WARNING"}, w)
        return {"FINISHED"}

    # The work for SlicedRun: Esc stops it with nothing written.

    status_text = "Baking motion matching... Esc to cancel"

    def start_work(self, context):
        self._job = self._start(context)
        return self._job.steps

    def finish_work(self, context, output):
        return self._finish(context, output, self._job)

    def stopped_work(self, context):
        self.report({"WARNING"}, "Bake cancelled: nothing was written.")
        return {"CANCELLED"}

    def execute(self, context):
        return self.run_at_once(context)

    def invoke(self, context, event):
        bake_settings.fill_unset(self, context.scene.motion_matching.bake_settings)
        return self.run_in_slices(context)


classes = (MOTION_MATCHING_OT_bake,)
