"""Test set-up shared by every test.

Blender's user directory must be chosen before bpy is first imported, so it is
set here, when pytest loads this file. Pure core tests never import bpy.
"""

import os
import sys

from tools import addon_session

if "bpy" not in sys.modules:
    addon_session.prepare_user_dir()


_EXIT = {}


def pytest_sessionfinish(session, exitstatus):
    _EXIT["status"] = int(exitstatus)


def pytest_unconfigure(config):
    """Leave a process that loaded Blender without its interpreter teardown.

    The add-on is disabled by the session fixture before this runs. Blender 4.2's
    bpy module crashes while Python shuts down once its glTF exporter has run
    (a plain export of an Empty is enough); everything is reported by now, so the
    process ends here with pytest's own status."""
    if "bpy" in sys.modules and "status" in _EXIT:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])
