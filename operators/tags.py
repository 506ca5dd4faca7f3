"""Tag operators: the dance card on an action (named frame ranges)."""

import json
import os

import bpy
from bpy.props import BoolProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ..core.database import auto_tags
from ..core.database import coverage as core_coverage
from ..core.database import dance_card as core_dance_card
from ..core.database import tags as core_tags
from ..core.errors import MotionMatchingError
from ..bridge.database import store as database_store, tags as tags_bridge
from ..bridge.blender import scene_data
from ..bridge.database.properties import mark_stale


def _action(context):
    obj = context.active_object
    if obj is None or obj.animation_data is None:
        return None
    return obj.animation_data.action


def _action_poll(cls, context):
    if _action(context) is None:
        cls.poll_message_set("Select an object that plays an action")
        return False
    return True


def _mark_stale(context):
    mark_stale(context.scene)


def _next_move(context, action):
    """The first dance-card move the action has no tag for yet."""
    have = {t.name.lower() for t in action.motion_matching.tags}
    for move in context.scene.motion_matching.dance_card:
        if move.name.lower() not in have:
            return move.name
    return "move"


class MOTION_MATCHING_OT_tag_add(bpy.types.Operator):
    """Tag a frame range of the active action (by default the preview range, else the whole action)"""

    bl_idname = "motion_matching.tag_add"
    bl_label = "Add Tag"
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(name="Name", description="The move, e.g. walk, run, stop, turn_left_90 (no spaces)")
    frame_start: IntProperty(name="Start", description="First frame of the move")
    frame_end: IntProperty(name="End", description="Last frame of the move (included)")

    poll = classmethod(_action_poll)

    def invoke(self, context, event):
        self._defaults(context)
        return self.execute(context)

    def _defaults(self, context):
        scene = context.scene
        action = _action(context)
        if not self.name:
            self.name = _next_move(context, action)
        if self.frame_start == 0 and self.frame_end == 0:
            if scene.use_preview_range:
                self.frame_start, self.frame_end = scene.frame_preview_start, scene.frame_preview_end
            else:
                start, end = action.frame_range
                self.frame_start, self.frame_end = int(start), int(end)

    def execute(self, context):
        action = _action(context)
        if self.frame_start == 0 and self.frame_end == 0:
            self._defaults(context)
        try:
            core_tags.check_tag_name(self.name)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        if self.frame_end < self.frame_start:
            self.report({"ERROR"}, "The tag ends (frame %d) before it starts (frame %d)." % (self.frame_end, self.frame_start))
            return {"CANCELLED"}
        tags = action.motion_matching.tags
        tag = tags.add()
        tag.name, tag.frame_start, tag.frame_end = self.name, self.frame_start, self.frame_end
        action.motion_matching.active_tag = len(tags) - 1
        _mark_stale(context)
        return {"FINISHED"}


class MOTION_MATCHING_OT_tag_remove(bpy.types.Operator):
    """Remove the selected tag of the active action"""

    bl_idname = "motion_matching.tag_remove"
    bl_label = "Remove Tag"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        action = _action(context)
        if action is None or not 0 <= action.motion_matching.active_tag < len(action.motion_matching.tags):
            cls.poll_message_set("Select a tag in the list")
            return False
        return True

    def execute(self, context):
        mm = _action(context).motion_matching
        mm.tags.remove(mm.active_tag)
        mm.active_tag = max(0, min(mm.active_tag, len(mm.tags) - 1))
        _mark_stale(context)
        return {"FINISHED"}


class MOTION_MATCHING_OT_tags_from_markers(bpy.types.Operator):
    """Make tags from timeline markers: each marker starts a tag named like it, which ends just before the next marker"""

    bl_idname = "motion_matching.tags_from_markers"
    bl_label = "Tags from Markers"
    bl_options = {"REGISTER", "UNDO"}

    replace: BoolProperty(name="Replace", description="Remove the action's tags first", default=False)

    @classmethod
    def poll(cls, context):
        if not _action_poll(cls, context):
            return False
        if not len(context.scene.timeline_markers):
            cls.poll_message_set("The timeline has no markers")
            return False
        return True

    def execute(self, context):
        action = _action(context)
        start, end = (int(v) for v in action.frame_range)
        markers = sorted((m.frame, m.name) for m in context.scene.timeline_markers if start <= m.frame <= end)
        if not markers:
            self.report({"ERROR"}, "No marker lies inside the action's frames %d-%d." % (start, end))
            return {"CANCELLED"}
        made = []
        for i, (frame, name) in enumerate(markers):
            stop = markers[i + 1][0] - 1 if i + 1 < len(markers) else end
            name = name.strip().replace(" ", "_")
            try:
                core_tags.check_tag_name(name)
            except MotionMatchingError as ex:
                self.report({"ERROR"}, "Marker at frame %d: %s" % (frame, ex))
                return {"CANCELLED"}
            if stop >= frame:
                made.append((name, frame, stop))
        tags = action.motion_matching.tags
        if self.replace:
            tags.clear()
        for name, a, b in made:
            t = tags.add()
            t.name, t.frame_start, t.frame_end = name, a, b
        _mark_stale(context)
        self.report({"INFO"}, "Made %d tags from markers." % len(made))
        return {"FINISHED"}


