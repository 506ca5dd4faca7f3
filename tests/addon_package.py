"""The repository imported as the add-on's package, without Blender, for the
tests of modules that use relative imports above their own package (cli/):
``addon("cli.bake_args")`` is that module as the extension has it, its
``..core`` imports included. Only the modules asked for are loaded; the
package's ``__init__`` imports no Blender module."""

import importlib
import importlib.util
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "motion_matching_checkout"


def addon(module):
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(NAME, os.path.join(REPO, "__init__.py"),
                                                      submodule_search_locations=[REPO])
        package = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = package
        spec.loader.exec_module(package)
    return importlib.import_module(NAME + "." + module)
