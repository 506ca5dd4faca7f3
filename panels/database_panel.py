"""Database and Tags panels, with their lists."""

import bpy

from .sidebar import SidebarPanel


class MOTION_MATCHING_UL_entries(bpy.types.UIList):
    """The actions that make the database, each with the armature it plays on."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "action", text="", emboss=False, icon="ACTION")
        row.prop(item, "armature", text="", icon="ARMATURE_DATA")


class MOTION_MATCHING_UL_feature_groups(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False)
        row.prop(item, "weight", text="")


class MOTION_MATCHING_UL_tags(bpy.types.UIList):
    """Tags of an action: named frame ranges."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False, icon="BOOKMARKS")
        row.prop(item, "frame_start", text="")
        row.prop(item, "frame_end", text="")


class MOTION_MATCHING_PT_database(SidebarPanel, bpy.types.Panel):
    bl_label = "Database"
    bl_idname = "MOTION_MATCHING_PT_database"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.motion_matching
        row = layout.row()
        row.template_list("MOTION_MATCHING_UL_entries", "", settings, "entries", settings, "active_entry", rows=3)
        col = row.column(align=True)
        col.operator("motion_matching.database_add_action", icon="ADD", text="")
        col.operator("motion_matching.database_remove_action", icon="REMOVE", text="")
        layout.prop(settings, "mirror_takes")
        col = layout.column(align=True)
        col.operator("motion_matching.build_database", icon="FILE_REFRESH")
        if settings.database_built:
            if settings.database_stale:
                col.label(text="Out of date: an action or a setting changed", icon="ERROR")
            col.label(text=settings.database_summary, icon="CHECKMARK" if not settings.database_stale else "INFO")
            if settings.database_note:
                col.label(text=settings.database_note, icon="INFO")
        row = layout.row(align=True)
        row.operator("motion_matching.export_database", icon="EXPORT", text="Export")
        row.operator("motion_matching.import_database", icon="IMPORT", text="Import")
        layout.prop(settings, "tag_query")


class MOTION_MATCHING_PT_database_features(SidebarPanel, bpy.types.Panel):
    bl_label = "Features"
    bl_idname = "MOTION_MATCHING_PT_database_features"
    bl_parent_id = "MOTION_MATCHING_PT_database"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        settings = context.scene.motion_matching
        layout.use_property_split = True
        col = layout.column(align=True)
        col.prop(settings, "responsiveness")
        col.prop(settings, "quality")
        col = layout.column(align=True, heading="Feature Bones")
        for prop in ("hips", "left_foot", "right_foot", "left_toe", "right_toe"):
            col.prop(settings, prop)
        layout.prop(settings, "exclude_tags")
        col = layout.column(align=True)
        col.prop(settings, "contact_speed")
        col.prop(settings, "contact_filter")
        layout.use_property_split = False
        layout.label(text="Feature groups (empty: the 27 defaults)")
        layout.template_list("MOTION_MATCHING_UL_feature_groups", "", settings, "feature_groups",
                             settings, "active_feature_group", rows=3)
        layout.operator("motion_matching.reset_features", icon="LOOP_BACK")
        idx = settings.active_feature_group
        if 0 <= idx < len(settings.feature_groups):
            g = settings.feature_groups[idx]
            layout.use_property_split = True
            layout.prop(g, "kind")
            if g.kind.startswith("bone"):
                layout.prop(g, "bones")
            else:
                layout.prop(g, "times")
            layout.prop(g, "weight")


class MOTION_MATCHING_PT_tags(SidebarPanel, bpy.types.Panel):
    bl_label = "Tags"
    bl_idname = "MOTION_MATCHING_PT_tags"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.animation_data is not None and obj.animation_data.action is not None

    def draw(self, context):
        layout = self.layout
        action = context.active_object.animation_data.action
        layout.label(text=action.name, icon="ACTION")
        row = layout.row()
        row.template_list("MOTION_MATCHING_UL_tags", "", action.motion_matching, "tags",
                          action.motion_matching, "active_tag", rows=4)
        col = row.column(align=True)
        col.operator("motion_matching.tag_add", icon="ADD", text="")
        col.operator("motion_matching.tag_remove", icon="REMOVE", text="")
        row = layout.row(align=True)
        row.operator("motion_matching.tags_from_markers", icon="MARKER_HLT", text="From Markers")
        row.operator("motion_matching.import_dance_card", icon="TEXT", text="Dance Card")
        row = layout.row(align=True)
        row.operator("motion_matching.auto_tag", icon="AUTO")
        row.operator("motion_matching.tags_from_file_names", icon="FILE", text="From File Names")
        layout.operator("motion_matching.database_report", icon="INFO")
        card = context.scene.motion_matching.dance_card
        if len(card):
            box = layout.box()
            box.label(text="Dance card: %d moves" % len(card))
            flow = box.column_flow(columns=2, align=True)
            for move in card:
                flow.label(text=move.name)
            for rule in context.scene.motion_matching.dance_card_rules:
                box.label(text="%s \u2192 %s" % (rule.files, rule.tag), icon="FILE")


classes = (
    MOTION_MATCHING_UL_entries,
    MOTION_MATCHING_UL_feature_groups,
    MOTION_MATCHING_UL_tags,
    MOTION_MATCHING_PT_database,
    MOTION_MATCHING_PT_database_features,
    MOTION_MATCHING_PT_tags,
)
