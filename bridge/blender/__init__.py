"""What every bridge job shares about Blender: the version compatibility layer
(compat), reading and writing animation in bulk (armature_data), the scene's
frame rate and report texts (scene_data), and the property groups that stand
on their own (bake_settings, retarget_props). Imports no other bridge package."""
