"""motion_matching.export_baked: a baked action to BVH, FBX or glTF for other tools and game engines."""

import os

import bpy
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..core.errors import MotionMatchingError
from ..bridge.files import export_baked as export_bridge

FORMAT_ITEMS = (
    ("FBX", "FBX (.fbx)", "Unity, Unreal and most engines: one take, Y up, metres"),
    ("GLTF", "glTF Binary (.glb)", "Godot, Unreal, the web: one animation, Y up, metres"),
    ("GLTF_SEPARATE", "glTF Separate (.gltf + .bin)", "As glTF Binary, as a text file with its arrays beside it"),
    ("BVH", "BVH (.bvh)", "Motion capture tools: Y up, in the chosen scale"),
)


def _default_armature(context):
    """The active armature, else the scene's bake armature (or None)."""
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        return obj
    return context.scene.motion_matching.bake_armature


def _has_action(obj):
    return obj is not None and obj.type == "ARMATURE" and export_bridge.default_action(obj) is not None


def _format_changed(self, context):
    # In the file browser, the file name follows the format's extension.
    space = getattr(context, "space_data", None)
    if isinstance(space, bpy.types.SpaceFileBrowser) and space.params is not None:
        space.params.filename = export_bridge.with_extension(space.params.filename, self.format)
        space.params.filter_glob = "*" + export_bridge.FORMATS[self.format]


class MOTION_MATCHING_OT_export_baked(bpy.types.Operator, ExportHelper):
    """Export the armature's baked action (only that action, with root motion) to BVH, FBX or glTF"""

    bl_idname = "motion_matching.export_baked"
    bl_label = "Export Baked Animation"
    bl_options = {"REGISTER"}

    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx;*.glb;*.gltf;*.bvh", options={"HIDDEN"})

    format: EnumProperty(name="Format", items=FORMAT_ITEMS, default="FBX", update=_format_changed,
                         description="File format; the file name's extension follows it")
    armature: StringProperty(name="Armature",
                             description="Armature to export (empty: the active one, else the Bake panel's)")
    frame_start: IntProperty(name="Start", default=0, description="First frame (0: the action's first frame)")
    frame_end: IntProperty(name="End", default=0, description="Last frame (0: the action's last frame)")
    global_scale: FloatProperty(
        name="BVH Scale", default=1.0, min=0.0001, max=1000000.0, soft_min=0.001, soft_max=100.0,
        description="BVH only: 1 writes metres (Blender's units), 100 centimetres (as many mocap files are)")

    @classmethod
    def poll(cls, context):
        if not _has_action(_default_armature(context)):
            cls.poll_message_set("Select an armature with a baked action")
            return False
        return True

    def check(self, context):
        # Keep the extension in step with the format (ExportHelper's own check uses one fixed extension).
        old = self.filepath
        if os.path.basename(old):
            self.filepath = export_bridge.with_extension(old, self.format)
        return self.filepath != old

    def invoke(self, context, event):
        if not self.filepath:
            obj = self._target(context, quiet=True)
            action = export_bridge.default_action(obj) if obj is not None else None
            stem = bpy.path.clean_name(action.name if action else "baked")
            folder = os.path.dirname(bpy.data.filepath) if bpy.data.filepath else ""
            self.filepath = os.path.join(folder, stem + export_bridge.FORMATS[self.format])
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def _target(self, context, quiet=False):
        if self.armature:
            obj = bpy.data.objects.get(self.armature)
            if obj is None or obj.type != "ARMATURE":
                if quiet:
                    return None
                raise MotionMatchingError("There is no armature named %s." % self.armature)
            return obj
        obj = _default_armature(context)
        if obj is None and not quiet:
            raise MotionMatchingError("Select the armature to export, or choose it in the Bake panel.")
        return obj

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "format")
        layout.prop(self, "armature", icon="ARMATURE_DATA")
        col = layout.column(align=True)
        col.prop(self, "frame_start")
        col.prop(self, "frame_end")
        row = layout.row()
        row.active = self.format == "BVH"
        row.prop(self, "global_scale")

    def execute(self, context):
        try:
            obj = self._target(context)
            path, fs, fe = export_bridge.export(
                context, obj, self.filepath, self.format,
                frame_start=self.frame_start or None, frame_end=self.frame_end or None,
                global_scale=self.global_scale)
        except MotionMatchingError as ex:
            self.report({"ERROR"}, str(ex))
            return {"CANCELLED"}
        self.filepath = path
        self.report({"INFO"}, "Wrote %s: %s, frames %d-%d (%d frames)." % (
            os.path.basename(path), export_bridge.default_action(obj).name, fs, fe, fe - fs + 1))
        return {"FINISHED"}


classes = (MOTION_MATCHING_OT_export_baked,)
