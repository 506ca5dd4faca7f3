"""Controller operators: make the object the character follows, in one step.

- ``motion_matching.add_controller``: an Empty that follows the selected curve
  (Follow Path), at a constant speed, with speed keys, and with stops.
- ``motion_matching.add_scenario_controller``: an Empty keyed on every frame from a
  built-in scenario or a JSON file of timed waypoints.
- ``motion_matching.move_add`` / ``move_remove``: the controller's moves along the
  timeline (from a frame on, the bake searches another tag query).

Stops and speed keys are typed as ``frame:value`` pairs separated by commas, e.g.
``120:1.0, 300:2`` (stand 1 s from frame 120 and 2 s from frame 300), which is
quick to edit in the redo panel.
"""

import math

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..core.paths import curve_timing as core_curve_timing, scenario as core_scenario
from ..core.paths import scenario_builtins as core_scenario_builtins
from ..core.paths.moves import Moves
from ..core.errors import MotionMatchingError
from ..bridge.blender import compat
from ..bridge.bake import controller as controller_build, moves as bake_moves


def _curve(context):
    """The active object if it is a curve, else the first selected curve."""
    obj = context.active_object
    if obj is not None and obj.type == "CURVE":
        return obj
    for obj in getattr(context, "selected_objects", None) or ():
        if obj.type == "CURVE":
            return obj
    return None


def _make_active(context, obj):
    for other in context.selected_objects:
        other.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj


def _check_object_mode(cls, context):
    if context.mode != "OBJECT":
        cls.poll_message_set("Switch to Object Mode")
        return False
    return True


class MOTION_MATCHING_OT_add_controller(bpy.types.Operator):
    """Add a controller that follows the selected curve: an Empty on the curve, keyed over a frame range, with stops"""

    bl_idname = "motion_matching.add_controller"
    bl_label = "Add Curve Controller"
    bl_options = {"REGISTER", "UNDO"}

    frame_start: IntProperty(name="Start Frame", description="Frame where the controller leaves the curve's start "
                             "(default: the scene's start)")
    frame_end: IntProperty(name="End Frame", description="Frame where it reaches the curve's end when Speed is 0, "
                           "before stops are added (default: the scene's end)")
    speed: FloatProperty(name="Speed", description="Constant speed along the curve in metres per second; "
                         "0 fits the motion into the frame range", default=0.0, min=0.0, soft_max=5.0,
                         precision=2, unit="VELOCITY")
    speed_keys: StringProperty(name="Speed Keys", description="Speeds that change over time, as frame:m/s pairs "
                               "(e.g. 1:1.2, 120:3); the speed changes linearly between keys. Overrides Speed",
                               default="")
    stops: StringProperty(name="Stops", description="Where to stand still, as frame:seconds pairs (e.g. 120:1.0, "
                          "300:2); the motion after each stop comes later", default="")
    follow_curve_rotation: BoolProperty(name="Rotate With Curve", description="Turn the controller with the "
                                        "curve, its -Y axis along the path", default=False)
    use_facing: BoolProperty(name="Use Rotation as Facing", description="The character faces the "
                             "controller's -Y axis (for strafing: rotate or key the controller) instead of "
                             "where it goes", default=False)
    extend_scene_range: BoolProperty(name="Extend Scene Range", description="Move the scene's end frame so that "
                                     "the whole motion plays", default=True)
    controller_name: StringProperty(name="Name", default="Controller")

    @classmethod
    def poll(cls, context):
        if not _check_object_mode(cls, context):
            return False
        if _curve(context) is None:
            cls.poll_message_set("Select a curve")
            return False
        return True

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        col = layout.column()
        col.prop(self, "controller_name")
        col.prop(self, "frame_start")
        sub = col.column()
        sub.enabled = self.speed == 0.0 and not self.speed_keys.strip()
        sub.prop(self, "frame_end")
        sub = col.column()
        sub.enabled = not self.speed_keys.strip()
        sub.prop(self, "speed")
        col.prop(self, "speed_keys")
        col.prop(self, "stops")
        col.prop(self, "follow_curve_rotation")
        col.prop(self, "use_facing")
        col.prop(self, "extend_scene_range")

    def execute(self, context):
        scene = context.scene
        if not self.properties.is_property_set("frame_start"):
            self.frame_start = scene.frame_start
        if not self.properties.is_property_set("frame_end"):
            self.frame_end = scene.frame_end
        curve = _curve(context)
        try:
            stops = core_curve_timing.parse_pairs(self.stops, "stop")
            if self.speed_keys.strip():
                speed = core_curve_timing.parse_pairs(self.speed_keys, "speed key")
            else:
                speed = self.speed if self.speed > 0.0 else None
            obj = controller_build.controller_from_curve(
                context, curve, self.frame_start, self.frame_end, speed=speed, stops=stops,
                follow_curve_rotation=self.follow_curve_rotation, use_facing=self.use_facing,
                name=self.controller_name or "Controller")
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        end = _last_key(obj)
        if self.extend_scene_range and end is not None and end > scene.frame_end:
            scene.frame_end = int(math.ceil(end))
        _make_active(context, obj)
        self.report({"INFO"}, "%s follows %s (%.2f m) from frame %d to %.1f."
                    % (obj.name, curve.name, controller_build.curve_length(context, curve), self.frame_start, end))
        return {"FINISHED"}


def _last_key(obj):
    """Frame of the controller's last key (where its motion ends)."""
    curves = compat.fcurves(obj.animation_data.action, obj)
    return max((fc.keyframe_points[-1].co[0] for fc in curves if len(fc.keyframe_points)), default=None)


