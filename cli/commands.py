"""The commands of ``blender -b -c motion_matching``: ``bake``, ``build`` and
``batch``, and the help. Each failure is one line ``motion_matching: <sentence>``
on stderr and status 1; anything unforeseen too (with the traceback only when
MM_CLI_TRACEBACK is set)."""

import os
import sys

from ..bridge.child_process import COMMAND
from .bake_args import Failure

USAGE = """usage: blender -b -c motion_matching COMMAND [options]

commands:
  bake    bake motion matching along a path (onto the takes' skeleton or --character); --out DIR
  build   only build the takes' database and write it (--save-database FILE.npz)
  batch   many bakes from a manifest, each in a Blender process of its own (MANIFEST --out DIR)

'blender -b -c motion_matching COMMAND --help' lists a command's options.
"""


def say(message):
    print("%s: %s" % (COMMAND, message), file=sys.stderr)


def main(argv):
    """Run one command line; returns the exit status (0 done, 1 failed)."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE, end="")
        if not argv:
            say("give a command: bake, build or batch.")
        return 0 if argv else 1
    name, rest = argv[0], argv[1:]
    if name not in ("bake", "build", "batch", "crowd-pairs"):   # crowd-pairs: Bake All's own, not in USAGE
        say("unknown command %r: give bake, build or batch (--help lists them)." % name)
        return 1
    try:
        return _run(name, rest)
    except SystemExit as ex:   # argparse's --help ends with SystemExit(0)
        return ex.code if isinstance(ex.code, int) else 0
    except Failure as ex:
        say(ex)
    except Exception as ex:  # noqa: BLE001  (anything unforeseen is still one line and status 1)
        if os.environ.get("MM_CLI_TRACEBACK"):
            import traceback

            traceback.print_exc()
        text = str(ex).strip()
        say("unexpected error, nothing more was done (%s: %s); set MM_CLI_TRACEBACK=1 to see where."
            % (type(ex).__name__, text.splitlines()[0] if text else "no message"))
    return 1


def _run(name, argv):
    if name == "crowd-pairs":
        from . import crowd_worker

        return crowd_worker.main(argv)
    if name == "batch":
        from . import batch

        return batch.main(argv)
    from . import bake_args

    args = bake_args.parse(argv, name)   # checked before Blender's side is loaded
    from . import bake

    bake.run(args)
    return 0
