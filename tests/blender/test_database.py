"""motion_matching.build_database: features checked against Blender's own
evaluation (frame_set and pose matrices), persistence, export/import, bad input."""

import dataclasses
import os
import subprocess
import sys

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H


def _sample(frames=None, **kw):
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True, **kw)
    return obj


def _add_and_build(obj):
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    # The take alone (its rows are checked against its frames; mirror images: test_mirror_database.py).
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}
    store = H.addon_module("bridge.database.store")
    return store.load(bpy.context.scene)


def _world_mats(obj, frame, names):
    bpy.context.scene.frame_set(int(frame))
    mw = np.array(obj.matrix_world)
    return {n: mw @ np.array(obj.pose.bones[n].matrix) for n in names}


def _independent_row(obj, frame, fps, bones):
    """The 27 default features of ``frame`` from Blender's pose matrices alone."""
    names = [bones[k] for k in ("left_foot", "right_foot", "hips", "root")]
    now = _world_mats(obj, frame, names)
    prev = _world_mats(obj, frame - 1, names)
    nxt = _world_mats(obj, frame + 1, names)
    # Character frame: the root bone turned half a turn (its Y axis is the facing).
    flip = np.diag([-1.0, -1.0, 1.0])
    r = now[bones["root"]][:3, :3] @ flip
    p = now[bones["root"]][:3, 3]
    row = []
    for b in (bones["left_foot"], bones["right_foot"]):
        row += list(r.T @ (now[b][:3, 3] - p))
    for b in (bones["left_foot"], bones["right_foot"], bones["hips"]):
        v = (nxt[b][:3, 3] - prev[b][:3, 3]) * fps / 2.0
        if b != bones["hips"]:
            row += list(r.T @ v)
        else:
            hips_v = list(r.T @ v)
    row += hips_v
    fut = [_world_mats(obj, frame + k, [bones["root"]])[bones["root"]] for k in (20, 40, 60)]
    for m in fut:
        row += list((r.T @ (m[:3, 3] - p))[:2])
    for m in fut:
        facing = (m[:3, :3] @ flip) @ np.array([0.0, -1.0, 0.0])
        row += list((r.T @ facing)[:2])
    return np.array(row)


def test_features_match_blender_pose_matrices():
    obj = _sample()
    database = _add_and_build(obj)
    db, bones = database.matching, dataclasses.asdict(database.feature_bones)
    assert db.dim == 27 and db.num_rows == 5562
    for frame in (100, 1234, 2900, 4500):
        row = db.raw[frame - 1]
        expect = _independent_row(obj, frame, 60.0, bones)
        assert np.abs(row - expect).max() < 1e-4, (frame, np.abs(row - expect).max())
    # The last second is not offered (its trajectory would be clamped).
    assert db.valid.sum() == 5562 - 60


def _sparse_copy(obj, step=5, last=600):
    """A copy of ``obj``'s action keyed only every ``step`` frames, Bezier with
    automatic clamped handles, as hand-keyed animation is."""
    compat = H.addon_module("bridge.blender.compat")
    src = obj.animation_data.action
    dup = obj.copy()
    dup.data = obj.data.copy()
    bpy.context.collection.objects.link(dup)
    action = compat.new_action(dup, "sparse")
    action.motion_matching.fps = 60.0   # the take's rate, as the importer records it
    channels, cols = [], []
    frames = np.arange(1, last + 1, step, dtype=np.float64)
    for fc in compat.fcurves(src, obj):
        co = compat.read_curve(fc)["co"]
        channels.append((fc.data_path, fc.array_index, None))
        cols.append(co[frames.astype(int) - 1, 1])
    compat.write_curves(action, dup, channels, frames, np.column_stack(cols), interpolation="BEZIER")
    for fc in compat.fcurves(action, dup):
        kp = fc.keyframe_points
        kp.foreach_set("handle_left_type", np.full(len(kp), 4, dtype=np.int8))   # AUTO_CLAMPED
        kp.foreach_set("handle_right_type", np.full(len(kp), 4, dtype=np.int8))
        fc.update()
    return dup


def test_sparse_bezier_action_rows_match_frame_set():
    obj = _sample()
    dup = _sparse_copy(obj)
    database = _add_and_build(dup)
    db, bones = database.matching, dataclasses.asdict(database.feature_bones)
    assert db.num_rows == 596   # frames 1..596, keys every 5
    for frame in (7, 133, 301, 480):
        expect = _independent_row(dup, frame, 60.0, bones)
        assert np.abs(db.raw[frame - 1] - expect).max() < 1e-4


