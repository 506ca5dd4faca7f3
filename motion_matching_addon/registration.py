"""Register everything in dependency order; unregister in reverse."""

import bpy

from . import handlers, preview, properties
from .. import operators, panels
from ..operators import import_bvh

_CLASSES = properties.CLASSES + operators.CLASSES + panels.CLASSES


def register():
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.attach()
    handlers.register()
    preview.register()
    bpy.types.TOPBAR_MT_file_import.append(import_bvh.menu_import)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(import_bvh.menu_import)
    preview.unregister()
    handlers.unregister()
    properties.detach()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
