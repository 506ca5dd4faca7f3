"""python -m tools.mm_batch: a small manifest (the sample take, a glTF and an
FBX character, a 3 s path) baked side by side gives each entry the keys it
gets baked alone, in any order; a bad entry fails alone and is named; a rerun
skips finished entries and bakes the rest."""

import json
import os
import subprocess
import sys

import pytest

from sample_paths import REPO, SAMPLE_TAKE
from tools import key_digest, rig_file


def _batch(manifest, out, *args):
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    return subprocess.run([sys.executable, "-m", "tools.mm_batch", str(manifest), "--out", str(out), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture
def cast(tmp_path):
    """A folder with two characters and a short path; returns a function
    writing a TOML manifest there with the entries given."""
    folder = tmp_path / "cast"
    folder.mkdir()
    os.replace(rig_file.write("glb", str(folder), "Hero"), folder / "hero.glb")
    os.replace(rig_file.write("fbx", str(folder), "Extra"), folder / "extra.fbx")
    (folder / "short.json").write_text(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1.5, "x": 0, "y": -2},
                                                              {"t": 3, "x": 1.5, "y": -3.5}]}))
    (folder / "empty.gltf").write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0,
                                                   "scenes": [{"nodes": [0]}], "nodes": [{"name": "Marker"}]}))

    def write(entries, take=SAMPLE_TAKE):
        text = ('fps = 24\nexports = ["bvh"]\n[database]\ntakes = [%s]\nmirror = false\n'
                '[characters]\nhero = "hero.glb"\nextra = "extra.fbx"\nnobody = "empty.gltf"\n'
                '[paths]\nshort = "short.json"\n' % json.dumps(str(take)))
        for e in entries:
            text += "[[entries]]\n" + "".join("%s = %s\n" % (k, json.dumps(v)) for k, v in e.items())
        path = folder / "crowd.toml"
        path.write_text(text)
        return path

    return write


ENTRIES = [{"name": "hero", "character": "hero", "path": "short"},
           {"name": "extra_fast", "character": "extra", "path": "short", "speed_scale": 1.4, "start_frame": 7,
            "exports": ["fbx", "glb"]},
           {"name": "hero_mirrored", "character": "hero", "path": "short", "mirror": True, "start_time": 0.5}]


def _key_digests(out, names):
    """The digest of the baked character's keys in each entry's .blend (tools.key_digest)."""
    import bpy

    digests = {}
    for name in names:
        bpy.ops.wm.open_mainfile(filepath=os.path.join(str(out), "entries", name, "baked.blend"))
        baked = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.animation_data and o.animation_data.action]
        assert len(baked) == 1, name
        digests[name] = key_digest.digest(key_digest.action_keys(baked[0].animation_data.action))
    bpy.ops.wm.read_homefile(use_empty=True)
    return digests


