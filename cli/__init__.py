"""The extension's command line, registered with Blender as ``motion_matching``:

    blender -b -c motion_matching bake --bvh TAKES... --out DIR [options]
    blender -b -c motion_matching build --bvh TAKES... --save-database FILE.npz
    blender -b -c motion_matching batch MANIFEST --out DIR [--jobs N] [--entries 1-4,7]
    blender -b -c motion_matching --help

Blender calls :func:`execute` with the arguments after the command's name and
exits with the status it returns. bpy is imported only by what runs inside
Blender, so the argument checks (:mod:`.bake_args`, :mod:`.batch_manifest`)
load without it.
"""

from ..bridge.child_process import COMMAND  # noqa: E402,F401  (one spelling of the name)
_handles = []   # what register_cli_command returned, for unregister


def execute(argv):
    """Run one command line (a list of strings); returns the exit status."""
    from . import commands

    return commands.main(list(argv))


def register():
    import bpy

    _handles.append(bpy.utils.register_cli_command(COMMAND, execute))


def unregister():
    import bpy

    while _handles:
        bpy.utils.unregister_cli_command(_handles.pop())


def registered():
    """Is the command registered with Blender now?"""
    return bool(_handles)
