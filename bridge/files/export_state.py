"""What the export changes in the scene, saved and put back."""

import bpy

from ..blender import compat


class SceneState:
    """What the export changes, saved and put back.

    Objects are remembered by name and looked up again when restoring, so an
    object removed meanwhile is skipped instead of being dereferenced; each
    part is put back on its own, so one failing part leaves the others
    restored."""

    def __init__(self, context, armature):
        self.context = context
        self.scene = context.scene
        self.view_layer = context.view_layer
        self.armature = armature
        self.prepared = False

    def prepare(self, action, fs, fe):
        scene, vl, arm = self.scene, self.view_layer, self.armature
        self.frame = (scene.frame_current, scene.frame_subframe)
        self.frame_range = (scene.frame_start, scene.frame_end)
        active = vl.objects.active
        self.active = active.name if active is not None else None
        self.mode = active.mode if active is not None else "OBJECT"
        self.selected = [o.name for o in vl.objects if o is not None and o.select_get(view_layer=vl)]
        self.hidden = arm.hide_get(view_layer=vl)
        self.hide_select = arm.hide_select
        self.hide_viewport = arm.hide_viewport
        self.pose_position = arm.data.pose_position
        ad = arm.animation_data
        self.had_animation_data = ad is not None
        self.assignment = compat.saved_assignment(arm)
        self.action = self.assignment[0]
        self.use_nla = ad.use_nla if ad else True
        self.prepared = True

        if self.mode != "OBJECT" and bpy.ops.object.mode_set.poll():
            bpy.ops.object.mode_set(mode="OBJECT")
        scene.frame_start, scene.frame_end = fs, fe
        arm.hide_viewport = False
        arm.hide_select = False
        arm.hide_set(False, view_layer=vl)
        for name in self.selected:
            vl.objects[name].select_set(False, view_layer=vl)
        arm.select_set(True, view_layer=vl)
        vl.objects.active = arm
        arm.data.pose_position = "POSE"
        if self.action != action:
            compat.assign_action(arm, action)
        arm.animation_data.use_nla = False   # the action alone, nothing blended in from the NLA

    def restore(self):
        if not self.prepared:
            return
        self.prepared = False
        failures = []
        for part in (self._restore_animation, self._restore_visibility_and_selection, self._restore_frames):
            try:
                part()
            except Exception as ex:  # noqa: BLE001  (put the other parts back, then report the first)
                failures.append(ex)
        if failures:
            raise failures[0]

    def _restore_animation(self):
        arm = self.armature
        ad = arm.animation_data
        if ad is not None:
            if not self.had_animation_data:
                arm.animation_data_clear()
            else:
                compat.restore_assignment(arm, self.assignment)
                ad.use_nla = self.use_nla
        arm.data.pose_position = self.pose_position

    def _restore_visibility_and_selection(self):
        vl, arm = self.view_layer, self.armature
        for o in vl.objects:
            if o is not None and o.select_get(view_layer=vl):
                o.select_set(False, view_layer=vl)
        arm.hide_viewport = self.hide_viewport
        arm.hide_set(self.hidden, view_layer=vl)
        for name in self.selected:
            o = vl.objects.get(name)
            if o is not None:
                o.select_set(True, view_layer=vl)
        arm.hide_select = self.hide_select
        active = vl.objects.get(self.active) if self.active else None
        vl.objects.active = active
        if self.mode != "OBJECT" and active is not None and bpy.ops.object.mode_set.poll():
            bpy.ops.object.mode_set(mode=self.mode)

    def _restore_frames(self):
        scene = self.scene
        scene.frame_start, scene.frame_end = self.frame_range
        scene.frame_set(self.frame[0], subframe=self.frame[1])
