"""Small readers and writers of the file's data that several jobs share: the
scene's frame rate and the report text blocks."""

import bpy


def scene_fps(scene):
    """Frames per second of the scene (fps / fps_base, e.g. 29.97)."""
    return scene.render.fps / scene.render.fps_base


def write_text(name, text):
    """Put ``text`` in the text block ``name`` (made if missing, replaced if there)."""
    block = bpy.data.texts.get(name) or bpy.data.texts.new(name)
    block.clear()
    block.write(text)
    return block
