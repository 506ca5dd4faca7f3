"""Test set-up shared by every test.

Blender's user directory must be chosen before bpy is first imported, so it is
set here, when pytest loads this file. Pure core tests never import bpy.
"""

import os
import shutil
import sys
import tempfile

from tools import addon_session

# A temporary HOME for the whole run (subprocesses inherit it): Blender's
# config folder under it must stay empty, which shows that nothing (the
# command line, the demo, a test) starts Blender on the user's real profile.
_HOME = {}
if "bpy" not in sys.modules:
    _HOME["path"] = tempfile.mkdtemp(prefix="mm_test_home_")
    os.environ["HOME"] = _HOME["path"]
    os.environ["XDG_CONFIG_HOME"] = os.path.join(_HOME["path"], ".config")
    os.environ["APPDATA"] = os.path.join(_HOME["path"], "AppData", "Roaming")   # Windows
    addon_session.prepare_user_dir()


def _blender_config_written():
    """Blender's user config folders under the temporary HOME that hold anything."""
    home = _HOME["path"]
    folders = (os.path.join(home, ".config", "blender"),                              # Linux
               os.path.join(home, "Library", "Application Support", "Blender"),       # macOS
               os.path.join(home, "AppData", "Roaming", "Blender Foundation"))        # Windows
    return [f for f in folders if os.path.isdir(f) and os.listdir(f)]


_EXIT = {}


def pytest_sessionfinish(session, exitstatus):
    if _HOME and _blender_config_written():
        sys.stderr.write("\nFAILED: something wrote into Blender's user config folder of the (temporary) HOME: %s\n"
                         % ", ".join(_blender_config_written()))
        session.exitstatus = exitstatus = 1
    _EXIT["status"] = int(exitstatus)


def pytest_unconfigure(config):
    """Leave a process that loaded Blender without its interpreter teardown.

    The add-on is disabled by the session fixture before this runs. Blender 4.2's
    bpy module crashes while Python shuts down once its glTF exporter has run
    (a plain export of an Empty is enough); everything is reported by now, so the
    process ends here with pytest's own status."""
    if _HOME:
        shutil.rmtree(_HOME["path"], ignore_errors=True)
    if "bpy" in sys.modules and "status" in _EXIT:
        # The throw-away user folder, and Blender's session folder, which
        # os._exit would leave in the temp directory.
        addon_session.finish(blender_temp=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])
    addon_session.finish()
