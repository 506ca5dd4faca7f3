"""motion_matching.import_database does not trust its file: every kind of
inconsistent, damaged or hostile .npz is refused with a sentence and leaves the
stored database, the scene's settings and bpy.data as they were; a new database
(even with the same input fingerprint) gets a new search index."""

import json

import bpy
import numpy as np
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H
import db_files


def _store():
    return H.addon_module("bridge.database.store")


def _build_sample():
    obj = H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database(mirror_takes="OFF") == {"FINISHED"}   # the take's rows alone
    return obj


@pytest.fixture(scope="module")
def base(addon):
    """(arrays, bytes) of the sample take's database, built once."""
    bpy.ops.wm.read_homefile(use_empty=True)
    _build_sample()
    data = _store().raw_bytes(bpy.context.scene)
    return db_files.arrays_of(data), data


def settings_snapshot(scene):
    """Every plain property of the scene's motion-matching settings, and the stored bytes' hash."""
    s = scene.motion_matching
    out = {}
    for p in s.bl_rna.properties:
        if p.identifier == "rna_type":
            continue
        v = getattr(s, p.identifier)
        if p.type == "COLLECTION":
            v = len(v)
        elif p.type == "POINTER":
            v = getattr(v, "name", repr(v))
        elif getattr(p, "is_array", False):
            v = tuple(v)
        out[p.identifier] = v
    out["stored_sha1"] = scene.get(_store().PROP_ID)
    return out


def _import(path):
    return bpy.ops.motion_matching.import_database(filepath=str(path))


def _refused(path, words=""):
    """Import ``path``, expect a refusal with a sentence (holding ``words``), and check nothing changed."""
    scene = bpy.context.scene
    before_bytes = _store().raw_bytes(scene)
    before_settings = settings_snapshot(scene)
    before_counts = H.datablock_counts()
    with pytest.raises(RuntimeError) as caught:
        _import(path)
    text = str(caught.value)
    assert "is not a usable database: " in text and "Traceback" not in text, text
    assert words in text.split("is not a usable database: ", 1)[1], text
    assert _store().raw_bytes(scene) == before_bytes
    assert settings_snapshot(scene) == before_settings
    assert H.datablock_counts() == before_counts
    return text


@pytest.mark.parametrize("kind", sorted(db_files.INCONSISTENT))
def test_inconsistent_database_files_are_refused(base, kind, tmp_path):
    arrays, data = base
    good = tmp_path / "good.npz"
    good.write_bytes(data)
    assert _import(good) == {"FINISHED"}
    bad = tmp_path / ("%s.npz" % kind)
    make, words = db_files.INCONSISTENT[kind]
    bad.write_bytes(make(arrays, data))
    _refused(bad, words)
    # The old database still works: the coverage report reads it whole.
    assert bpy.ops.motion_matching.database_report() == {"FINISHED"}
    assert _store().load(bpy.context.scene).matching.num_rows == len(arrays["features"])


def test_a_file_beyond_2_gib_is_refused_unread(base, tmp_path):
    arrays, data = base
    good = tmp_path / "good.npz"
    good.write_bytes(data)
    assert _import(good) == {"FINISHED"}
    huge = tmp_path / "huge.npz"
    with open(huge, "wb") as fh:
        fh.write(data[:4096])
        fh.truncate(2 * 1024 ** 3 + 1)      # sparse: no disk used, nothing to read
    _refused(huge, "a database file is at most")


