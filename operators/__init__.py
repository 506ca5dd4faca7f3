"""Operators: one module per user job. Each checks its input, calls the
Blender-side bridge and core, and reports."""

from . import (bake, controller, database, export_baked, import_bvh, preview, retarget, tags, tpose,
               virtual_root)

MODULES = (import_bvh, virtual_root, tpose, database, tags, retarget, controller, bake, preview, export_baked)
CLASSES = tuple(cls for module in MODULES for cls in module.CLASSES)
