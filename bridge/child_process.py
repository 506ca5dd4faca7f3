"""The command line of a Blender process of its own running a command of this
extension: ``blender -b -c motion_matching ARGS`` with the Blender that runs
now, so the child loads the same preferences and enabled extensions. The
batch's entries (``cli.child``) and Bake All's other processes start it.

Blender as a Python module (the bpy wheel: tests, a checkout's wrappers) has no
Blender program to start; there the child is that Python, importing bpy with
the same user folder (the environment is inherited), enabling this extension
and calling the command as Blender would.
"""

import sys

COMMAND = "motion_matching"

# The body of a bpy-module child: python -c BODY MODULE ARGS...
_BPY_MODULE_CHILD = """\
import os, shutil, sys
import bpy
module = sys.argv[1]
code = 1
try:
    bpy.ops.preferences.addon_enable(module=module)
    code = sys.modules[module + ".cli"].execute(sys.argv[2:])
finally:
    try:
        bpy.ops.preferences.addon_disable(module=module)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Blender removes its session folder when it quits; this process ends at once.
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
        os._exit(code)
"""


def addon_module():
    """The extension's module name (e.g. bl_ext.user_default.motion_matching)."""
    return __package__.rpartition(".")[0]


def command(argv):
    """The command line that runs ``blender -b -c motion_matching argv``."""
    import bpy

    if bpy.app.binary_path:
        return [bpy.app.binary_path, "-b", "-c", COMMAND, *argv]
    return [sys.executable, "-c", _BPY_MODULE_CHILD, addon_module(), *argv]
