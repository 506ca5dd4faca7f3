"""A command of this extension run in a Blender process of its own (the
batch's entries): the command line is :mod:`bridge.child_process`'s (the one
Bake All's other processes use too); here it is run and waited for."""

import os
import subprocess

from ..bridge.child_process import COMMAND, addon_module, command  # noqa: F401  (COMMAND, addon_module: for callers)


def run(argv):
    """Run it and wait; returns the finished process (text stdout and stderr)."""
    return subprocess.run(command(argv), capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=dict(os.environ))
