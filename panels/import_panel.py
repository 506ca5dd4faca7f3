"""Import and Virtual Root panels."""

import bpy

from .sidebar import SidebarPanel


class MOTION_MATCHING_PT_import(SidebarPanel, bpy.types.Panel):
    bl_label = "Import"
    bl_idname = "MOTION_MATCHING_PT_import"

    def draw(self, context):
        col = self.layout.column(align=True)
        col.operator("motion_matching.import_bvh", icon="IMPORT")
        col.operator("motion_matching.load_tpose", icon="ARMATURE_DATA")


class MOTION_MATCHING_PT_virtual_root(SidebarPanel, bpy.types.Panel):
    bl_label = "Virtual Root"
    bl_idname = "MOTION_MATCHING_PT_virtual_root"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE"

    def draw(self, context):
        layout = self.layout
        settings = context.active_object.data.motion_matching
        if settings.root_bone:
            layout.label(text="Root: %s (follows %s)" % (settings.root_bone, settings.hips_bone), icon="CHECKMARK")
        else:
            layout.operator("motion_matching.add_virtual_root", icon="BONE_DATA")
        if len(settings.tpose):
            layout.label(text="T-pose stored: %d bones" % len(settings.tpose), icon="OUTLINER_OB_ARMATURE")


classes = (MOTION_MATCHING_PT_import, MOTION_MATCHING_PT_virtual_root)
