"""The Blender side of the data: property groups, reading and writing
animation in bulk, the version compatibility layer, registration."""
