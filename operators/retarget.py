"""Retargeting operators: bone mapping (automatic, presets), T-pose, retarget.

motion_matching.auto_map_bones, save_bone_map, load_bone_map, make_tpose and
retarget. Each checks everything before changing the file and reports a
sentence; see bridge/retarget and core.retarget.
"""

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..core.skeleton import humanoid_joints, humanoid_json
from ..core.io import text_input
from ..core.errors import MotionMatchingError
from ..bridge.retarget import mapping as bone_mapping, retarget as retarget_bridge, tpose as retarget_tpose
from ..bridge.blender.retarget_props import PREFER, ROOT_MOTION, TPOSE_SOURCES


def _poll_active_armature(cls, context, message="Select an armature"):
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        cls.poll_message_set(message)
        return False
    return True


def _settings(context):
    return context.scene.motion_matching.retarget


class MOTION_MATCHING_OT_auto_map_bones(bpy.types.Operator):
    """Map the active armature's bones to the humanoid joints from their names and the shape of the skeleton"""

    bl_idname = "motion_matching.auto_map_bones"
    bl_label = "Auto-Map Bones"
    bl_options = {"REGISTER", "UNDO"}

    prefer: EnumProperty(name="Rigify Bones", items=PREFER, default="DEF",
                         description="Which bones of a generated Rigify rig to map")

    @classmethod
    def poll(cls, context):
        return _poll_active_armature(cls, context)

    def execute(self, context):
        obj = context.active_object
        try:
            mapping = bone_mapping.auto_map(obj, self.prefer)
            bone_mapping.store_mapping(obj, mapping)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        text = "Mapped %d of %d joints of %s by %s" % (len(mapping), len(humanoid_joints.CANONICAL), obj.name,
                                                       mapping.method)
        if mapping.from_hierarchy:
            text += " (%s from the hierarchy)" % ", ".join(mapping.from_hierarchy)
        missing = mapping.missing_required
        if missing:
            self.report({"WARNING"}, "%s; required joints left to map by hand: %s." % (text, ", ".join(missing)))
        else:
            self.report({"INFO"}, text + ".")
        return {"FINISHED"}


class MOTION_MATCHING_OT_save_bone_map(bpy.types.Operator, ExportHelper):
    """Save the active armature's bone mapping as a preset (JSON)"""

    bl_idname = "motion_matching.save_bone_map"
    bl_label = "Save Bone Map"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        if not _poll_active_armature(cls, context):
            return False
        if not bone_mapping.has_mapping(context.active_object):
            cls.poll_message_set("The armature has no bone mapping: map its bones first")
            return False
        return True

    def execute(self, context):
        obj = context.active_object
        try:
            text = humanoid_json.mapping_to_json(bone_mapping.read_mapping(obj))
            with open(self.filepath, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        except OSError as ex:
            self.report({"ERROR"}, "Cannot write %s: %s." % (self.filepath, ex.strerror or ex))
            return {"CANCELLED"}
        self.report({"INFO"}, "Saved the bone mapping of %s to %s." % (obj.name, os.path.basename(self.filepath)))
        return {"FINISHED"}


class MOTION_MATCHING_OT_load_bone_map(bpy.types.Operator, ImportHelper):
    """Load a bone mapping preset (JSON) onto the active armature"""

    bl_idname = "motion_matching.load_bone_map"
    bl_label = "Load Bone Map"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return _poll_active_armature(cls, context)

    def execute(self, context):
        obj = context.active_object
        name = os.path.basename(self.filepath)
        try:
            raw = text_input.read_bytes(self.filepath, "The bone map %s" % name, max_bytes=16 * 1024 * 1024)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        try:
            mapping = humanoid_json.mapping_from_json(raw)
            missing = bone_mapping.check_preset(mapping, obj)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, "%s cannot be used on %s: %s" % (name, obj.name, ex))
            return {"CANCELLED"}
        bone_mapping.store_mapping(obj, mapping)
        text = "Loaded %d joints from %s onto %s" % (len(mapping), name, obj.name)
        if missing:
            self.report({"WARNING"}, "%s; required joints left to map: %s." % (text, ", ".join(missing)))
        else:
            self.report({"INFO"}, text + ".")
        return {"FINISHED"}


class MOTION_MATCHING_OT_make_tpose(bpy.types.Operator):
    """Store a T-pose on the active armature for retargeting: computed (limbs turned straight out), its rest pose, or a frame"""

    bl_idname = "motion_matching.make_tpose"
    bl_label = "Make T-Pose"
    bl_options = {"REGISTER", "UNDO"}

    mode: EnumProperty(
        name="From", default="COMPUTED",
        items=(("COMPUTED", "Computed", "Turn the mapped arms and legs of the rest pose to the T directions "
                "(shortest turn, no twist added); feet keep their rest orientation"),
               ("REST", "Rest Pose", "The rest pose is the T-pose"),
               ("FRAME", "Frame", "The armature's pose on a frame (after constraints) is the T-pose")))
    frame: IntProperty(name="Frame", default=1, description="The frame that holds the T-pose (From: Frame)")
    straighten_spine: BoolProperty(
        name="Straighten Spine", default=False,
        description="Also turn the spine, neck and head straight up (Computed); off keeps the rig's own posture")
    apply_pose: BoolProperty(
        name="Pose the Armature", default=True,
        description="Put the armature in the T-pose so it can be checked and adjusted (then store it again "
                    "with From: Frame)")
    prefer: EnumProperty(name="Rigify Bones", items=PREFER, default="DEF",
                         description="Bones to map automatically when the armature has no mapping yet")

    @classmethod
    def poll(cls, context):
        return _poll_active_armature(cls, context)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "mode")
        if self.mode == "FRAME":
            layout.prop(self, "frame")
        if self.mode == "COMPUTED":
            layout.prop(self, "straighten_spine")
        if self.mode != "FRAME":
            layout.prop(self, "apply_pose")

    def execute(self, context):
        obj = context.active_object
        try:
            text = retarget_tpose.make_tpose(context, obj, self.mode, self.frame, self.straighten_spine,
                                     self.apply_pose, self.prefer)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        self.report({"INFO"}, text)
        return {"FINISHED"}


