"""The live preview follows edits: after each kind of edit and one frame change
(and the timer's slices, which background Blender does not run by itself), the
previewed pose is a freshly started preview's and the bake's."""

import bpy
import numpy as np

import bl_helpers as H
from tools import scene_curves

FRAMES = (1, 60, 131, 200, 290)


def _pose_matrices(obj, names):
    bpy.context.view_layer.update()
    return np.array([np.array(obj.matrix_world @ obj.pose.bones[n].matrix) for n in names])


def _poses(obj, frames):
    scene = bpy.context.scene
    names = [b.name for b in obj.data.bones]
    out = {}
    for f in frames:
        scene.frame_set(f)
        out[f] = _pose_matrices(obj, names)
    return out


def _followed(scene):
    """One frame change, then the timer's slices to the end (Blender runs them between events)."""
    follow = H.addon_module("bridge.preview.follow")
    scene.frame_set(scene.frame_current + 1)
    assert follow.status(scene) is not None          # "updating...": the pose shown is stale
    follow.finish_pending()
    assert follow.status(scene) is None and not follow.pending()


def _check_follows(obj, frames=FRAMES, moved=True):
    """The followed preview equals a fresh preview (pose matrices, 0.1 mm) and
    the bake's keys; returns the poses."""
    scene = bpy.context.scene
    preview = H.addon_module("bridge.preview.preview")
    bake_job = H.addon_module("bridge.bake.bake_job")
    bake_props = H.addon_module("bridge.blender.bake_settings")
    pipeline = H.addon_module("core.bake.pipeline")
    followed = _poses(obj, frames)
    shown = {f: preview.pose_at(scene, f) for f in frames}
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    fresh = _poses(obj, frames)
    for f in frames:
        assert np.abs(followed[f] - fresh[f]).max() < 1e-4, f
    job = bake_job.start(bpy.context, bake_props.to_core(scene.motion_matching.bake_settings))
    output = pipeline.run_to_end(job.steps)
    for f in frames:
        i = int(np.flatnonzero(output.frames == f)[0])
        # Bit for bit: the preview searched again only from the edit on, the bake from the start.
        assert np.array_equal(shown[f][0], output.locations[i]) and np.array_equal(shown[f][1], output.rotations[i]), f
    return followed


def _moved(before, after):
    return max(np.abs(before[f] - after[f]).max() for f in before)


def test_preview_follows_settings_keys_database_and_tag_query(take_on_path):
    obj, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    mm = scene.motion_matching
    compat = H.addon_module("bridge.blender.compat")
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    before = _poses(obj, FRAMES)
    # No edit: a frame change asks for nothing.
    scene.frame_set(10)
    assert not H.addon_module("bridge.preview.follow").pending()
    # Bake settings.
    knobs = mm.bake_settings
    knobs.search_interval = 0.5
    knobs.use_foot_lock = False
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    # The controller's keys: the second half of the path 0.5 m to the side.
    before = after
    for fc in compat.fcurves(ctrl.animation_data.action, ctrl):
        if fc.data_path == "location" and fc.array_index == 0:
            co = compat.read_curve(fc, ("co",))["co"]
            co[co[:, 0] > 150, 1] += 0.5
            fc.keyframe_points.foreach_set("co", co.astype(np.float32).ravel())
            fc.update()
    old = H.addon_module("bridge.preview.preview").simulation_result(scene).trace
    _followed(scene)
    # Searched again from a state kept before the edit's reach, not from the start.
    new = H.addon_module("bridge.preview.preview").simulation_result(scene).trace
    kept = H.addon_module("core.bake.resume").resume_from(old, new.settings, new.db, new.allowed, new.playable,
                                                         new.inputs)
    assert kept is not None and kept[0].s > 0
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    # The database rebuilt, with tags on the take; then a tag query.
    before = after
    take = mm.preview_action
    for name, a, b in (("walk", 1, 2100), ("run", 2500, 3600)):
        tag = take.motion_matching.tags.add()
        tag.name, tag.frame_start, tag.frame_end = name, a, b
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    before = after
    mm.tag_query = "run"
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    # At the end the bake operator keys what the preview showed.
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    baked = _poses(obj, FRAMES)
    for f in FRAMES:
        assert np.abs(baked[f] - after[f]).max() < 1e-4, f


