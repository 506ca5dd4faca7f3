"""The top view of a bake (the add-on's cli/top_view.py, also `bake --top-view` and the
demo): a PNG of the requested size with the wanted path and the hips path drawn
where they are, footprints and slide streaks from planted stretches, and the
user's scene left as it was."""

import bpy
import numpy as np

from tools import addon_session


def _pixels(path):
    img = bpy.data.images.load(path)
    try:
        w, h = img.size
        px = np.empty(w * h * 4, dtype=np.float32)
        img.pixels.foreach_get(px)
    finally:
        bpy.data.images.remove(img)
    return (w, h), px.reshape(h, w, 4)[..., :3]


def test_top_view_draws_the_paths_where_they_are(take_on_path, bake, tmp_path):
    take, ctrl = take_on_path()
    scene = bpy.context.scene
    scene.frame_end = scene.frame_start + 71          # a short bake: 3 s
    bake()
    names = {k: {b.as_pointer() for b in getattr(bpy.data, k)} for k in ("objects", "meshes", "curves", "scenes")}
    out = str(tmp_path / "sub" / "top.png")
    facts = addon_session.addon_module("cli.top_view").render_top_view(out, take, ctrl, size=(200, 150))
    # Nothing stays behind.
    for kind, had in names.items():
        assert {b.as_pointer() for b in getattr(bpy.data, kind)} == had, kind
    assert bpy.context.scene == scene
    size, rgb = _pixels(out)
    assert size == (200, 150)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    blue = (b > 0.8) & (b - r > 0.3)
    orange = (r > 0.85) & (g > 0.6) & (r - b > 0.4)
    grey = (np.abs(r - g) < 0.03) & (np.abs(g - b) < 0.03)
    assert blue.sum() > 20 and orange.sum() > 20
    assert grey.mean() > 0.5                           # the floor is most of the picture
    # Every wanted-path point lands on drawn (not floor) pixels.
    view = facts["view"]
    w, h = size
    xy = (facts["path"][:, :2] - view["centre"]) / view["width_m"] * w
    cols = np.clip(np.round(xy[:, 0] + w / 2).astype(int), 1, w - 2)
    rows = np.clip(np.round(xy[:, 1] + h / 2).astype(int), 1, h - 2)
    drawn = ~grey
    near = np.zeros(len(cols), dtype=bool)
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            near |= drawn[rows + dr, cols + dc]
    assert near.all(), np.flatnonzero(~near)
    # Footprints for both feet.
    assert {p["side"] for p in facts["plants"]} == {0, 1}


def test_plants_find_stretches_and_slides():
    """Planted stretches per foot; a foot that moves 5 cm while planted is a
    slide from where it planted to where it lifted, one that moves 1 cm is not."""
    T = 10
    ankles = np.zeros((T, 2, 3))
    toes = ankles + [0.0, -0.15, 0.0]
    flags = np.zeros((T, 2), dtype=bool)
    flags[1:4, 0] = True                                 # left: still
    flags[5:9, 1] = True                                 # right: slides 5 cm
    ankles[5:9, 1, 0] = np.linspace(0.0, 0.05, 4)
    ankles[2, 0, 0] = 0.01
    out = addon_session.addon_module("cli.top_view").plants(flags, ankles, toes)
    assert [(p["side"], p["first"], p["last"], p["slid"]) for p in out] == [(0, 1, 3, False), (1, 5, 8, True)]
    assert abs(out[1]["slide_m"] - 0.05) < 1e-9
    assert np.allclose(out[1]["lifted"], [0.05, 0.0, 0.0])
