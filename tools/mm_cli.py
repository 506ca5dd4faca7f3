"""``blender -b -c motion_matching bake ...`` for a checkout of the repository,
with the bpy module of the set-up command (README), from the repository root:

    python -m tools.mm_cli --bvh samples/jl_mm_run.bvh --scale 0.01 --scenario showcase --fps 24 --out out/run

The same options, output, files and exit status as the extension's own command
(the add-on's cli/ package): the extension zip is built with Blender's tool and
installed into a throw-away user folder made before bpy is imported, the
registered command runs, and the folder (and Blender's session folder) is
removed at the end, also on failure. ``--help`` lists the options.
"""

import sys

if not __package__:
    sys.exit("motion_matching: run it from the repository root as python -m tools.mm_cli, "
             "or use blender -b -c motion_matching bake inside Blender.")

from tools import addon_session  # noqa: E402


def main(argv=None):
    return addon_session.run_command(["bake", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    addon_session.exit_now(main())