class MOTION_MATCHING_OT_import_dance_card(bpy.types.Operator, ImportHelper):
    """Read a dance card (TOML or JSON: the moves to capture) into the scene's list of moves"""

    bl_idname = "motion_matching.import_dance_card"
    bl_label = "Import Dance Card"
    bl_options = {"REGISTER", "UNDO"}

    filter_glob: StringProperty(default="*.toml;*.json", options={"HIDDEN"})

    def execute(self, context):
        try:
            card = core_dance_card.load_dance_card(self.filepath)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        settings = context.scene.motion_matching
        tags_bridge.store_dance_card(settings, card, card.title or os.path.basename(self.filepath))
        rules = len(card.rules)
        self.report({"INFO"}, "Dance card %s: %d moves%s." % (
            settings.dance_card_title, len(card.moves),
            ", %d file-name rule%s" % (rules, "" if rules == 1 else "s") if rules else ""))
        return {"FINISHED"}


def _rule_targets(context):
    """The actions file-name rules apply to: every action of the database list
    and the active object's action, each once, with the armature to read it on."""
    out = {}
    for e in context.scene.motion_matching.entries:
        if e.action is not None and e.armature is not None and e.action not in out:
            out[e.action] = e.armature
    obj = context.active_object
    action = _action(context)
    if action is not None and action not in out:
        out[action] = obj
    return out


class MOTION_MATCHING_OT_tags_from_file_names(bpy.types.Operator):
    """Tag whole clips by the dance card's file-name rules: every listed action and the active one, by its file"""

    bl_idname = "motion_matching.tags_from_file_names"
    bl_label = "Tags from File Names"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not len(context.scene.motion_matching.dance_card_rules):
            cls.poll_message_set("Import a dance card with file-name rules ([[rule]] files, tag) first")
            return False
        if not _rule_targets(context):
            cls.poll_message_set("Add actions to the database list, or select an object that plays one")
            return False
        return True

    def execute(self, context):
        targets = _rule_targets(context)
        try:
            found = tags_bridge.file_name_tags(context.scene, list(targets), targets.get)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        if not found:
            self.report({"ERROR"}, "None of the %d action%s was imported from a file, so no file name can "
                        "tag it." % (len(targets), "" if len(targets) == 1 else "s"))
            return {"CANCELLED"}
        added = sum(tags_bridge.add_whole_clip_tags(*item) for item in found)
        matched = sum(1 for item in found if item[1])
        if added:
            _mark_stale(context)
        self.report({"INFO"}, "File-name rules matched %d of %d clips; %d tag%s added." % (
            matched, len(found), added, "" if added == 1 else "s"))
        return {"FINISHED"}


class MOTION_MATCHING_OT_auto_tag(bpy.types.Operator):
    """Suggest tags (idle, walk, run, starts, stops, turns) for the active action from its root's speed and turning"""

    bl_idname = "motion_matching.auto_tag"
    bl_label = "Suggest Tags"
    bl_options = {"REGISTER", "UNDO"}

    replace: BoolProperty(name="Replace", description="Remove the action's tags first", default=True)

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE" or not obj.animation_data or not obj.animation_data.action:
            cls.poll_message_set("Select an armature that plays an action")
            return False
        if not obj.data.motion_matching.root_bone:
            cls.poll_message_set("The armature needs a virtual root first")
            return False
        return True

    def execute(self, context):
        obj = context.active_object
        action = obj.animation_data.action
        try:
            tags, first, fps = tags_bridge.suggest_tags(context.scene, obj)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        tags_bridge.add_tags(action, tags, first, replace=self.replace)
        _mark_stale(context)
        summary = auto_tags.tags_summary(tags, fps)
        self.report({"INFO"}, "Suggested %d tags: %s." % (len(tags), ", ".join(
            "%s %.1f s" % (k, v) for k, v in summary.items())))
        return {"FINISHED"}


class MOTION_MATCHING_OT_database_report(bpy.types.Operator):
    """Report what the database covers: seconds per dance-card move, missing moves, and the speeds and turns it can do"""

    bl_idname = "motion_matching.database_report"
    bl_label = "Coverage Report"
    bl_options = {"REGISTER"}

    filepath: StringProperty(name="JSON File", description="Also write the report here as JSON (optional)",
                             subtype="FILE_PATH", default="")

    @classmethod
    def poll(cls, context):
        if not database_store.has_database(context.scene):
            cls.poll_message_set("Build the database first")
            return False
        return True

    def execute(self, context):
        try:
            report = tags_bridge.coverage(context.scene)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        text = core_coverage.format_report_text(report)
        if self.filepath:   # first: a refusal leaves no text block behind
            try:
                with open(bpy.path.abspath(self.filepath), "w") as fh:
                    json.dump(report, fh, indent=2)
            except OSError as ex:
                self.report({"ERROR"}, "Cannot write %s: %s." % (self.filepath, ex.strerror or ex))
                return {"CANCELLED"}
        scene_data.write_text("Motion Matching Coverage", text)
        missing = [m["name"] for m in report.get("moves", []) if m.get("status") == "missing"]
        gaps = [g for g in report.get("gaps", []) if g.get("kind") == "empty"]
        self.report({"INFO"}, "Coverage: %.1f s in %d clips; %s; %d empty speed/turn regions (see the text "
                    "'Motion Matching Coverage')." % (
                        report["totals"]["seconds"], report["totals"]["clips"],
                        ("missing moves: " + ", ".join(missing)) if missing else "no move missing", len(gaps)))
        return {"FINISHED"}


classes = (
    MOTION_MATCHING_OT_tag_add,
    MOTION_MATCHING_OT_tag_remove,
    MOTION_MATCHING_OT_tags_from_markers,
    MOTION_MATCHING_OT_import_dance_card,
    MOTION_MATCHING_OT_database_report,
    MOTION_MATCHING_OT_auto_tag,
    MOTION_MATCHING_OT_tags_from_file_names,
)
