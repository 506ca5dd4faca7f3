"""Moves along the timeline on the sample take with its dance card: a scenario
walk, run, walk; the same moves from the scenario file, the controller's list
and timeline markers give the same keys; a move naming no tag is refused with
nothing written."""

import json
import os

import bpy
import numpy as np
import pytest

import bl_helpers as H
from sample_paths import SAMPLE_TAKE, SAMPLES
from test_preview_follow import _followed, _pose_matrices
from tools import key_digest, path_measure

FPS = 30
# Walk 4 s, run 4 s, walk 4 s: the query changes with the speed asked.
POINTS = [(0, 0.0, "walk"), (1, -0.6, None), (2, -1.8, None), (4, -4.2, "run"), (5, -6.5, None), (8, -15.5, "walk"),
          (9, -17.3, None), (12, -20.9, None)]
MOVES = [(1.0, "walk"), (121.0, "run"), (241.0, "walk")]


@pytest.fixture
def tagged_scene(tmp_path):
    return _tagged_scene(tmp_path, POINTS)


def _tagged_scene(tmp_path, scenario_points):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.import_dance_card(filepath=os.path.join(SAMPLES, "jl_mm_dance_card.toml")) \
        == {"FINISHED"}
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.motion_matching.auto_tag() == {"FINISHED"}
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    path = tmp_path / "walk_run_walk.json"
    points = []
    for t, y, query in scenario_points:
        points.append({"t": t, "x": 0.0, "y": y, **({"query": query} if query is not None else {})})
    path.write_text(json.dumps({"name": "walk_run_walk", "points": points}))
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="FILE", filepath=str(path),
                                                           update_scene_range=True) == {"FINISHED"}
    ctrl = bpy.context.active_object
    scene.motion_matching.controller = ctrl
    scene.motion_matching.bake_armature = obj
    return obj, ctrl, obj.animation_data.action


def _bake_keys(obj, raw_action):
    compat = path_measure.addon("bridge.blender.compat")
    compat.assign_action(obj, raw_action)
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    keys = key_digest.action_keys(obj.animation_data.action)
    compat.assign_action(obj, raw_action)
    return keys


def test_each_stretch_plays_its_tag_and_every_source_of_moves_bakes_the_same(tagged_scene):
    obj, ctrl, raw_action = tagged_scene
    scene = bpy.context.scene
    assert [(m.frame, m.query) for m in ctrl.motion_matching.moves] == MOVES
    # Each stretch, beyond a second's transition, plays rows carrying its tag on most frames.
    bake = path_measure.addon("bridge.bake.bake")
    moves_mod = path_measure.addon("bridge.bake.moves")
    settings = path_measure.addon("bridge.blender.bake_settings").to_core(scene.motion_matching.bake_settings)
    out = bake.run(bpy.context, ctrl, obj, settings, moves=moves_mod.controller_moves(scene, ctrl))
    database = path_measure.addon("bridge.database.store").load(scene)
    selection = path_measure.addon("core.database.selection").QueryRows(database, settings)
    steps = out.result.rows
    frames = 1.0 + np.arange(len(steps)) * out.result.dt * FPS
    bounds = [m[0] for m in MOVES] + [scene.frame_end + 1]
    for (start, query), end in zip(MOVES, bounds[1:]):
        inside = (frames >= start + FPS) & (frames < end)
        share = selection.selected(query)[steps[inside]].mean()
        assert share > 0.8, (query, start, share)
    report = out.report.moves
    assert [(m["frame"], m["query"]) for m in report] == MOVES
    assert all(m["share"] > 0.6 for m in report), report
    # The scenario's moves, the controller's list typed in and timeline markers: the same keys.
    from_scenario = _bake_keys(obj, raw_action)
    ctrl.motion_matching.moves.clear()
    scene.frame_set(241)
    for frame, query in reversed(MOVES):
        assert bpy.ops.motion_matching.move_add(use_current_frame=False, frame=frame, query=query) == {"FINISHED"}
    assert [(m.frame, m.query) for m in ctrl.motion_matching.moves] == MOVES
    from_list = _bake_keys(obj, raw_action)
    ctrl.motion_matching.moves.clear()
    for frame, query in MOVES:
        scene.timeline_markers.new("mm: " + query, frame=int(frame))
    scene.timeline_markers.new("a marker of another kind", frame=60)
    from_markers = _bake_keys(obj, raw_action)
    assert key_digest.digest(from_scenario) == key_digest.digest(from_list) == key_digest.digest(from_markers)
    # The controller's own list wins over the markers.
    bpy.ops.motion_matching.move_add(use_current_frame=False, frame=1.0, query="walk")
    walk_only = _bake_keys(obj, raw_action)
    scene.motion_matching.tag_query = "walk"
    ctrl.motion_matching.moves.clear()
    scene.timeline_markers.clear()
    assert key_digest.digest(walk_only) == key_digest.digest(_bake_keys(obj, raw_action))
    assert key_digest.digest(walk_only) != key_digest.digest(from_list)