def _curve(points=((0, 0, 0), (4, -3, 0), (8, 1, 0), (12, -2, 0))):
    return scene_curves.bezier_curve("Path", points, select=True)


def test_preview_follows_the_curve_its_transform_and_the_timing(take_on_path):
    obj, _scenario = take_on_path(fps=24)
    scene = bpy.context.scene
    mm = scene.motion_matching
    compat = H.addon_module("bridge.blender.compat")
    curve = _curve()
    assert bpy.ops.motion_matching.add_controller(frame_start=1, speed_keys="1:1.2, 120:2.5",
                                                  stops="150:1.0") == {"FINISHED"}
    ctrl = bpy.context.active_object
    mm.controller = ctrl
    scene.frame_end = 300
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    before = _poses(obj, FRAMES)
    follow = H.addon_module("bridge.preview.follow")
    assert not follow.pending()
    # A check with nothing changed keeps the simulation.
    follow.wants_check(scene)
    shown = H.addon_module("bridge.preview.preview").inputs_of(scene)
    follow.finish_pending()
    assert H.addon_module("bridge.preview.preview").inputs_of(scene) is shown
    # A point of the curve and its handles (edit mode tags the curve for an update; so does update_tag).
    bp = curve.data.splines[0].bezier_points[2]
    bp.co.y += 1.5
    bp.handle_left.y += 1.5
    bp.handle_right.y += 1.5
    curve.data.update_tag()
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    # The curve's transform.
    before = after
    curve.scale = (1.3, 1.3, 1.3)
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
    # The timing: the speed keys and the stop slid 20 frames later.
    before = after
    fc = compat.fcurves(ctrl.animation_data.action, ctrl)[0]
    keys = compat.read_curve(fc)
    for name in ("co", "handle_left", "handle_right"):
        values = keys[name].copy()
        values[1:, 0] += 20.0
        fc.keyframe_points.foreach_set(name, values.astype(np.float32).ravel())
    fc.update()
    _followed(scene)
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3


def test_undo_and_redo_of_an_edit_update_the_preview(take_on_path):
    """The preview is no undo step of its own; undoing an edit made while
    previewing shows the pose from before the edit, redo the edited one."""
    assert "UNDO" not in bpy.types.MOTION_MATCHING_OT_toggle_preview.bl_options
    obj, _ctrl = take_on_path(fps=24)
    name = obj.name
    scene = bpy.context.scene
    follow = H.addon_module("bridge.preview.follow")
    frames = (40, 150, 260)
    win = bpy.context.window_manager.windows[0]
    with bpy.context.temp_override(window=win, screen=win.screen, area=win.screen.areas[0]):
        assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
        bpy.ops.ed.undo_push(message="before")
        before = _poses(obj, frames)
        scene.motion_matching.bake_settings.search_interval = 0.5
        bpy.ops.ed.undo_push(message="search interval")
        _followed(scene)
        edited = _poses(obj, frames)
        assert _moved(before, edited) > 1e-3
        assert bpy.ops.ed.undo() == {"FINISHED"}
        scene = bpy.context.scene
        assert scene.motion_matching.preview_active and follow.pending()
        follow.finish_pending()
        obj = bpy.data.objects[name]
        assert scene.motion_matching.bake_settings.search_interval != 0.5
        assert _moved(before, _poses(obj, frames)) < 1e-4
        assert bpy.ops.ed.redo() == {"FINISHED"}
        follow.finish_pending()
        obj = bpy.data.objects[name]
        assert _moved(edited, _poses(obj, frames)) < 1e-4


