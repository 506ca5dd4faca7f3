"""The BVH side of the export: Blender's BVH exporter writes armature space
as it is (Z up) and ignores the object's placement, so it runs on a temporary
copy of the armature whose bones are moved into the BVH's Y-up space."""

import bpy
from mathutils import Matrix

from ...core.errors import MotionMatchingError
from ..blender import compat

# BVH: Euler order of the rotation channels. Yaw (Y, up in the file) is the
# outermost rotation, so the character can face any way without gimbal lock;
# it is also the order of the shipped sample take.
BVH_ROTATE_MODE = "YXZ"


def bvh_matrix(armature):
    """Armature space to the BVH file's space: the object's placement (without
    scale) then Blender's Z up, -Y forward to BVH's Y up, +Z forward, the
    inverse of what Blender's BVH importer applies by default. Returns (matrix,
    uniform scale of the object)."""
    from bpy_extras.io_utils import axis_conversion

    loc, rot, scale = armature.matrix_world.decompose()
    s = scale[0]
    if s <= 0.0 or abs(scale[1] - s) > 1e-5 * s or abs(scale[2] - s) > 1e-5 * s \
            or armature.matrix_world.to_3x3().determinant() <= 0.0:
        raise MotionMatchingError("%s has a non-uniform or negative scale: apply it (Ctrl A) before exporting BVH."
                                  % armature.name)
    conv = axis_conversion(from_forward="Y", from_up="Z", to_forward="-Z", to_up="Y").to_4x4()
    placed = Matrix.Translation(loc / s) @ rot.to_matrix().to_4x4()
    return conv @ placed, s


class BvhProxy:
    """Blender's BVH exporter writes armature space as it is (Z up) and ignores
    the object's placement. It runs on this temporary copy of the armature
    whose bones are moved into the BVH's Y-up space (the same rotation on every
    bone leaves every local pose channel valid), playing the same action, so the
    file opens upright in other tools and re-imports with Blender's default
    axes to the same world positions.

    The bones are placed one by one in edit mode (``EditBone.matrix``), not with
    ``Armature.transform``: the latter recomputes the root's roll in a way that
    tilts the whole rig by about 1.5e-5 rad, 0.1 mm at 6 m from the origin.

    The copy is made active and selected while it exists; :meth:`remove` must
    run after the scene's selection and active object are put back, so that
    nothing walks the view layer while it still holds the removed object."""

    def __init__(self, context, armature, action, bvh_space):
        matrix, _s = bvh_space
        self.obj = None
        self.data = armature.data.copy()
        self.data_name = self.data.name
        self.name = None
        try:
            self.data.pose_position = "POSE"
            tmp = self.obj = bpy.data.objects.new(armature.name + "_bvh_export", self.data)
            self.name = tmp.name
            context.scene.collection.objects.link(tmp)
            vl = context.view_layer
            for o in vl.objects:
                if o.select_get(view_layer=vl):
                    o.select_set(False, view_layer=vl)
            tmp.select_set(True, view_layer=vl)
            vl.objects.active = tmp
            rest = {b.name: b.matrix_local.copy() for b in armature.data.bones}
            with context.temp_override(active_object=tmp, object=tmp, selected_objects=[tmp],
                                       selected_editable_objects=[tmp]):
                bpy.ops.object.mode_set(mode="EDIT")
                try:
                    for eb in self.data.edit_bones:
                        eb.matrix = matrix @ rest[eb.name]
                finally:
                    bpy.ops.object.mode_set(mode="OBJECT")
            vl.update()
            for pb in tmp.pose.bones:
                pb.rotation_mode = armature.pose.bones[pb.name].rotation_mode
            compat.assign_action(tmp, action)
        except BaseException:
            self.remove()
            raise

    def remove(self):
        """Delete the copy and its armature data (looked up by name: safe to call twice)."""
        obj = bpy.data.objects.get(self.name) if self.name else None
        if obj is not None:
            ad = obj.animation_data
            if ad is not None:
                obj.animation_data_clear()   # the action loses this user now, not at some later purge
            bpy.data.objects.remove(obj)
        data = bpy.data.armatures.get(self.data_name) if self.data_name else None
        if data is not None:
            bpy.data.armatures.remove(data)
        self.obj = None
        self.name = self.data_name = None