def test_entries_baked_side_by_side_have_the_keys_they_get_baked_alone(tmp_path, cast):
    manifest = cast(ENTRIES)
    together = tmp_path / "together"
    proc = _batch(manifest, together, "--jobs", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    summary = json.loads((together / "summary.json").read_text())["entries"]
    assert [(r["name"], r["status"]) for r in summary] == [(e["name"], "done") for e in ENTRIES]
    frames = {r["name"]: r["frames"] for r in summary}
    assert frames == {"hero": 73, "extra_fast": 53, "hero_mirrored": 73}   # 3 s, and 3 s / 1.4, at 24 fps
    reports = {e["name"]: json.loads((together / "entries" / e["name"] / "report.json").read_text()) for e in ENTRIES}
    assert reports["extra_fast"]["frame_start"] == 7 and reports["hero_mirrored"]["frame_start"] == 13
    assert {r["retargeted_onto"] for r in reports.values()} == {"Hero", "Extra"}
    folder = together / "entries" / "extra_fast"
    assert all((folder / ("extra_fast" + ext)).stat().st_size > 1000 for ext in (".fbx", ".glb"))
    assert sorted(os.listdir(together / "database")) == ["mirror.npz", "mirror.npz.done.json", "plain.npz",
                                                         "plain.npz.done.json"]
    # Each entry alone, last first, one process at a time, into another folder.
    alone = tmp_path / "alone"
    for number in (3, 1, 2):
        proc = _batch(manifest, alone, "--entries", str(number))
        assert proc.returncode == 0, proc.stderr[-2000:]
    names = [e["name"] for e in ENTRIES]
    first, second = _key_digests(together, names), _key_digests(alone, names)
    assert first == second
    assert len(set(first.values())) == 3          # three different bakes
    # A rerun finds every entry finished and bakes nothing.
    proc = _batch(manifest, together, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("finished before, skipped") == 3 and "): baked" not in proc.stdout
    assert "database" not in proc.stdout


def test_a_bad_entry_fails_alone_and_a_rerun_bakes_only_what_is_not_finished(tmp_path, cast):
    entries = [{"name": "first", "character": "hero", "path": "short"},
               {"name": "bad", "character": "nobody", "path": "short"},
               {"name": "third", "character": "extra", "path": "short"}]
    manifest = cast(entries)
    out = tmp_path / "out"
    proc = _batch(manifest, out)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "motion_matching: 1 of 3 entries failed: 2 (bad)."
    assert "entry 2 (bad): FAILED: --character %s holds no armature." % (manifest.parent / "empty.gltf") \
        in proc.stdout
    summary = {r["name"]: r for r in json.loads((out / "summary.json").read_text())["entries"]}
    assert [summary[n]["status"] for n in ("first", "bad", "third")] == ["done", "failed", "done"]
    assert "holds no armature" in summary["bad"]["reason"]
    assert not (out / "entries" / "bad").exists()
    # As if the batch had been stopped while the third entry was being moved into place:
    # its marker is missing, a half-written folder lies beside it.
    os.remove(out / "entries" / "third" / "done.json")
    (out / "entries" / ".third.partial-1").mkdir()
    proc = _batch(manifest, out, "--summary-only")
    assert proc.returncode == 1 and "2 of 3 entries are not finished: 2 (bad), 3 (third)." in proc.stderr
    proc = _batch(manifest, out, "--keep-going")   # as a farm task runs it: the summary task reports
    assert proc.returncode == 0 and "1 of 3 entries failed: 2 (bad) (--keep-going: status 0)." in proc.stdout
    lines = [l for l in proc.stdout.splitlines() if l.startswith("entry ")]
    assert "entry 1 (first): finished before, skipped" in lines
    assert "entry 3 (third): baked" in lines
    assert any(l.startswith("entry 2 (bad): FAILED") for l in lines)
    assert not (out / "entries" / ".third.partial-1").exists()
    # The manifest fixed: only the bad entry runs; the batch ends well.
    entries[1]["character"] = "hero"
    cast(entries)
    proc = _batch(manifest, out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [l for l in proc.stdout.splitlines() if l.startswith("entry ")]
    assert lines.count("entry 2 (bad): baked") == 1 and len([l for l in lines if "skipped" in l]) == 2
    summary = json.loads((out / "summary.json").read_text())["entries"]
    assert [r["status"] for r in summary] == ["done", "done", "done"]
    assert not (out / "failed" / "bad.json").exists()


def test_a_bad_manifest_runs_nothing(tmp_path, cast):
    manifest = cast([{"name": "fine", "character": "hero", "path": "short"},
                     {"name": "slow", "character": "hero", "path": "short", "speed_scale": 0.0}])
    proc = _batch(manifest, tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("motion_matching: entry 2 (slow): speed_scale must be a number from 0.05 to 20, "
                                   "not 0.0.")
    assert not (tmp_path / "out").exists()


def test_entries_whose_database_cannot_be_built_are_named(tmp_path, cast):
    broken = tmp_path / "broken.bvh"
    broken.write_text("HIERARCHY\nROOT Hips\n{\n")
    manifest = cast([{"name": "one", "character": "hero", "path": "short"},
                     {"name": "two", "character": "extra", "path": "short"}], take=broken)
    proc = _batch(manifest, tmp_path / "out", "--jobs", "2")
    assert proc.returncode == 1
    assert "database plain: FAILED: " in proc.stdout
    assert proc.stdout.count("FAILED: its database was not built: ") == 2
    assert proc.stderr.strip().splitlines()[-1] == "motion_matching: 2 of 2 entries failed: 1 (one), 2 (two)."
    assert not os.path.exists(tmp_path / "out" / "database" / "plain.npz")


def test_an_entrys_moves_are_baked_and_a_move_naming_no_tag_fails_that_entry_alone(tmp_path, cast):
    from sample_paths import SAMPLES

    manifest = cast([])
    text = manifest.read_text().replace("mirror = false\n", "mirror = false\ndance_card = %s\n" % json.dumps(
        os.path.join(SAMPLES, "jl_mm_dance_card.toml")))
    text += ('[[entries]]\nname = "moving"\ncharacter = "hero"\npath = "short"\n'
             'moves = [{ time = 1.5, query = "run" }, { frame = 1, query = "walk" }]\n'
             '[[entries]]\nname = "limping"\ncharacter = "hero"\npath = "short"\n'
             'moves = [{ frame = 30, query = "limp" }]\n')
    manifest.write_text(text)
    out = tmp_path / "out"
    proc = _batch(manifest, out)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "motion_matching: 1 of 2 entries failed: 2 (limping)."
    report = json.loads((out / "entries" / "moving" / "report.json").read_text())
    assert [(m["frame"], m["query"]) for m in report["moves"]] == [(1.0, "walk"), (37.0, "run")]
    assert "'limp'" in proc.stdout and not (out / "entries" / "limping").exists()
