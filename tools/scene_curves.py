"""Bezier curves made in the open scene, for the tests, the benches and the
demo's paths: points given, handles automatic."""


def bezier_curve(name="Path", points=((0, 0, 0), (4, -3, 0), (8, 1, 0), (12, -2, 0)), select=False):
    """A new 3D Bezier curve object ``name`` through ``points`` (automatic
    handles), linked to the scene's collection; made the only selected and
    active object when ``select``."""
    import bpy

    data = bpy.data.curves.new(name, "CURVE")
    data.dimensions = "3D"
    spline = data.splines.new("BEZIER")
    spline.bezier_points.add(len(points) - 1)
    for bp, co in zip(spline.bezier_points, points):
        bp.co = co
        bp.handle_left_type = bp.handle_right_type = "AUTO"
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    if select:
        for other in bpy.context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        bpy.context.view_layer.objects.active = obj
    return obj
