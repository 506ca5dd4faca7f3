"""The command the installed extension registers (``blender -b -c motion_matching
...``), called as Blender calls it: its function with the argument list. It
bakes the sample take onto the demo's character and exports it, runs a
three-entry batch (each entry in a Blender process of its own), refuses a bad
argument in one sentence with status 1 and nothing written, gives the same
files and output as ``python -m tools.mm_cli``, and is gone once the extension
is disabled."""

import json
import os
import re
import subprocess
import sys

import pytest

from sample_paths import REPO, SAMPLE_TAKE
from tools import addon_session, key_digest, rig_file


def _command():
    return addon_session.addon_module("cli")


def _digest_of(blend, name="Hero"):
    """The keys of the character ``name`` baked in ``blend`` (tools.key_digest), the file closed again."""
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    action = bpy.data.objects[name].animation_data.action
    assert action.name.startswith("MM_Bake")
    digest = key_digest.digest(key_digest.action_keys(action))
    bpy.ops.wm.read_homefile(use_empty=True)
    return digest


# Figures that time the run itself: they differ from one run to the next.
TIMED = re.compile(r"(\d+(\.\d+)? s, )?\d+(\.\d+)?x real time")


# glTF's importer logs with a clock time through Python's logging (which pytest
# takes in-process).
GLTF_LOG = re.compile(r"^\d\d:\d\d:\d\d \| ")


def _same_words(text, out):
    """The command's output with the output folder and the timing figures masked."""
    lines = [line for line in text.replace(str(out), "OUT").splitlines() if not GLTF_LOG.match(line)]
    return [TIMED.sub("TIMED", line) for line in lines]


@pytest.fixture
def hero(tmp_path):
    return rig_file.write("glb", str(tmp_path), "Hero")


def test_the_extension_registers_the_command(capfd):
    cli = _command()
    assert cli.registered() and cli.COMMAND == "motion_matching"
    assert cli.execute(["--help"]) == 0
    out = capfd.readouterr().out
    assert "blender -b -c motion_matching COMMAND" in out and "bake" in out and "batch" in out
    assert cli.execute(["bake", "--help"]) == 0
    assert "--character FILE" in capfd.readouterr().out


@pytest.mark.parametrize("argv, said", [
    ([], "motion_matching: give a command: bake, build or batch."),
    (["render"], "motion_matching: unknown command 'render': give bake, build or batch (--help lists them)."),
    (["bake", "--bvh", SAMPLE_TAKE, "--fps", "0", "--out", "OUT"],
     "motion_matching: --fps must be a frame rate from 1 to 1000, not 0."),
    (["bake", "--bvh", SAMPLE_TAKE, "--scenario", "nowhere", "--out", "OUT"],
     "motion_matching: --scenario 'nowhere' is neither a built-in scenario"),
    (["build", "--bvh", SAMPLE_TAKE], "motion_matching: build needs --save-database FILE.npz"),
    (["batch", "MISSING.toml", "--out", "OUT"], "motion_matching: Cannot read the manifest"),
])
def test_a_bad_argument_is_one_sentence_and_status_1_with_nothing_written(tmp_path, capfd, argv, said):
    out = tmp_path / "out"
    argv = [str(out) if a == "OUT" else str(tmp_path / a) if a == "MISSING.toml" else a for a in argv]
    objects = len(__import__("bpy").data.objects)
    assert _command().execute(argv) == 1
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(said), lines
    assert not out.exists() and sorted(os.listdir(tmp_path)) == []
    assert len(__import__("bpy").data.objects) == objects   # the open file is as it was


def test_bake_onto_the_demos_character_and_export_as_the_checkout_tool_does(tmp_path, hero, capfd):
    options = ["--bvh", SAMPLE_TAKE, "--scenario", "straight_walk", "--fps", "24", "--character", hero]
    here, there = tmp_path / "command", tmp_path / "tool"
    def exports(out):
        return ["--export", str(out / "hero.bvh"), "--export", str(out / "hero.glb"), "--out", str(out)]

    assert _command().execute(["bake", *options, *exports(here)]) == 0
    said = capfd.readouterr()
    for name in ("baked.blend", "report.json", "hero.bvh", "hero.glb"):
        assert (here / name).stat().st_size > 1000, name
    report = json.loads((here / "report.json").read_text())
    assert report["retargeted_onto"] == "Hero" and report["frames"] > 100
    # The checkout's tool, in a process of its own, with the same options.
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    proc = subprocess.run([sys.executable, "-m", "tools.mm_cli", *options, *exports(there)], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _same_words(proc.stdout, there) == _same_words(said.out, here)
    assert _digest_of(there / "baked.blend") == _digest_of(here / "baked.blend")
    theirs = json.loads((there / "report.json").read_text())
    timed = {k for k in report if "seconds" in k or "real_time" in k}
    assert timed and {k: v for k, v in theirs.items() if k not in timed} == {
        k: v for k, v in report.items() if k not in timed}


def test_a_three_entry_batch(tmp_path, hero):
    folder = tmp_path / "cast"
    folder.mkdir()
    (folder / "short.json").write_text(json.dumps({"points": [{"t": 0, "x": 0, "y": 0}, {"t": 1.5, "x": 0, "y": -2},
                                                              {"t": 2.5, "x": 1.0, "y": -3}]}))
    entries = [{"name": "one", "character": "hero", "path": "short"},
               {"name": "two", "character": "hero", "path": "short", "speed_scale": 1.3},
               {"name": "three", "character": "hero", "path": "short", "start_frame": 5, "exports": ["bvh"]}]
    text = ('fps = 24\n[database]\ntakes = [%s]\nmirror = false\n[characters]\nhero = %s\n[paths]\n'
            'short = "short.json"\n' % (json.dumps(SAMPLE_TAKE), json.dumps(hero)))
    for e in entries:
        text += "[[entries]]\n" + "".join("%s = %s\n" % (k, json.dumps(v)) for k, v in e.items())
    (folder / "batch.toml").write_text(text)
    out = tmp_path / "out"
    assert _command().execute(["batch", str(folder / "batch.toml"), "--out", str(out), "--jobs", "2"]) == 0
    rows = json.loads((out / "summary.json").read_text())["entries"]
    assert [(r["name"], r["status"]) for r in rows] == [("one", "done"), ("two", "done"), ("three", "done")]
    assert (out / "entries" / "three" / "three.bvh").is_file()
    digests = [_digest_of(out / "entries" / e["name"] / "baked.blend") for e in entries]
    assert len(set(digests)) == 3
    logs = (out / "logs" / "one.log").read_text()
    assert logs.startswith("$ ") and " motion_matching bake " in logs.splitlines()[0] + " "


def test_disabling_the_extension_removes_the_command():
    cli = _command()
    addon_session.disable()
    try:
        assert not cli.registered()
    finally:
        addon_session.enable()
    assert _command().registered()
