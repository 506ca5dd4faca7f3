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

import os
import subprocess
import sys

from tools import addon_session

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(fmt, bvh, scale, path):
    """Write ``bvh`` (scaled by ``scale``) as ``fmt`` ("fbx" or "glb") to ``path``
    in a new process; returns ``path``."""
    proc = subprocess.run([sys.executable, "-m", "tools.take_file", fmt, bvh, repr(scale), path],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not os.path.isfile(path):
        raise RuntimeError("writing the take to %s failed:\n%s%s" % (path, proc.stdout[-2000:], proc.stderr[-2000:]))
    return path


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
    addon_session.prepare_user_dir()
    status = 1
    try:
        import bpy

        bpy.ops.wm.read_factory_settings(use_empty=True)
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
        status = 0
    finally:
        addon_session.finish(blender_temp=True)
        sys.stdout.flush()
        sys.stderr.flush()
        # Blender 4.2's bpy crashes while Python shuts down after a glTF export.
        os._exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
