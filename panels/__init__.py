"""Panels in the 3D Viewport sidebar, tab "Motion Matching": UI only."""

from . import bake_panel, database_panel, import_panel, retarget_panel

CLASSES = import_panel.CLASSES + database_panel.CLASSES + retarget_panel.CLASSES + bake_panel.CLASSES
