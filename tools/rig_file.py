"""Write one of :mod:`tools.rigs`' characters to a .glb or .fbx file in a new
Python process that does nothing else.

Blender 4.2's glTF exporter, run in a bpy process that has already opened and
closed other files, sometimes crashes while it switches the window's scene; a
process that only builds the character and exports it starts from a clean
state every time. The files are cached per process by what they hold.

The new process runs :mod:`tools.rig_export` (this module imports nothing of
tools.rigs, which imports it). Developer tool, not part of the extension.
"""

import os

from tools import addon_session

_WRITTEN = {}   # (format, name, pose, axis) -> a file this process had written


def write(fmt, folder, name, pose="T", axis="Y"):
    """The path of a ``fmt`` ("glb" or "fbx") file holding the character
    ``name`` (built in ``pose``; FBX joints with ``axis`` along the bone),
    written into ``folder`` by a new process unless this process already has one."""
    key = (fmt, name, pose, axis)
    path = _WRITTEN.get(key)
    if path and os.path.isfile(path):
        return path
    stem = "".join(c if c.isalnum() else "_" for c in "%s_%s_%s_%s" % key)
    path = os.path.join(folder, stem + "." + fmt)
    addon_session.write_in_new_process("tools.rig_export", [fmt, path, name, pose, axis], path, "the character", 300)
    _WRITTEN[key] = path
    return path
