"""Database operators: list the actions, build, export and import the database."""

import os

import bpy
from bpy.props import EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..core.errors import MotionMatchingError
from ..core.io.npz_reader import MAX_INFLATED_BYTES
from ..bridge.database import build as database_build, inputs as database_inputs, store as database_store
from ..bridge.database.properties import MIRROR_TAKES_ITEMS, mark_stale


def _settings(context):
    return context.scene.motion_matching


class MOTION_MATCHING_OT_database_add_action(bpy.types.Operator):
    """Add the active armature's action to the database list (or every selected armature's)"""

    bl_idname = "motion_matching.database_add_action"
    bl_label = "Add Action"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE" or not obj.animation_data or not obj.animation_data.action:
            cls.poll_message_set("Select an armature that plays an action")
            return False
        return True

    def execute(self, context):
        settings = _settings(context)
        objs = [o for o in context.selected_objects if o.type == "ARMATURE"] or [context.active_object]
        known = {(e.action, e.armature) for e in settings.entries}
        added = 0
        for obj in objs:
            action = obj.animation_data.action if obj.animation_data else None
            if action is None or (action, obj) in known:
                continue
            entry = settings.entries.add()
            entry.action = action
            entry.armature = obj
            added += 1
        settings.active_entry = len(settings.entries) - 1
        mark_stale(context.scene)
        self.report({"INFO"}, "Added %d action%s to the database list." % (added, "" if added == 1 else "s"))
        return {"FINISHED"}


class MOTION_MATCHING_OT_database_remove_action(bpy.types.Operator):
    """Remove the selected action from the database list"""

    bl_idname = "motion_matching.database_remove_action"
    bl_label = "Remove Action"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = _settings(context)
        if not 0 <= settings.active_entry < len(settings.entries):
            cls.poll_message_set("The list has no selected action")
            return False
        return True

    def execute(self, context):
        settings = _settings(context)
        settings.entries.remove(settings.active_entry)
        settings.active_entry = max(0, min(settings.active_entry, len(settings.entries) - 1))
        mark_stale(context.scene)
        return {"FINISHED"}


class MOTION_MATCHING_OT_reset_features(bpy.types.Operator):
    """Fill the feature list with the 27 default features (feet, hips, trajectory) for the listed skeleton"""

    bl_idname = "motion_matching.reset_features"
    bl_label = "Default Features"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = _settings(context)
        if not any(e.armature for e in settings.entries):
            cls.poll_message_set("Add an action and its armature to the database list first")
            return False
        return True

    def execute(self, context):
        settings = _settings(context)
        obj = next(e.armature for e in settings.entries if e.armature)
        try:
            bones = database_inputs.feature_bones(settings, obj)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        database_inputs.fill_default_groups(settings, bones)
        return {"FINISHED"}


class MOTION_MATCHING_OT_build_database(bpy.types.Operator):
    """Build the motion-matching database from the listed actions (features, contacts, tags)"""

    bl_idname = "motion_matching.build_database"
    bl_label = "Build Database"
    bl_options = {"REGISTER", "UNDO"}

    mirror_takes: EnumProperty(
        name="Mirror Takes", items=MIRROR_TAKES_ITEMS, default="AUTO", options={"SKIP_SAVE"},
        description="Mirror images of the takes; when given, it becomes the scene's Mirror Takes")

    @classmethod
    def poll(cls, context):
        if len(_settings(context).entries) == 0:
            cls.poll_message_set("Add at least one action to the database list")
            return False
        return True

    def invoke(self, context, event):
        # From the panel: show (and use) the scene's setting in the redo panel.
        self.mirror_takes = _settings(context).mirror_takes
        return self.execute(context)

    def execute(self, context):
        settings = _settings(context)
        before = (settings.mirror_takes, settings.database_stale)   # what a refusal puts back
        if self.properties.is_property_set("mirror_takes"):
            settings.mirror_takes = self.mirror_takes
        try:
            summary = database_build.build_and_store(context)
        except MotionMatchingError as ex:
            settings.mirror_takes, settings.database_stale = before   # leave the scene as it was
            self.report({"ERROR"}, "Database not built (the previous one is kept): %s" % ex)
            return {"CANCELLED"}
        self.report({"INFO"}, "Database built: %s.%s" % (database_build.summary_text(summary),
                                                         " " + summary["note"] if summary.get("note") else ""))
        return {"FINISHED"}


class MOTION_MATCHING_OT_export_database(bpy.types.Operator, ExportHelper):
    """Write the database to a .npz file (plain numpy arrays; layout in the README)"""

    bl_idname = "motion_matching.export_database"
    bl_label = "Export Database"
    bl_options = {"REGISTER"}

    filename_ext = ".npz"
    filter_glob: StringProperty(default="*.npz", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        if not database_store.has_database(context.scene):
            cls.poll_message_set("Build the database first")
            return False
        return True

    def execute(self, context):
        try:
            data = database_store.raw_bytes(context.scene)
            with open(self.filepath, "wb") as fh:
                fh.write(data)
        except (MotionMatchingError, OSError) as ex:
            self.report({"ERROR"}, "Cannot write %s: %s" % (self.filepath, getattr(ex, "strerror", None) or ex))
            return {"CANCELLED"}
        self.report({"INFO"}, "Wrote %s (%.1f MB)." % (os.path.basename(self.filepath), len(data) / 1e6))
        return {"FINISHED"}


class MOTION_MATCHING_OT_import_database(bpy.types.Operator, ImportHelper):
    """Load a database .npz file into the scene (replaces the scene's database)"""

    bl_idname = "motion_matching.import_database"
    bl_label = "Import Database"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".npz"
    filter_glob: StringProperty(default="*.npz", options={"HIDDEN"})

    def execute(self, context):
        try:
            with open(self.filepath, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > MAX_INFLATED_BYTES:
                    raise MotionMatchingError("it is %.1f GB; a database file is at most %.1f GB"
                                              % (size / 1e9, MAX_INFLATED_BYTES / 1e9))
                data = fh.read()
            # Checked completely before anything in the scene changes.
            db = database_store.from_bytes(data).matching
        except OSError as ex:
            self.report({"ERROR"}, "Cannot read %s: %s." % (self.filepath, ex.strerror or ex))
            return {"CANCELLED"}
        except MotionMatchingError as ex:
            self.report({"ERROR"}, "%s is not a usable database: %s" % (os.path.basename(self.filepath), ex))
            return {"CANCELLED"}
        settings = _settings(context)
        database_store.store(context.scene, data, imported=True)
        settings.database_built = True
        settings.database_stale = False
        settings.database_note = ""
        settings.database_summary = "%d rows, %d features (imported from %s)" % (
            db.num_rows, db.dim, os.path.basename(self.filepath))
        self.report({"INFO"}, "Loaded %s." % settings.database_summary)
        return {"FINISHED"}


classes = (
    MOTION_MATCHING_OT_database_add_action,
    MOTION_MATCHING_OT_database_remove_action,
    MOTION_MATCHING_OT_reset_features,
    MOTION_MATCHING_OT_build_database,
    MOTION_MATCHING_OT_export_database,
    MOTION_MATCHING_OT_import_database,
)
