"""motion_matching.toggle_preview: pose the armature live as the timeline moves."""

import bpy

from ..core.errors import MotionMatchingError
from ..bridge.preview import preview


class MOTION_MATCHING_OT_toggle_preview(bpy.types.Operator):
    """Preview motion matching live: the armature takes the pose the bake would key on each frame, without keys"""

    bl_idname = "motion_matching.toggle_preview"
    bl_label = "Toggle Preview"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.motion_matching
        if preview.active(context.scene):
            return True
        if settings.controller is None:
            cls.poll_message_set("Choose a controller in the Controller and Bake panel")
            return False
        return True

    def execute(self, context):
        scene = context.scene
        if preview.active(scene):
            preview.stop(scene)
            self.report({"INFO"}, "Preview off; the armature plays its action again.")
            return {"FINISHED"}
        wm = context.window_manager
        wm.progress_begin(0, 1)
        try:
            report = preview.start(context)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        self.report({"INFO"}, "Preview on: %d frames simulated (%d jumps). Play or scrub the timeline."
                    % (report.frames, report.jumps))
        return {"FINISHED"}


classes = (MOTION_MATCHING_OT_toggle_preview,)
