"""Crowd panel: the (controller, character) pairs Bake All bakes, Add Crowd from a curve."""

import bpy

from .sidebar import SidebarPanel


class MOTION_MATCHING_UL_crowd(bpy.types.UIList):
    """A character of the crowd and the controller it follows."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "armature", text="", icon="ARMATURE_DATA")
        row.prop(item, "controller", text="", icon="EMPTY_AXIS")


class MOTION_MATCHING_PT_crowd(SidebarPanel, bpy.types.Panel):
    bl_label = "Crowd"
    bl_idname = "MOTION_MATCHING_PT_crowd"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        settings = context.scene.motion_matching
        layout.operator("motion_matching.add_crowd", icon="COMMUNITY")
        row = layout.row()
        row.template_list("MOTION_MATCHING_UL_crowd", "", settings, "crowd", settings, "active_crowd_pair", rows=3)
        col = row.column(align=True)
        col.operator("motion_matching.crowd_add_pair", icon="ADD", text="")
        col.operator("motion_matching.crowd_remove_pair", icon="REMOVE", text="")
        row = layout.row(align=True)
        row.operator("motion_matching.bake_all", icon="RENDER_ANIMATION")
        row.prop(settings, "crowd_processes")


classes = (MOTION_MATCHING_UL_crowd, MOTION_MATCHING_PT_crowd)
