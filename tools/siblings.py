"""Load a module of tools/ by file, so the scripts here run from any folder,
with the bpy module or inside Blender, without changing sys.path."""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    """The module tools/<name>.py (loaded once per process)."""
    key = "mm_tools_" + name
    if key in sys.modules:
        return sys.modules[key]
    if "tools." + name in sys.modules:   # already imported as a package (tests)
        return sys.modules["tools." + name]
    spec = importlib.util.spec_from_file_location(key, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