# Then stand where the path stops: walk, run, walk, idle.
STAND_POINTS = POINTS[:-1] + [(11, -20.3, None), (12, -20.9, "idle"), (15, -20.9, None)]


def test_walk_run_walk_stand_each_move_has_its_rows_by_its_frame_and_is_reported(tmp_path):
    """Each move's rows play from its frame on, at the latest by the lead-in's slack (the search
    anticipates the moves), and the report gives each move its sliding and tracking and no warning."""
    obj, ctrl, _raw = _tagged_scene(tmp_path, STAND_POINTS)
    scene = bpy.context.scene
    moves = MOVES + [(361.0, "idle")]
    assert [(m.frame, m.query) for m in ctrl.motion_matching.moves] == moves
    settings = path_measure.addon("bridge.blender.bake_settings").to_core(scene.motion_matching.bake_settings)
    out = path_measure.addon("bridge.bake.bake").run(
        bpy.context, ctrl, obj, settings, moves=path_measure.addon("bridge.bake.moves").controller_moves(scene, ctrl))
    database = path_measure.addon("bridge.database.store").load(scene)
    db_fps = 1.0 / out.result.dt
    slack = path_measure.addon("core.bake.moves_search").lead_slack(int(round(settings.look_ahead.seconds * db_fps)))
    window = int(np.ceil(slack * FPS / db_fps)) + 1     # scene frames; one more for the resampling
    selection = path_measure.addon("core.database.selection").QueryRows(database, settings)
    steps = out.result.rows
    frames = 1.0 + np.arange(len(steps)) * out.result.dt * FPS
    report = out.report.moves
    assert [(m["frame"], m["query"]) for m in report] == moves
    bounds = [m[0] for m in moves] + [scene.frame_end + 1]
    for entry, end in zip(report, bounds[1:]):
        assert entry["frame"] <= entry["on_tags_from"] <= entry["frame"] + window, entry
        inside = (frames >= entry["frame"] + window) & (frames < end)
        share = selection.selected(entry["query"])[steps[inside]].mean()
        assert share > 0.95, (entry["query"], share)
        assert entry["sliding_cm_per_foot_per_moving_s"] >= 0.0 and entry["tracking_max_m"] > 0.0
    # Standing where the path stands still: the idle stretch's hips stay near the path's end.
    assert report[-1]["tracking_max_m"] < 0.5, report[-1]
    assert not [w for w in out.report.warnings if w.startswith("Move ")], out.report.warnings


def test_a_move_naming_no_tag_is_refused_with_nothing_written(tagged_scene):
    obj, ctrl, raw_action = tagged_scene
    ctrl.motion_matching.moves[1].query = "limp"
    before = H.datablock_counts()
    with pytest.raises(RuntimeError, match=r"Move 2 \(frame 121, tag query 'limp'\) cannot be baked: .*'limp'"):
        bpy.ops.motion_matching.bake()
    assert H.datablock_counts() == before and obj.animation_data.action == raw_action
    assert "Motion Matching Bake" not in bpy.data.texts


def test_the_controllers_moves_are_saved_with_the_file(tmp_path):
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="straight_walk") == {"FINISHED"}
    ctrl = bpy.context.active_object
    name = ctrl.name
    bpy.context.scene.motion_matching.controller = ctrl
    assert bpy.ops.motion_matching.move_remove.poll() is False      # nothing to remove yet
    for frame, query in ((90.0, "run"), (30.0, "walk")):
        assert bpy.ops.motion_matching.move_add(use_current_frame=False, frame=frame, query=query) == {"FINISHED"}
    with pytest.raises(RuntimeError, match="already has a move at frame 30"):
        bpy.ops.motion_matching.move_add(use_current_frame=False, frame=30.0, query="idle")
    path = str(tmp_path / "moves.blend")
    assert bpy.ops.wm.save_as_mainfile(filepath=path) == {"FINISHED"}
    assert bpy.ops.wm.open_mainfile(filepath=path) == {"FINISHED"}
    ctrl = bpy.data.objects[name]
    assert [(m.frame, m.query) for m in ctrl.motion_matching.moves] == [(30.0, "walk"), (90.0, "run")]
    bpy.context.scene.motion_matching.controller = ctrl
    ctrl.motion_matching.active_move = 0
    assert bpy.ops.motion_matching.move_remove() == {"FINISHED"}
    assert [(m.frame, m.query) for m in ctrl.motion_matching.moves] == [(90.0, "run")]


