"""Test set-up shared by every test.

Blender's user directory must be chosen before bpy is first imported, so it is
set here, when pytest loads this file. Pure core tests never import bpy.
"""

import sys

from tools import addon_session

if "bpy" not in sys.modules:
    addon_session.prepare_user_dir()
