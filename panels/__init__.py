"""Panels in the 3D Viewport sidebar, tab "Motion Matching": UI only."""

from . import import_panel

CLASSES = import_panel.CLASSES