def _cli_bake(tmp_path, *extra):
    """tools.mm_cli on the sample with its dance card along the walk, run, walk
    scenario file (plus ``extra`` options); returns (its stdout, its report)."""
    import subprocess
    import sys

    from sample_paths import REPO

    path = tmp_path / "walk_run_walk.json"
    path.write_text(json.dumps({"points": [{"t": t, "x": 0.0, "y": y, **({"query": q} if q else {})}
                                           for t, y, q in POINTS]}))
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "tools.mm_cli", "--bvh", SAMPLE_TAKE, "--scale", "0.01",
                           "--dance-card", os.path.join(SAMPLES, "jl_mm_dance_card.toml"), "--scenario", str(path),
                           "--fps", str(FPS), *extra, "--out", str(out)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, json.loads((out / "report.json").read_text())


def test_the_command_line_bakes_a_scenario_files_moves(tmp_path):
    stdout, report = _cli_bake(tmp_path)
    assert [(m["frame"], m["query"]) for m in report["moves"]] == MOVES
    assert all(m["share"] > 0.6 for m in report["moves"]), report["moves"]
    assert "move at 121" in stdout


def test_the_command_lines_moves_replace_the_scenario_files(tmp_path):
    stdout, report = _cli_bake(tmp_path, "--moves", "181=run", "1=walk")
    assert [(m["frame"], m["query"]) for m in report["moves"]] == [(1.0, "walk"), (181.0, "run")]
    assert "move at 181" in stdout and "move at 121" not in stdout


def test_the_preview_follows_the_moves_and_equals_the_bake(tagged_scene):
    """The preview plays the moves as the bake does, and an edit of a move
    (here: the run starting later) is followed: the pose is then the new bake's."""
    obj, ctrl, raw_action = tagged_scene
    scene = bpy.context.scene
    names = [b.name for b in obj.data.bones]
    frames = (30, 140, 200, 260)
    compat = path_measure.addon("bridge.blender.compat")
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    seen = []
    for moved in (False, True):
        if moved:
            ctrl.motion_matching.moves[1].frame = 161.0
            _followed(scene)      # one frame change, then the timer's slices
        previewed = {}
        for f in frames:
            scene.frame_set(f)
            previewed[f] = _pose_matrices(obj, names)
        seen.append(previewed)
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    assert not all(np.abs(seen[0][f] - seen[1][f]).max() < 1e-6 for f in frames)   # the edit was followed
    compat.assign_action(obj, raw_action)
    assert bpy.ops.motion_matching.bake() == {"FINISHED"}
    for f in frames:
        scene.frame_set(f)
        assert np.abs(_pose_matrices(obj, names) - seen[1][f]).max() < 1e-5, f


def test_the_preview_overlay_marks_each_move_where_it_falls_on_the_path(tagged_scene):
    """Each move is drawn where the wanted path is on its frame, labelled with
    its frame and query; an edit of a move's frame moves its mark."""
    _obj, ctrl, _raw_action = tagged_scene
    scene = bpy.context.scene
    preview = H.addon_module("bridge.preview.preview")
    assert preview.move_marks(scene) == []          # no preview, no marks
    assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
    try:
        marks = preview.move_marks(scene)
        assert [label for _p, label in marks] == ["1: walk", "121: run", "241: walk"]
        for (point, _label), (frame, _query) in zip(marks, MOVES):
            scene.frame_set(int(frame))
            wanted = preview.overlay_lines(scene)[0]
            assert np.abs(point - wanted[0]).max() < 1e-9
        before = marks[1][0]
        ctrl.motion_matching.moves[1].frame = 161.0
        _followed(scene)
        moved = preview.move_marks(scene)
        assert moved[1][1] == "161: run"
        assert np.linalg.norm(moved[1][0] - before) > 0.5      # 40 frames further along the path
    finally:
        assert bpy.ops.motion_matching.toggle_preview() == {"FINISHED"}