def test_refused_files_leave_the_bake_working(base, tmp_path):
    obj = _build_sample()
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert bpy.ops.motion_matching.add_scenario_controller(scenario="showcase", update_scene_range=True) == {"FINISHED"}
    scene.motion_matching.controller = bpy.context.active_object
    scene.motion_matching.bake_armature = obj
    scene.frame_end = scene.frame_start + 120

    def bake(name):
        path = tmp_path / name
        assert bpy.ops.motion_matching.bake(report_path=str(path)) == {"FINISHED"}
        report = json.loads(path.read_text(), parse_float=lambda t: round(float(t), 9))
        return {k: v for k, v in report.items() if k not in ("bake_seconds", "real_time_factor", "note")}

    before = bake("before.json")
    arrays, data = base
    for kind in ("nan_features", "clip_index_out_of_range", "zip_bomb", "format_version_text", "corrupt_deflate"):
        bad = tmp_path / ("%s.npz" % kind)
        make, words = db_files.INCONSISTENT[kind]
        bad.write_bytes(make(arrays, data))
        _refused(bad, words)
    assert bake("after.json") == before      # figures to 9 decimals (sums may differ in the last bit)


def _reweighted(arrays, factor):
    """The same database with its trajectory groups weighted ``factor`` times more
    (consistent features, weights and spec), and the same input fingerprint."""
    features = H.addon_module("core.database.feature_spec")
    spec = features.FeatureSpec.from_json(str(arrays["spec_json"]))
    for g in spec.groups:
        if g.is_trajectory:
            g.weight *= factor
    w = features.feature_weights(spec)
    out = dict(arrays)
    out["spec_json"] = np.array(spec.to_json())
    out["weights"] = w
    out["features"] = ((arrays["raw"] - arrays["norm_mean"]) / arrays["norm_scale"] * w).astype(np.float32)
    return out


def test_a_new_database_with_the_same_fingerprint_gets_a_new_search_index(base, tmp_path):
    _build_sample()
    scene = bpy.context.scene
    store = _store()
    bridge = H.addon_module("bridge.bake.bake")
    search = H.addon_module("core.database.search")
    database_a = store.load(scene)
    db_a, arrays_a = database_a.matching, database_a.to_arrays()
    index_a = bridge.search_index(database_a)          # what a bake caches
    other = _reweighted(arrays_a, 4.0)
    assert str(other["fingerprint"]) == database_a.fingerprint
    path = tmp_path / "other.npz"
    path.write_bytes(db_files.npz(other))
    assert _import(path) == {"FINISHED"}
    database_b = store.load(scene)
    db_b = database_b.matching
    assert not np.array_equal(db_b.features, db_a.features)
    assert database_b.fingerprint == database_a.fingerprint
    index_b = bridge.search_index(database_b)
    assert index_b is not index_a
    queries = db_b.features[[50, 700, 3000, 4800]] + 0.3
    for q in queries:
        row, cost = index_b.search(q, db_b.valid)
        expect_row, expect_cost = search.brute_force(db_b.features, q, db_b.valid)
        assert (row, cost) == (expect_row, expect_cost)
    # Going back to the first bytes gives their own index again.
    path_a = tmp_path / "a.npz"
    path_a.write_bytes(db_files.npz(arrays_a))
    assert _import(path_a) == {"FINISHED"}
    database_c = store.load(scene)
    db_c = database_c.matching
    assert np.array_equal(db_c.features, db_a.features)
    q = queries[0]
    assert bridge.search_index(database_c).search(q, db_c.valid) == search.brute_force(db_c.features, q,
                                                                                           db_c.valid)


def test_damaged_bytes_in_the_scene_give_a_sentence(base):
    """A .blend can carry any bytes: loading them says so instead of raising a traceback."""
    arrays, data = base
    scene = bpy.context.scene
    store = _store()
    store.store(scene, data)
    bad = db_files.INCONSISTENT["nan_features"][0](arrays, data)
    del scene[store.PROP]
    scene[store.PROP] = bad            # as a hand-edited or damaged file would carry them
    scene[store.PROP_ID] = "0" * 40
    with pytest.raises(H.addon_module("core.errors").MotionMatchingError, match="stored database is damaged"):
        store.load(scene)
    with pytest.raises(RuntimeError, match="stored database is damaged"):
        bpy.ops.motion_matching.database_report()
