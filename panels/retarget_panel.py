"""Retarget panel: source and target, the active armature's bone mapping as
an editable list, presets, T-pose and the retarget button."""

import bpy

from ..core.skeleton import humanoid_joints
from .sidebar import SidebarPanel


class MOTION_MATCHING_UL_bone_map(bpy.types.UIList):
    """Canonical joints and the bones mapped to them; required joints left
    unmapped are shown in red."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.alert = not item.bone and item.name in humanoid_joints.REQUIRED
        split = row.split(factor=0.42, align=True)
        split.label(text=item.name, icon="BONE_DATA" if item.bone else "BLANK1")
        split.prop_search(item, "bone", item.id_data, "bones", text="")


class MOTION_MATCHING_PT_retarget(SidebarPanel, bpy.types.Panel):
    bl_label = "Retarget"
    bl_idname = "MOTION_MATCHING_PT_retarget"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        settings = context.scene.motion_matching.retarget
        col = layout.column(align=True)
        col.prop(settings, "source")
        col.prop(settings, "target")

        obj = context.active_object
        box = layout.box()
        if obj is None or obj.type != "ARMATURE":
            box.label(text="Select an armature to see its bone mapping", icon="INFO")
        else:
            arm_settings = obj.data.motion_matching
            row = box.row(align=True)
            row.label(text="Bones of %s" % obj.name, icon="ARMATURE_DATA")
            row = box.row(align=True)
            op = row.operator("motion_matching.auto_map_bones", icon="AUTO", text="Auto-Map")
            op.prefer = settings.prefer
            row.prop(settings, "prefer", text="")
            if len(arm_settings.bone_map):
                box.template_list("MOTION_MATCHING_UL_bone_map", "", arm_settings, "bone_map",
                                  arm_settings, "active_bone_map", rows=6)
            row = box.row(align=True)
            row.operator("motion_matching.load_bone_map", icon="IMPORT", text="Load")
            row.operator("motion_matching.save_bone_map", icon="EXPORT", text="Save")
            row = box.row(align=True)
            row.operator("motion_matching.make_tpose", icon="OUTLINER_OB_ARMATURE")
            if len(arm_settings.tpose):
                box.label(text="T-pose: %d bones, %s" % (len(arm_settings.tpose),
                                                         arm_settings.tpose_source or "stored"), icon="CHECKMARK")

        col = layout.column()
        col.use_property_split = True
        col.prop(settings, "source_tpose")
        if settings.source_tpose == "FRAME":
            col.prop(settings, "source_tpose_frame", text="Frame")
        col.prop(settings, "target_tpose")
        if settings.target_tpose == "FRAME":
            col.prop(settings, "target_tpose_frame", text="Frame")
        col.prop(settings, "root_motion")
        col.prop(settings, "auto_scale")
        if not settings.auto_scale:
            col.prop(settings, "scale")
        tgt = settings.target
        if settings.auto_scale and tgt is not None and "mm_size_ratio" in tgt.keys():
            col.label(text="Size: %.3f (automatic, last retarget onto %s)" % (tgt["mm_size_ratio"], tgt.name))
        op = layout.operator("motion_matching.retarget", icon="ARMATURE_DATA")
        op.source = settings.source.name if settings.source else ""
        op.target = settings.target.name if settings.target else ""
        for prop in ("source_tpose", "source_tpose_frame", "target_tpose", "target_tpose_frame", "root_motion",
                     "auto_scale", "scale", "prefer"):
            setattr(op, prop, getattr(settings, prop))


classes = (MOTION_MATCHING_UL_bone_map, MOTION_MATCHING_PT_retarget)
