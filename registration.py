"""Register the add-on: property groups, operators and panels (each module
lists its own ``classes``), then the handlers, the import menu entry and the
command line (``blender -c motion_matching``); unregister in reverse. The one module that may import every layer."""

import bpy

from . import cli
from .bridge.blender import bake_settings, retarget_props
from .bridge.database import handlers, properties
from .bridge.preview import preview, follow as preview_follow
from .operators import (
    bake,
    controller,
    crowd,
    database,
    export_baked,
    import_bvh,
    retarget,
    tags,
    tpose,
    virtual_root,
)
from .operators import preview as preview_operator
from .panels import bake_panel, crowd_panel, database_panel, import_panel, retarget_panel

# In dependency order: a property group before the groups that point to it.
MODULES = (
    retarget_props, bake_settings, properties,
    import_bvh, virtual_root, tpose, database, tags, retarget, controller, bake, crowd, preview_operator, export_baked,
    import_panel, database_panel, retarget_panel, bake_panel, crowd_panel,
)
CLASSES = tuple(cls for module in MODULES for cls in module.classes)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    properties.attach()
    handlers.register()
    preview.register()
    preview_follow.register()
    bpy.types.TOPBAR_MT_file_import.append(import_bvh.menu_import)
    cli.register()


def unregister():
    cli.unregister()
    bpy.types.TOPBAR_MT_file_import.remove(import_bvh.menu_import)
    preview_follow.unregister()
    preview.unregister()
    handlers.unregister()
    properties.detach()
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
