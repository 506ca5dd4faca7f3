"""The Blender side of the data: property groups, reading and writing
animation in bulk, the version compatibility layer, storage, and the bridges
that take a job from the scene to core and back (bake, database, tags,
retarget, preview, export). Imports core and itself only."""
