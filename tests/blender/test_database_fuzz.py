"""Fuzzing motion_matching.import_database with 100 deterministic mutations of the
sample take's database (byte flips, truncation, array edits saved as valid
archives): never a traceback, nothing left behind, and what is accepted passes
the complete check and serves a coverage report."""

import bpy
import pytest

from sample_paths import SAMPLE_TAKE
import bl_helpers as H
import db_files


@pytest.fixture(scope="module")
def base(addon):
    bpy.ops.wm.read_homefile(use_empty=True)
    H.import_ours(SAMPLE_TAKE, global_scale=0.01, add_virtual_root=True)
    assert bpy.ops.motion_matching.database_add_action() == {"FINISHED"}
    assert bpy.ops.motion_matching.build_database() == {"FINISHED"}
    data = H.addon_module("bridge.database.store").raw_bytes(bpy.context.scene)
    return db_files.arrays_of(data), data


def test_100_mutated_database_files(base, tmp_path):
    arrays, data = base
    store = H.addon_module("bridge.database.store")
    scene = bpy.context.scene
    good = tmp_path / "good.npz"
    good.write_bytes(data)
    assert bpy.ops.motion_matching.import_database(filepath=str(good)) == {"FINISHED"}
    cases = db_files.fuzz_cases(arrays, data, count=100)
    assert len(cases) == 100
    problems, outcomes = [], {"refused": 0, "accepted": 0}
    path = tmp_path / "case.npz"
    for i, (label, blob) in enumerate(cases):
        path.write_bytes(blob)
        counts = H.datablock_counts()
        before = store.raw_bytes(scene)
        summary = scene.motion_matching.database_summary
        try:
            result = bpy.ops.motion_matching.import_database(filepath=str(path))
        except RuntimeError as ex:
            text = str(ex)
            outcomes["refused"] += 1
            if "Traceback" in text or "is not a usable database" not in text:
                problems.append((i, label, "refused without a plain sentence: " + text[:300]))
            if store.raw_bytes(scene) != before or scene.motion_matching.database_summary != summary:
                problems.append((i, label, "refused but the stored database changed"))
        else:
            outcomes["accepted"] += 1
            stored = store.raw_bytes(scene)
            if result != {"FINISHED"} or stored != blob:
                problems.append((i, label, "accepted but not stored as given (%s)" % result))
            else:
                try:
                    H.addon_module("core.database.checks").read_database(stored)   # the complete check passes
                    store.load(scene)
                    assert bpy.ops.motion_matching.database_report() == {"FINISHED"}
                except Exception as ex:  # noqa: BLE001  (collected, reported below)
                    problems.append((i, label, "accepted but unusable: %r" % ex))
                counts = H.datablock_counts()          # the report's text block is expected
            assert bpy.ops.motion_matching.import_database(filepath=str(good)) == {"FINISHED"}
        if H.datablock_counts() != counts:
            problems.append((i, label, "bpy.data changed"))
    assert not problems, "\n".join("case %d (%s): %s" % p for p in problems)
    assert outcomes["refused"] >= 85, outcomes    # most mutations damage the file
    assert store.raw_bytes(scene) == data
