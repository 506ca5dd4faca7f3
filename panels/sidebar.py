"""What every panel of the add-on shares: its place in the 3D Viewport's
sidebar, on the "Motion Matching" tab."""

CATEGORY = "Motion Matching"


class SidebarPanel:
    """Mixin for the add-on's panels: ``class X(SidebarPanel, bpy.types.Panel)``."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = CATEGORY
