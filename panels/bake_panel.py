"""Controller and Bake panel, and the last bake's report."""

import json

import bpy

from ..bridge.blender import bake_settings
from ..bridge.preview import follow as preview_follow
from ..core.measure.report import BakeReport
from .sidebar import SidebarPanel


class MOTION_MATCHING_PT_bake(SidebarPanel, bpy.types.Panel):
    bl_label = "Controller and Bake"
    bl_idname = "MOTION_MATCHING_PT_bake"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.motion_matching
        col = layout.column(align=True)
        col.operator("motion_matching.add_controller", icon="CURVE_PATH")
        col.operator("motion_matching.add_scenario_controller", icon="EMPTY_ARROWS")
        layout.use_property_split = True
        layout.prop(settings, "controller")
        if settings.controller is not None:
            _draw_moves(layout, settings.controller)
        layout.prop(settings, "bake_armature")
        layout.prop(settings, "ground")
        layout.use_property_split = False
        layout.operator("motion_matching.bake", icon="RENDER_ANIMATION")


class MOTION_MATCHING_UL_moves(bpy.types.UIList):
    """A controller's moves along the timeline, in frame order: frame and tag query."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "frame", text="", emboss=False)
        row.prop(item, "query", text="", emboss=False)

    def filter_items(self, context, data, propname):
        moves = getattr(data, propname)
        order = sorted(range(len(moves)), key=lambda i: moves[i].frame)
        new_order = [0] * len(moves)
        for position, i in enumerate(order):
            new_order[i] = position
        return [], new_order


def _draw_moves(layout, controller):
    """The controller's moves (from a frame on, another tag query), with their add and remove buttons."""
    box = layout.column()
    box.use_property_split = False
    box.label(text="Moves Along the Timeline")
    row = box.row()
    row.template_list("MOTION_MATCHING_UL_moves", "", controller.motion_matching, "moves",
                      controller.motion_matching, "active_move", rows=3)
    col = row.column(align=True)
    col.operator("motion_matching.move_add", icon="ADD", text="")
    col.operator("motion_matching.move_remove", icon="REMOVE", text="")
    if not len(controller.motion_matching.moves):
        box.label(text="None: timeline markers named 'mm: QUERY' apply", icon="MARKER")


class _StagePanel(SidebarPanel):
    """One stage of the bake (bridge.blender.bake_settings.Stage): its settings (greyed out
    while its switch is off)."""

    bl_parent_id = "MOTION_MATCHING_PT_bake"
    stage = None
    advanced = False    # the stage's advanced settings instead of the ones shown

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.motion_matching.bake_settings
        if self.stage.switch:
            layout.active = getattr(settings, self.stage.switch)
        if self.stage.name == "tags" and not self.advanced:
            layout.prop(context.scene.motion_matching, "tag_query")
        col = layout.column(align=True)
        for name in (self.stage.advanced if self.advanced else self.stage.shown):
            col.prop(settings, name)


class _SwitchedStagePanel(_StagePanel):
    """A stage that can be off: its enable switch in the header, as Blender's own panels."""

    def draw_header(self, context):
        self.layout.prop(context.scene.motion_matching.bake_settings, self.stage.switch, text="")


class _AdvancedPanel(_StagePanel):
    """A stage's advanced settings, closed until opened."""

    bl_label = "Advanced"
    bl_options = {"DEFAULT_CLOSED"}
    advanced = True


def _stage_panels():
    """A sub-panel per stage of the bake, and its Advanced sub-panel when it has advanced settings."""
    out = []
    for stage in bake_settings.stages():
        idname = "MOTION_MATCHING_PT_bake_" + stage.name
        body = {"bl_label": stage.label, "bl_idname": idname, "stage": stage, "__doc__": "The bake's %s settings."
                % stage.label}
        base = _SwitchedStagePanel if stage.switch else _StagePanel
        out.append(type(idname, (base, bpy.types.Panel), body))
        if stage.advanced:
            adv = idname + "_advanced"
            out.append(type(adv, (_AdvancedPanel, bpy.types.Panel), {
                "bl_idname": adv, "bl_parent_id": idname, "stage": stage,
                "__doc__": "The bake's advanced %s settings." % stage.label}))
    return tuple(out)


STAGE_PANELS = _stage_panels()


class MOTION_MATCHING_PT_preview(SidebarPanel, bpy.types.Panel):
    bl_label = "Preview"
    bl_idname = "MOTION_MATCHING_PT_preview"

    def draw(self, context):
        settings = context.scene.motion_matching
        on = settings.preview_active
        self.layout.operator("motion_matching.toggle_preview", icon="PAUSE" if on else "PLAY",
                             text="Stop Preview" if on else "Start Preview", depress=on)
        if on:
            text = preview_follow.status(context.scene)
            if text:
                self.layout.label(text=text, icon="TIME")
            self.layout.label(text="Blue: wanted path. Orange: matched path.", icon="INFO")


class MOTION_MATCHING_PT_export(SidebarPanel, bpy.types.Panel):
    bl_label = "Export"
    bl_idname = "MOTION_MATCHING_PT_export"

    def draw(self, context):
        col = self.layout.column(align=True)
        for fmt, label in (("FBX", "Export FBX"), ("GLTF", "Export glTF"), ("BVH", "Export BVH")):
            op = col.operator("motion_matching.export_baked", text=label, icon="EXPORT")
            op.format = fmt


class MOTION_MATCHING_PT_report(SidebarPanel, bpy.types.Panel):
    bl_label = "Report"
    bl_idname = "MOTION_MATCHING_PT_report"

    @classmethod
    def poll(cls, context):
        return bool(context.scene.motion_matching.last_bake_report)

    def draw(self, context):
        layout = self.layout
        try:
            r = json.loads(context.scene.motion_matching.last_bake_report)
            if not isinstance(r, dict):
                raise ValueError("not a report")
        except ValueError:
            layout.label(text="The last report cannot be read.", icon="ERROR")
            return
        report = BakeReport.from_json(r)
        col = layout.column(align=True)
        for text, icon in report.summary_lines():
            col.label(text=text, icon=icon)
        for w in report.warnings:
            # The whole sentence is in the text block and report.json; the panel shows what fits.
            layout.label(text=w, icon="ERROR")


classes = (MOTION_MATCHING_UL_moves, MOTION_MATCHING_PT_bake, *STAGE_PANELS, MOTION_MATCHING_PT_preview, MOTION_MATCHING_PT_export,
           MOTION_MATCHING_PT_report)
