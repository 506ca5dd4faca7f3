"""motion_matching.add_virtual_root: the simulation bone motion matching steers."""

import bpy
from bpy.props import BoolProperty, FloatProperty, IntProperty, StringProperty

from ..core.errors import MotionMatchingError
from ..bridge.files import virtual_root


class VirtualRootOptions:
    """Options shared by the import and the add-root operators."""

    hips_bone: StringProperty(
        name="Follow Bone",
        description="Bone the root follows on the ground (empty: the hips, found by name or as the top bone)",
        default="")
    root_name: StringProperty(name="Root Name", description="Name of the new root bone", default="Root")
    smooth_root: BoolProperty(
        name="Smooth",
        description=("Smooth the root's path and facing (Savitzky-Golay), leaving out the hips' sway; "
                     "the root may stray centimetres from the hips"),
        default=True)
    position_window: FloatProperty(name="Position Window", description="Seconds the position smoothing window spans",
                                   default=0.5, min=0.05, soft_max=2.0, unit="TIME_ABSOLUTE")
    position_order: IntProperty(name="Position Order", description="Polynomial order for the position",
                                default=3, min=0, max=8)
    direction_window: FloatProperty(name="Direction Window",
                                    description="Seconds the facing smoothing window spans",
                                    default=1.0, min=0.05, soft_max=4.0, unit="TIME_ABSOLUTE")
    direction_order: IntProperty(name="Direction Order", description="Polynomial order for the facing",
                                 default=3, min=0, max=8)

    def root_keywords(self):
        return dict(
            hips=self.hips_bone or None, root_name=self.root_name or "Root", smooth=self.smooth_root,
            position_window=self.position_window, position_order=self.position_order,
            direction_window=self.direction_window, direction_order=self.direction_order)

    def draw_root_options(self, layout):
        col = layout.column()
        col.prop(self, "hips_bone")
        col.prop(self, "root_name")
        col.prop(self, "smooth_root")
        sub = col.column()
        sub.enabled = self.smooth_root
        sub.prop(self, "position_window")
        sub.prop(self, "position_order")
        sub.prop(self, "direction_window")
        sub.prop(self, "direction_order")


class MOTION_MATCHING_OT_add_virtual_root(bpy.types.Operator, VirtualRootOptions):
    """Add a root bone on the ground under the hips, facing their way, in the action and listed clips"""

    bl_idname = "motion_matching.add_virtual_root"
    bl_label = "Add Virtual Root"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("Select an armature")
            return False
        if obj.animation_data is None or obj.animation_data.action is None:
            cls.poll_message_set("The armature has no action: import or assign an animation first")
            return False
        return True

    def draw(self, context):
        self.layout.use_property_split = True
        self.draw_root_options(self.layout)

    def execute(self, context):
        obj = context.active_object
        # The clips this armature plays in turn (the database list's) get the root too.
        clips = [obj.animation_data.action] + [e.action for e in context.scene.motion_matching.entries
                                               if e.armature == obj and e.action is not None]
        try:
            _name, said = virtual_root.add_virtual_root(context, obj, actions=clips, **self.root_keywords())
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        self.report({"INFO"}, said)
        return {"FINISHED"}


classes = (MOTION_MATCHING_OT_add_virtual_root,)