def _scenario_items():
    items = [(key, label, desc) for key, (label, desc, _make) in core_scenario_builtins.BUILTINS.items()]
    items.append(("FILE", "From File", "Timed waypoints from a JSON file: "
                  '{"points": [{"t": s, "x": m, "y": m, "facing": degrees (optional)}, ...]}'))
    return items


class MOTION_MATCHING_OT_add_scenario_controller(bpy.types.Operator):
    """Add a controller keyed on every frame from a built-in path or a JSON file of timed waypoints"""

    bl_idname = "motion_matching.add_scenario_controller"
    bl_label = "Add Scenario Controller"
    bl_options = {"REGISTER", "UNDO"}

    scenario: EnumProperty(name="Scenario", items=_scenario_items(), default="showcase")
    filepath: StringProperty(name="File", description="JSON file of timed waypoints (Scenario: From File)",
                             subtype="FILE_PATH", default="")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    frame_start: IntProperty(name="Start Frame", description="Frame of the scenario's time 0", default=1)
    update_scene_range: BoolProperty(name="Set Scene Range", description="Set the scene's start and end frames "
                                     "to the controller's", default=True)
    controller_name: StringProperty(name="Name", default="Controller")

    @classmethod
    def poll(cls, context):
        return context.scene is not None and _check_object_mode(cls, context)

    def invoke(self, context, event):
        if self.scenario == "FILE" and not self.filepath:
            context.window_manager.fileselect_add(self)
            return {"RUNNING_MODAL"}
        return self.execute(context)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        col = layout.column()
        col.prop(self, "scenario")
        sub = col.column()
        sub.enabled = self.scenario == "FILE"
        sub.prop(self, "filepath")
        col.prop(self, "controller_name")
        col.prop(self, "frame_start")
        col.prop(self, "update_scene_range")

    def execute(self, context):
        scene = context.scene
        try:
            if self.scenario == "FILE":
                if not self.filepath:
                    raise core_scenario.ScenarioError("Choose a JSON file of timed waypoints.")
                sc = core_scenario.load_scenario(bpy.path.abspath(self.filepath))
            else:
                sc = core_scenario_builtins.builtin(self.scenario)
            obj = controller_build.controller_from_scenario(
                context, sc, None, self.frame_start, name=self.controller_name or "Controller")
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        end = _last_key(obj)
        if self.update_scene_range:
            scene.frame_start = self.frame_start
            scene.frame_end = int(math.ceil(end))
        _make_active(context, obj)
        moves = len(obj.motion_matching.moves)
        self.report({"INFO"}, "%s plays %s (%.1f s) from frame %d to %d%s."
                    % (obj.name, sc.name, core_scenario.duration(sc), self.frame_start, int(end),
                       ", with %d move%s along the timeline" % (moves, "" if moves == 1 else "s") if moves else ""))
        return {"FINISHED"}


def _moves_controller(cls, context):
    """The scene's controller, whose moves the operators edit; None (and the poll's message) when there is none."""
    scene = context.scene
    obj = scene.motion_matching.controller if scene is not None else None
    if obj is None:
        cls.poll_message_set("Choose a controller first (Controller and Bake panel)")
    return obj


class MOTION_MATCHING_OT_move_add(bpy.types.Operator):
    """Add a move along the timeline to the controller: from this frame on, the bake searches this tag query"""

    bl_idname = "motion_matching.move_add"
    bl_label = "Add Move"
    bl_options = {"REGISTER", "UNDO"}

    frame: FloatProperty(name="Frame", description="Where the tag query starts (default: the current frame)",
                         default=0.0, step=100, precision=1)
    use_current_frame: BoolProperty(name="At Current Frame", default=True, options={"SKIP_SAVE"},
                                    description="Start the move at the scene's current frame")
    query: StringProperty(name="Tag Query", description="The tag query from that frame on; empty: back to the "
                          "scene's Tag Query", default="")

    @classmethod
    def poll(cls, context):
        return _moves_controller(cls, context) is not None

    def execute(self, context):
        obj = context.scene.motion_matching.controller
        frame = float(context.scene.frame_current) if self.use_current_frame else self.frame
        if any(m.frame == frame for m in obj.motion_matching.moves):
            self.report({"ERROR"}, "%s already has a move at frame %g: edit that one." % (obj.name, frame))
            return {"CANCELLED"}
        try:
            Moves((frame,), (self.query,))
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        bake_moves.add_move(obj, frame, self.query)
        return {"FINISHED"}


class MOTION_MATCHING_OT_move_remove(bpy.types.Operator):
    """Remove the controller's selected move along the timeline"""

    bl_idname = "motion_matching.move_remove"
    bl_label = "Remove Move"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = _moves_controller(cls, context)
        if obj is None:
            return False
        mm = obj.motion_matching
        if not 0 <= mm.active_move < len(mm.moves):
            cls.poll_message_set("The controller has no move selected")
            return False
        return True

    def execute(self, context):
        mm = context.scene.motion_matching.controller.motion_matching
        mm.moves.remove(mm.active_move)
        mm.active_move = min(mm.active_move, max(len(mm.moves) - 1, 0))
        return {"FINISHED"}


classes = (MOTION_MATCHING_OT_add_controller, MOTION_MATCHING_OT_add_scenario_controller,
           MOTION_MATCHING_OT_move_add, MOTION_MATCHING_OT_move_remove)