def test_save_reopen_keeps_database_and_settings(tmp_path):
    obj = _sample()
    tags = obj.animation_data.action.motion_matching.tags
    t = tags.add()
    t.name, t.frame_start, t.frame_end = "walk", 200, 900
    settings = bpy.context.scene.motion_matching
    settings.responsiveness = 1.5
    db = _add_and_build(obj).matching
    search = H.addon_module("core.database.search")
    queries = db.features[[50, 700, 3000]] + 0.05
    before = [search.brute_force(db.features, q, db.valid)[0] for q in queries]
    path = str(tmp_path / "scene.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    settings = scene.motion_matching
    assert settings.responsiveness == pytest.approx(1.5)
    assert settings.database_built and not settings.database_stale
    action = settings.entries[0].action
    assert [(t.name, t.frame_start, t.frame_end) for t in action.motion_matching.tags] == [("walk", 200, 900)]
    store = H.addon_module("bridge.database.store")
    db2 = store.load(scene).matching
    assert np.array_equal(db2.features, db.features)
    after = [search.brute_force(db2.features, q, db2.valid)[0] for q in queries]
    assert after == before


def test_export_import_round_trip_and_plain_numpy(tmp_path):
    obj = _sample()
    arrays = _add_and_build(obj).to_arrays()
    path = str(tmp_path / "db.npz")
    assert bpy.ops.motion_matching.export_database(filepath=path) == {"FINISHED"}
    store = H.addon_module("bridge.database.store")
    store.clear(bpy.context.scene)
    assert bpy.ops.motion_matching.import_database(filepath=path) == {"FINISHED"}
    arrays2 = store.load(bpy.context.scene).to_arrays()
    assert sorted(arrays) == sorted(arrays2)
    for k in arrays:
        assert arrays[k].dtype == arrays2[k].dtype and np.array_equal(arrays[k], arrays2[k]), k
    with np.load(path, allow_pickle=False) as z:   # the file holds what the database writes
        assert sorted(z.files) == sorted(arrays)
        for k in arrays:
            assert np.array_equal(z[k], arrays[k]), k
    # Outside Blender: a plain Python with numpy, no pickles.
    code = ("import numpy as np, sys; z = np.load(sys.argv[1], allow_pickle=False); "
            "print(z['features'].shape, z['norm_mean'].shape, str(z['spec_json'])[:1])")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.returncode == 0, out.stderr
    assert "(5562, 27) (27,) {" in out.stdout


def test_import_of_a_bad_file_keeps_the_database(tmp_path):
    obj = _sample()
    db = _add_and_build(obj).matching
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not an archive")
    with pytest.raises(RuntimeError, match="not a usable database"):
        bpy.ops.motion_matching.import_database(filepath=str(bad))
    store = H.addon_module("bridge.database.store")
    assert np.array_equal(store.load(bpy.context.scene).matching.features, db.features)


def test_changing_an_action_marks_the_database_stale():
    obj = _sample()
    _add_and_build(obj)
    settings = bpy.context.scene.motion_matching
    assert not settings.database_stale
    settings.responsiveness = 2.0
    assert settings.database_stale
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    assert not settings.database_stale
    # Editing keys of a listed action is noticed too.
    compat = H.addon_module("bridge.blender.compat")
    fc = compat.fcurves(obj.animation_data.action, obj)[5]
    fc.keyframe_points[10].co.y += 0.5
    fc.update()
    bpy.context.view_layer.update()
    handlers = H.addon_module("bridge.database.handlers")
    assert handlers.check_stale(bpy.context.scene)
    assert settings.database_stale


# ---------------------------------------------------------------------------
# Bad input keeps the previous database


def _refused(match):
    store = H.addon_module("bridge.database.store")
    scene = bpy.context.scene
    before = store.raw_bytes(scene) if store.has_database(scene) else None
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.motion_matching.build_database()
    after = store.raw_bytes(scene) if store.has_database(scene) else None
    assert before == after


def test_bad_inputs_keep_previous_database():
    obj = _sample()
    _add_and_build(obj)
    settings = bpy.context.scene.motion_matching
    action = obj.animation_data.action
    # An action with no keys.
    empty = bpy.data.actions.new("empty")
    entry = settings.entries.add()
    entry.action, entry.armature = empty, obj
    _refused("no keys")
    settings.entries.remove(1)
    # A feature bone the armature lacks.
    settings.left_foot = "NoSuchAnkle"
    _refused("no bone named NoSuchAnkle")
    settings.left_foot = ""
    # A tag range outside the action.
    t = action.motion_matching.tags.add()
    t.name, t.frame_start, t.frame_end = "walk", 5000, 9000
    _refused("frames 5000-9000 but the action has frames 1-5562")
    t.frame_end = 5500
    # Every row excluded.
    x = action.motion_matching.tags.add()
    x.name, x.frame_start, x.frame_end = "exclude", 1, 5562
    _refused("excluded")
    action.motion_matching.tags.remove(1)
    # A tag query that selects no row.
    settings.tag_query = "walk and not walk"
    _refused("selects no frame")
    settings.tag_query = "walk or"
    _refused("expected")
    settings.tag_query = ""
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}


def test_nan_in_keys_is_refused():
    obj = _sample()
    _add_and_build(obj)
    compat = H.addon_module("bridge.blender.compat")
    fc = compat.fcurves(obj.animation_data.action, obj)[8]
    fc.keyframe_points[300].co.y = float("nan")
    _refused("NaN")


def test_contact_filter_is_seconds_and_marks_the_database_stale():
    obj = _sample()
    settings = bpy.context.scene.motion_matching
    assert settings.contact_filter == pytest.approx(0.1)
    db = _add_and_build(obj).matching
    contacts = H.addon_module("core.skeleton.contacts")
    # The build's contacts are the toes' at the take's rate with a 0.1 s filter (6 frames at 60 fps).
    toes = [list(db.contact_joints)]
    assert contacts.filter_radius(settings.contact_filter, db.clip_fps[0]) == 6
    settings.contact_filter = 0.0
    assert settings.database_stale
    raw = _add_and_build(obj).matching
    assert settings.contact_filter == 0.0 and toes == [list(raw.contact_joints)]
    # Unfiltered contacts flicker: more changes of state than the filtered ones.
    flips = lambda c: int(np.count_nonzero(np.diff(c.astype(np.int8), axis=0)))
    assert flips(raw.contacts) > flips(db.contacts)