def _pair(context, source_name, target_name):
    """Source and target armatures: the names given, else the scene's
    Retarget settings, else the active armature as target and the other
    selected armature as source."""
    settings = _settings(context)
    src = bpy.data.objects.get(source_name) if source_name else settings.source
    tgt = bpy.data.objects.get(target_name) if target_name else settings.target
    if source_name and src is None:
        raise MotionMatchingError("There is no object named %s." % source_name)
    if target_name and tgt is None:
        raise MotionMatchingError("There is no object named %s." % target_name)
    active = context.active_object
    if tgt is None and active is not None and active.type == "ARMATURE" and active != src:
        tgt = active
    if src is None:
        others = [o for o in context.selected_objects if o.type == "ARMATURE" and o != tgt]
        if len(others) == 1:
            src = others[0]
    if src is None or tgt is None:
        raise MotionMatchingError("Choose the source and the target armatures (Retarget panel), or select the "
                                  "source and then the target so that the target is active.")
    return src, tgt


class MOTION_MATCHING_OT_retarget(bpy.types.Operator):
    """Retarget the source armature's action onto the target armature through their T-poses, as a new action"""

    bl_idname = "motion_matching.retarget"
    bl_label = "Retarget"
    bl_options = {"REGISTER", "UNDO"}

    source: StringProperty(name="Source", description="Source armature object (empty: the panel's choice, "
                           "else the selected armature that is not active)")
    target: StringProperty(name="Target", description="Target armature object (empty: the panel's choice, "
                           "else the active armature)")
    source_tpose: EnumProperty(name="Source T-Pose", items=TPOSE_SOURCES, default="AUTO")
    source_tpose_frame: IntProperty(name="Source T-Pose Frame", default=1)
    target_tpose: EnumProperty(name="Target T-Pose", items=TPOSE_SOURCES, default="AUTO")
    target_tpose_frame: IntProperty(name="Target T-Pose Frame", default=1)
    root_motion: EnumProperty(name="Root Motion", items=ROOT_MOTION, default="HIPS")
    auto_scale: BoolProperty(name="Scale by Hips Height", default=True,
                             description="Scale the translation by the ratio of the hips heights in the T-poses")
    scale: FloatProperty(name="Scale", default=1.0, min=0.0001, soft_max=100.0,
                         description="Scale of the translation when not scaled by the hips height")
    prefer: EnumProperty(name="Rigify Bones", items=PREFER, default="DEF",
                         description="Bones to map automatically on an armature that has no mapping yet")
    action_name: StringProperty(name="Action Name", description="Name of the new action (empty: "
                                "'<source action> on <target>')")

    @classmethod
    def poll(cls, context):
        settings = _settings(context)
        if settings.source is not None and settings.target is not None:
            return True
        if sum(1 for o in context.scene.objects if o.type == "ARMATURE") < 2:
            cls.poll_message_set("Retargeting needs two armatures: a source with an action and a target")
            return False
        return True

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        for prop in ("source", "target", "source_tpose"):
            layout.prop(self, prop)
        if self.source_tpose == "FRAME":
            layout.prop(self, "source_tpose_frame")
        layout.prop(self, "target_tpose")
        if self.target_tpose == "FRAME":
            layout.prop(self, "target_tpose_frame")
        layout.prop(self, "root_motion")
        layout.prop(self, "auto_scale")
        if not self.auto_scale:
            layout.prop(self, "scale")
        layout.prop(self, "action_name")

    def execute(self, context):
        wm = context.window_manager
        wm.progress_begin(0, 100)
        try:
            src, tgt = _pair(context, self.source, self.target)
            action, text, warnings = retarget_bridge.retarget(
                context, src, tgt, source_tpose=self.source_tpose, source_frame=self.source_tpose_frame,
                target_tpose=self.target_tpose, target_frame=self.target_tpose_frame,
                root_motion=self.root_motion, scale=None if self.auto_scale else self.scale,
                prefer=self.prefer, action_name=self.action_name,
                progress=lambda f: wm.progress_update(int(100 * f)))
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        if warnings:
            self.report({"WARNING"}, "%s Note: %s." % (text, "; ".join(warnings)))
        else:
            self.report({"INFO"}, text)
        return {"FINISHED"}


classes = (
    MOTION_MATCHING_OT_auto_map_bones,
    MOTION_MATCHING_OT_save_bone_map,
    MOTION_MATCHING_OT_load_bone_map,
    MOTION_MATCHING_OT_make_tpose,
    MOTION_MATCHING_OT_retarget,
)
