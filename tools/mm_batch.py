"""``blender -b -c motion_matching batch ...`` for a checkout of the repository,
with the bpy module of the set-up command (README), from the repository root:

    python -m tools.mm_batch MANIFEST --out DIR [--jobs N] [--entries 1-4,7] [--keep-going]
        [--database-only | --summary-only | --count]

The same options, files and exit status as the extension's own command (the
add-on's cli/batch.py); each entry is baked in a bpy process of its own that
uses the same throw-away user folder (see tools/mm_cli.py).
"""

import sys

if not __package__:
    sys.exit("motion_matching: run it from the repository root as python -m tools.mm_batch, "
             "or use blender -b -c motion_matching batch inside Blender.")

from tools import addon_session  # noqa: E402


def main(argv=None):
    return addon_session.run_command(["batch", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    addon_session.exit_now(main())
