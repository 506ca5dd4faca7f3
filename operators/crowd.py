"""Crowd operators: spread controllers from one curve in lanes with characters
to walk them, edit the list of (controller, character) pairs, and Bake All.

- ``motion_matching.add_crowd``: from the active curve, N controllers in lanes,
  the selected armatures (then linked copies of them) as the characters.
- ``motion_matching.crowd_add_pair`` / ``crowd_remove_pair``: the list by hand.
- ``motion_matching.bake_all``: every pair baked with the scene's bake settings,
  in turn here or shared among background processes (the crowd's Processes);
  progress in the status bar, Esc stops after the pairs already done.
"""

import bpy
from bpy.props import FloatProperty, IntProperty

from ..core.errors import MotionMatchingError
from ..core.paths.crowd_lanes import Lanes
from ..bridge.blender import bake_settings as bake_props, scene_data
from ..bridge.bake import crowd, crowd_processes
from .sliced_run import SlicedRun

_DEFAULT = Lanes()


class MOTION_MATCHING_OT_add_crowd(bpy.types.Operator):
    """Spread controllers from the active curve in lanes, each with a character (the selected armatures, then copies)"""

    bl_idname = "motion_matching.add_crowd"
    bl_label = "Add Crowd"
    bl_options = {"REGISTER", "UNDO"}

    count: IntProperty(name="Characters", default=_DEFAULT.count, min=1, soft_max=200,
                       description="How many characters walk the curve")
    lanes: IntProperty(name="Lanes", default=_DEFAULT.lanes, min=1, soft_max=20,
                       description="Lanes side by side, centred on the curve")
    width: FloatProperty(name="Lane Width", default=_DEFAULT.width, min=0.01, soft_max=5.0, unit="LENGTH",
                         description="Distance between neighbouring lanes")
    spacing: FloatProperty(name="Spacing", default=_DEFAULT.spacing, min=0.01, soft_max=10.0, unit="LENGTH",
                           description="Distance between characters walking one lane")
    speed_min: FloatProperty(name="Slowest", default=_DEFAULT.speed_min, min=0.05, soft_max=5.0, unit="VELOCITY",
                             description="Walking speed of the slowest lane")
    speed_max: FloatProperty(name="Fastest", default=_DEFAULT.speed_max, min=0.05, soft_max=5.0, unit="VELOCITY",
                             description="Walking speed of the fastest lane")
    stagger: FloatProperty(name="Stagger", default=_DEFAULT.stagger, min=0.0, soft_max=10.0, unit="TIME_ABSOLUTE",
                           description="Longest wait between two starts in one lane, in seconds")

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if context.mode != "OBJECT":
            cls.poll_message_set("Switch to Object Mode")
            return False
        if obj is None or obj.type != "CURVE":
            cls.poll_message_set("Make a curve active (select the characters too)")
            return False
        return True

    def execute(self, context):
        curve = context.active_object
        try:
            characters = crowd.characters_to_use(context)
            lanes = Lanes(count=self.count, lanes=self.lanes, width=self.width, spacing=self.spacing,
                          speed_min=self.speed_min, speed_max=self.speed_max, stagger=self.stagger)
            pairs = crowd.add_crowd(context, curve, lanes, characters)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        self.report({"INFO"}, "Added %d controllers in %d lanes along %s, with %d characters." % (
            len(pairs), self.lanes, curve.name, len(pairs)))
        return {"FINISHED"}


class MOTION_MATCHING_OT_crowd_add_pair(bpy.types.Operator):
    """Add a row to the crowd list: the scene's controller and Bake Onto armature, to change as you like"""

    bl_idname = "motion_matching.crowd_add_pair"
    bl_label = "Add Crowd Pair"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        settings = context.scene.motion_matching
        item = settings.crowd.add()
        item.controller, item.armature = settings.controller, settings.bake_armature
        settings.active_crowd_pair = len(settings.crowd) - 1
        return {"FINISHED"}


class MOTION_MATCHING_OT_crowd_remove_pair(bpy.types.Operator):
    """Remove the active row of the crowd list (the objects stay)"""

    bl_idname = "motion_matching.crowd_remove_pair"
    bl_label = "Remove Crowd Pair"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.motion_matching
        if not 0 <= settings.active_crowd_pair < len(settings.crowd):
            cls.poll_message_set("The crowd list has no active row")
            return False
        return True

    def execute(self, context):
        settings = context.scene.motion_matching
        settings.crowd.remove(settings.active_crowd_pair)
        settings.active_crowd_pair = max(0, min(settings.active_crowd_pair, len(settings.crowd) - 1))
        return {"FINISHED"}


class MOTION_MATCHING_OT_bake_all(SlicedRun, bpy.types.Operator):
    """Bake every character of the crowd list along its controller, with the scene's bake settings"""

    bl_idname = "motion_matching.bake_all"
    bl_label = "Bake All"
    bl_options = {"REGISTER", "UNDO"}

    status_text = "Baking the crowd... Esc to stop after the characters done"

    @classmethod
    def poll(cls, context):
        if not len(context.scene.motion_matching.crowd):
            cls.poll_message_set("Add pairs to the crowd list, or Add Crowd from a curve")
            return False
        return True

    # The work for SlicedRun: every pair checked first (nothing changed yet), then
    # baked in turn; Esc (closing the generator) ends the pair under way unwritten.
    # With more than one process the file is saved to a copy and pairs are
    # computed in background processes, keyed here as they finish; Esc stops them.

    def start_work(self, context):
        scene = context.scene
        self._pairs = crowd.pairs_to_bake(scene)
        settings = bake_props.to_core(scene.motion_matching.bake_settings)
        self._results = []
        processes = crowd_processes.process_count(scene.motion_matching.crowd_processes, len(self._pairs))
        if processes > 1:
            return crowd_processes.bake_pairs(context, self._pairs, settings, processes, self._results)
        return crowd.bake_pairs(context, self._pairs, settings, self._results)

    def finish_work(self, context, results):
        return self._done(context, results)

    def stopped_work(self, context):
        return self._done(context, self._results, stopped=True)

    def _done(self, context, results, stopped=False):
        scene_data.write_text("Motion Matching Crowd", crowd.summary_text(results, len(self._pairs)))
        if stopped:
            self.report({"WARNING"}, "Baked %d of %d characters; Esc stopped the rest." % (len(results), len(self._pairs)))
        else:
            self.report({"INFO"}, "Baked %d characters (table: the text Motion Matching Crowd)." % len(results))
        return {"FINISHED"}

    def execute(self, context):
        return self.run_at_once(context)

    def invoke(self, context, event):
        return self.run_in_slices(context)


classes = (
    MOTION_MATCHING_OT_add_crowd,
    MOTION_MATCHING_OT_crowd_add_pair,
    MOTION_MATCHING_OT_crowd_remove_pair,
    MOTION_MATCHING_OT_bake_all,
)
