"""Write a BVH take to a .fbx or .glb file with Blender's own exporters, in a
new Python process that does nothing else (Blender 4.2's glTF exporter can
crash in a process that opened other files, see tools/rig_file.py).

The take is read with Blender's BVH importer (Scale FPS off, the scene set to
the take's rate) and written with the exporter's defaults: FBX with the
armature only and its baked animation (leaf bones added, as by default), glTF
as a .glb with its animation. Run as
``python -m tools.take_file FORMAT BVH SCALE PATH`` from the repository root
(:func:`write` does that). Developer tool, not part of the extension.
"""

import sys

from tools import addon_session


def write(fmt, bvh, scale, path):
    """Write ``bvh`` (scaled by ``scale``) as ``fmt`` ("fbx" or "glb") to ``path``
    in a new process; returns ``path``."""
    return addon_session.write_in_new_process("tools.take_file", [fmt, bvh, repr(scale), path], path, "the take")


def export(fmt, path):
    """Export the scene's armature with the exporter's defaults."""
    import bpy

    if fmt == "fbx":
        result = bpy.ops.export_scene.fbx(filepath=path, object_types={"ARMATURE"}, bake_anim_simplify_factor=0.0)
    else:
        window = bpy.context.window_manager.windows[0]
        with bpy.context.temp_override(window=window, screen=window.screen, scene=bpy.context.scene):
            result = bpy.ops.export_scene.gltf(filepath=path, export_format="GLB")
    if result != {"FINISHED"}:
        raise RuntimeError("%s export failed: %s" % (fmt, result))


def main(argv):
    fmt, bvh, scale, path = argv

    def work():
        import bpy

        result = bpy.ops.import_anim.bvh(filepath=bvh, global_scale=float(scale), update_scene_fps=True,
                                         update_scene_duration=True, rotate_mode="QUATERNION")
        if result != {"FINISHED"}:
            raise RuntimeError("BVH import failed: %s" % result)
        # The file's Frame Time is rounded (0.016667): keep the whole rate, as the
        # add-on's importer does, so that the exported keys fall on whole frames.
        scene = bpy.context.scene
        fps = scene.render.fps / scene.render.fps_base
        if abs(fps - round(fps)) <= 1e-4 * fps:
            scene.render.fps, scene.render.fps_base = int(round(fps)), 1.0
        export(fmt, path)

    addon_session.run_alone(work)


if __name__ == "__main__":
    main(sys.argv[1:])
