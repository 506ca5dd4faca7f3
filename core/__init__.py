"""The numbers of the add-on: numpy and the standard library only.

Nothing in this package imports bpy or mathutils. Every function takes arrays and
returns arrays; failures raise subclasses of :class:`core.errors.MotionMatchingError`
with a sentence a user can act on.

Conventions shared by every module here (they are Blender's):
- right-handed, Z up, a character faces -Y;
- quaternions are ``(w, x, y, z)`` in the last axis;
- matrices act on column vectors, ``(..., 3, 3)`` or ``(..., 4, 4)``;
- frames run along the first axis, joints along the second.
"""
