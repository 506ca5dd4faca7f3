"""python -m tools.mm_cli in its own bpy process: files out, report fields, one-line failures."""

import json
import os
import subprocess
import sys

from sample_paths import REPO, SAMPLE_TAKE, SAMPLES

CLI = ["-m", "tools.mm_cli"]   # as README says, from the repository root


def _run(*args):
    env = {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}
    return subprocess.run([sys.executable, *CLI, *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=env)


def test_cli_writes_blend_and_report(tmp_path):
    out = tmp_path / "run"
    proc = _run("--bvh", SAMPLE_TAKE, "--scale", "0.01", "--dance-card", os.path.join(SAMPLES, "jl_mm_dance_card.toml"),
                "--scenario", "straight_walk", "--fps", "30", "--out", str(out),
                "--top-view", str(tmp_path / "pictures" / "top.png"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "baked.blend").is_file()
    with open(tmp_path / "pictures" / "top.png", "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "top view: " in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["fps"] == 30 and report["frames"] == 301
    assert "searches / jumps" in proc.stdout and "tracking error" in proc.stdout
    assert "from 1 action and their mirror images" in proc.stdout   # the sample's sides pair (Automatic)


def test_cli_fails_in_one_line(tmp_path):
    proc = _run("--bvh", str(tmp_path / "missing.bvh"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    lines = [l for l in proc.stderr.splitlines() if l.startswith("motion_matching:")]
    assert lines == ["motion_matching: BVH file not found: %s" % (tmp_path / "missing.bvh")]
    bad = tmp_path / "path.json"
    bad.write_text('{"points": [{"t": 0, "x": 0, "y": 0}]}')
    proc = _run("--bvh", SAMPLE_TAKE, "--scenario", str(bad), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert [l for l in proc.stderr.splitlines() if l.startswith("motion_matching:")], proc.stderr[-500:]


def test_cli_honours_a_scenario_files_facing(tmp_path):
    strafe = os.path.join(SAMPLES, "paths", "strafe.json")
    out = tmp_path / "strafe"
    proc = _run("--bvh", SAMPLE_TAKE, "--scenario", strafe, "--fps", "24", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    # Baked facing the file's facing (the report measures against it only then): the
    # upper body holds it while the strafe warp turns the legs toward travel.
    assert report["facing_error_asked_mean_deg"] is not None
    assert report["facing_error_asked_mean_deg"] < 20.0     # the upper body keeps the asked facing
    # ... and the hip joints' figure, beside it, shows the legs turned toward travel.
    assert report["hips_facing_error_asked_mean_deg"] > report["facing_error_asked_mean_deg"] + 10.0


def _one_eyed_take(path):
    """The sample take with a left eye and no right one: its sides do not pair."""
    import numpy as np

    from tools import bvh_writer
    from core.io import bvh_parse

    bvh = bvh_parse.read_bvh(SAMPLE_TAKE)
    names, parents, offsets, channels, ends = bvh_writer.sample_layout(bvh)
    head = names.index("Head")
    at = int(bvh.channel_start[head]) + len(channels[head])   # the eye's columns follow the head's
    motion = np.insert(bvh.motion, [at] * 3, 0.0, axis=1)
    bvh_writer.write_bvh(path, names + ["LeftEye"], parents + [head], np.vstack([offsets, [[3.0, 8.0, 9.0]]]),
                         channels + [("Zrotation", "Xrotation", "Yrotation")], motion, bvh.frame_time,
                         end_sites=ends)
    return path


def test_cli_builds_without_mirror_images_when_the_sides_do_not_pair_and_says_why(tmp_path):
    take = _one_eyed_take(str(tmp_path / "one_eye.bvh"))
    why = ("the skeleton cannot be mirrored: bone LeftEye names a side, but there is no bone of the same name "
           "on the other side")
    # Mirror Takes On: refused in one line, before anything is written.
    proc = _run("--bvh", take, "--mirror-takes", "on", "--scenario", "straight_walk", "--out", str(tmp_path / "on"))
    assert proc.returncode == 1
    lines = [l for l in proc.stderr.splitlines() if l.startswith("motion_matching:")]
    assert len(lines) == 1 and why[1:] in lines[0] and "set Mirror Takes to Automatic or Off" in lines[0], lines
    assert not (tmp_path / "on" / "baked.blend").exists()
    # The default (Automatic): built from the take alone, and the output says why.
    proc = _run("--bvh", take, "--scenario", "straight_walk", "--out", str(tmp_path / "auto"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "No mirror images (Mirror Takes is Automatic), because %s." % why in proc.stdout
    assert "from 1 action without mirror images" in proc.stdout
    assert (tmp_path / "auto" / "baked.blend").is_file()