def test_a_refused_update_keeps_the_pose_and_says_why(take_on_path):
    obj, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    follow = H.addon_module("bridge.preview.follow")
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    before = _poses(obj, FRAMES)
    scene.motion_matching.tag_query = "nosuchtag"
    scene.frame_set(2)
    follow.finish_pending()
    assert "nosuchtag" in follow.status(scene)
    assert _moved(before, _poses(obj, FRAMES)) == 0.0
    assert "nosuchtag" in follow.status(scene)
    # Mended: the message goes at the next frame change, and the pose is the one simulated.
    scene.motion_matching.tag_query = ""
    scene.frame_set(3)
    assert follow.status(scene) is None and not follow.pending()
    assert _moved(before, _poses(obj, FRAMES)) < 1e-4


def test_choosing_another_armature_moves_the_preview_to_it(take_on_path):
    """The preview poses the armature chosen: the one it leaves plays its action again."""
    from sample_paths import SAMPLE_TAKE

    obj, _ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    mm = scene.motion_matching
    take = obj.animation_data.action
    other = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    other.location = (2.0, 0.0, 0.0)
    other_take = other.animation_data.action
    mm.bake_armature = obj
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert obj.animation_data.action is None
    mm.bake_armature = other
    _followed(scene)
    assert mm.preview_armature == other and other.animation_data.action is None
    assert obj.animation_data.action == take
    _check_follows(other)
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert other.animation_data.action == other_take and obj.animation_data.action == take


class _Layout:
    """Stands in for UILayout: keeps the labels drawn."""

    def __init__(self, labels):
        self.labels = labels

    def label(self, text="", **_kw):
        self.labels.append(text)

    def operator(self, *_args, **_kw):
        return None


def _panel_labels():
    labels = []
    panel = bpy.types.MOTION_MATCHING_PT_preview
    panel.draw(type("PanelStandIn", (), {"layout": _Layout(labels)})(), bpy.context)
    return labels


def test_the_preview_panel_says_updating_until_the_new_pose_is_shown(take_on_path):
    _obj, _ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    follow = H.addon_module("bridge.preview.follow")
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert not any("updating" in t for t in _panel_labels())
    scene.motion_matching.bake_settings.search_interval = 0.4
    scene.frame_set(5)
    assert any(t.startswith("Preview updating...") for t in _panel_labels())
    follow.finish_pending()
    assert not any("updating" in t for t in _panel_labels())


def test_an_edit_near_the_end_goes_on_from_the_kept_foot_lock_and_equals_the_bake(take_on_path):
    obj, ctrl = take_on_path(fps=24)
    scene = bpy.context.scene
    compat = H.addon_module("bridge.blender.compat")
    preview = H.addon_module("bridge.preview.preview")
    assert scene.motion_matching.bake_settings.use_foot_lock
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    before = _poses(obj, FRAMES)
    old = preview.simulation_result(scene).trace
    for fc in compat.fcurves(ctrl.animation_data.action, ctrl):
        if fc.data_path == "location" and fc.array_index == 1:
            co = compat.read_curve(fc, ("co",))["co"]
            co[co[:, 0] > 250, 1] += 0.4
            fc.keyframe_points.foreach_set("co", co.astype(np.float32).ravel())
            fc.update()
    _followed(scene)
    new = preview.simulation_result(scene).trace
    # Each foot's lock went on from the last state the first simulation kept
    # before the lock's first changed input (the ones before are the first's own).
    first_change = H.addon_module("core.bake.resume").first_change
    for side in (0, 1):
        was, now = old.legs["locks"][side], new.legs["locks"][side]
        reused = [k for k in was.states if k[0] <= first_change(was.inputs, now.inputs)][:-1]
        assert all(a is b for a, b in zip(reused, now.states)) and now.states[len(reused)] is not was.states[len(reused)]
    after = _check_follows(obj)
    assert _moved(before, after) > 1e-3
