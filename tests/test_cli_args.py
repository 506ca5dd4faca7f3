"""The bake command (cli/bake_args.py) checks every argument before anything
is done: each bad call is one sentence (Failure), never a traceback or
argparse's exit 2. In-process and without bpy: parse() runs before anything
imports Blender."""

import os
import sys

import pytest

from sample_paths import REPO, SAMPLE_TAKE, SAMPLE_TPOSE, SAMPLES
from addon_package import addon

bake_args = addon("cli.bake_args")
commands = addon("cli.commands")


@pytest.fixture
def base(tmp_path):
    return ["--bvh", SAMPLE_TAKE, "--out", str(tmp_path / "out")]


def test_good_arguments(base, tmp_path):
    args = bake_args.parse(base)
    assert (args.fps, args.scale, args.axis_forward, args.axis_up, args.scenario) == (24.0, 0.01, "-Z", "Y", "showcase")
    args = bake_args.parse(base + ["--fps", "23.976", "--scale", "1", "--axis-forward", "-y", "--axis-up", "z",
                                "--scenario", "circle", "--tag-query", "(walk or run) and not stop",
                                "--tpose", SAMPLE_TPOSE, "--dance-card", os.path.join(SAMPLES, "jl_mm_dance_card.toml")])
    assert (args.fps, args.scale, args.axis_forward, args.axis_up) == (23.976, 1.0, "-Y", "Z")
    scenario = tmp_path / "path.json"
    scenario.write_text('{"points": []}')   # a file is checked when the controller reads it
    assert bake_args.parse(base + ["--scenario", str(scenario), "--fps", "1000"]).scenario == str(scenario)
    # Mirror Takes: unset (the add-on's default), a choice, on alone, off as before.
    assert bake_args.parse(base).mirror_takes is None
    assert bake_args.parse(base + ["--mirror-takes"]).mirror_takes == "on"
    assert bake_args.parse(base + ["--mirror-takes", "AUTO"]).mirror_takes == "auto"
    assert bake_args.parse(base + ["--mirror-takes=off"]).mirror_takes == "off"
    assert bake_args.parse(base + ["--no-mirror-takes"]).mirror_takes == "off"


BAD = [
    (["--fps", "0"], "--fps must be a frame rate from 1 to 1000, not 0."),
    (["--fps", "nan"], "--fps must be a frame rate from 1 to 1000, not nan."),
    (["--fps", "inf"], "--fps must be a frame rate from 1 to 1000, not inf."),
    (["--fps", "-24"], "--fps must be a frame rate from 1 to 1000, not -24."),
    (["--fps", "100000"], "--fps must be a frame rate from 1 to 1000, not 100000."),
    (["--fps", "0.5"], "--fps must be a frame rate from 1 to 1000, not 0.5."),
    (["--fps", "abc"], "Argument --fps: invalid float value: 'abc'."),
    (["--scale", "0"], "--scale must be a number from 0.0001 to 1e+06, not 0."),
    (["--scale", "-0.01"], "--scale must be a number from 0.0001 to 1e+06, not -0.01."),
    (["--scale", "nan"], "--scale must be a number from 0.0001 to 1e+06, not nan."),
    (["--scale", "1e300"], "--scale must be a number from 0.0001 to 1e+06, not 1e+300."),
    (["--axis-forward", "Q"], "--axis-forward must be one of X, Y, Z, -X, -Y, -Z, not 'Q'."),
    (["--axis-up", "up"], "--axis-up must be one of X, Y, Z, -X, -Y, -Z, not 'up'."),
    (["--axis-forward", "Y"], "--axis-forward Y and --axis-up Y are on the same axis: choose two different axes."),
    (["--axis-forward", "-X", "--axis-up", "X"], "--axis-forward -X and --axis-up X are on the same axis"),
    (["--handedness", "UP"], "Argument --handedness: invalid choice: 'UP'"),
    (["--mirror-takes", "maybe"], "Argument --mirror-takes: invalid choice: 'maybe'"),
    (["--scenario", "nope"], "--scenario 'nope' is neither a built-in scenario (circle, showcase, straight_walk) nor a file."),
    (["--tag-query", "(walk"], "--tag-query: Tag query '(walk': expected ')' at position 5"),
    (["--tag-query", "walk and"], "--tag-query: Tag query 'walk and': expected a tag name after 'and'"),
    (["--tpose", "missing.bvh"], "--tpose file not found: missing.bvh"),
    (["--dance-card", SAMPLES], "--dance-card file not found: %s" % SAMPLES),
    (["--no-such-option"], "Unrecognized arguments: --no-such-option."),
]


@pytest.mark.parametrize("extra, message", BAD, ids=[" ".join(e) for e, _m in BAD])
def test_bad_argument_is_one_sentence(base, extra, message):
    with pytest.raises(bake_args.Failure) as info:
        bake_args.parse(base + extra)
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text


def test_bad_paths(tmp_path):
    a_file = tmp_path / "taken.txt"
    a_file.write_text("x")
    cases = [
        (["--bvh", str(tmp_path / "missing.bvh"), "--out", str(tmp_path / "o")],
         "BVH file not found: %s" % (tmp_path / "missing.bvh")),
        (["--bvh", str(tmp_path), "--out", str(tmp_path / "o")], "The folder %s holds no .bvh file." % tmp_path),
        (["--bvh", SAMPLE_TAKE, str(a_file), "--out", str(tmp_path / "o")],
         "%s is not a .bvh file: give BVH files or folders of them." % a_file),
        (["--bvh", SAMPLE_TAKE, SAMPLE_TAKE, "--out", str(tmp_path / "o")], "%s is given twice" % SAMPLE_TAKE),
        (["--bvh", SAMPLE_TAKE, "--bvh", "gone.bvh", "--out", str(tmp_path / "o")], "BVH file not found: gone.bvh"),
        (["--bvh", SAMPLE_TAKE, "--out", str(a_file)], "--out %s is a file: give a folder" % a_file),
        (["--bvh", SAMPLE_TAKE, "--out", str(a_file / "sub")], "--out %s cannot be made: %s is a file." % (a_file / "sub", a_file)),
        (["--out", str(tmp_path / "o")], "Give the takes with --bvh FILE, or an exported database with --database"),
        (["--bvh", SAMPLE_TAKE], "The argument --out is required (or --save-database alone"),
    ]
    for argv, message in cases:
        with pytest.raises(bake_args.Failure) as info:
            bake_args.parse(argv)
        assert str(info.value).startswith(message), (argv, str(info.value))
    assert sorted(os.listdir(tmp_path)) == ["taken.txt"]   # nothing made while checking


def test_bvh_takes_files_and_folders_sorted_by_file_name(tmp_path):
    folder = tmp_path / "takes"
    folder.mkdir()
    for name in ("b_walk.bvh", "a_run.BVH", "notes.txt"):
        (folder / name).write_text("x")
    (folder / "sub.bvh").mkdir()   # a folder named like a take is not a take
    other = tmp_path / "c_idle.bvh"
    other.write_text("x")
    out = ["--out", str(tmp_path / "o")]
    args = bake_args.parse(["--bvh", str(other), str(folder)] + out)
    assert [os.path.basename(p) for p in args.bvh] == ["a_run.BVH", "b_walk.bvh", "c_idle.bvh"]
    # Several files after one --bvh, or --bvh repeated: the same list.
    files = [str(folder / "b_walk.bvh"), str(other)]
    assert bake_args.parse(["--bvh"] + files + out).bvh == bake_args.parse(
        ["--bvh", files[1], "--bvh", files[0]] + out).bvh == [files[0], files[1]]


def test_main_reports_one_line_and_status_1(tmp_path, capsys):
    """The command on bad arguments: status 1, one line on stderr, and Blender is never loaded."""
    loaded = "bpy" in sys.modules
    assert commands.main(["bake", "--bvh", SAMPLE_TAKE, "--out", str(tmp_path / "o"), "--fps", "nan"]) == 1
    err = capsys.readouterr().err
    assert err == "motion_matching: --fps must be a frame rate from 1 to 1000, not nan.\n"
    assert ("bpy" in sys.modules) == loaded


def test_scenario_facing_is_read_from_the_file(tmp_path):
    assert bake_args.scenario_has_facing(os.path.join(SAMPLES, "paths", "strafe.json"))
    assert not bake_args.scenario_has_facing(os.path.join(SAMPLES, "paths", "zigzag.json"))
    assert not bake_args.scenario_has_facing("showcase")


def test_run_by_file_without_the_repository_on_the_path_says_how(tmp_path):
    """``python tools/bake_args.py`` (not ``-m``, no PYTHONPATH) cannot import
    tools/: one line saying how to run it, status 1, no traceback."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, os.path.join(REPO, "tools", "mm_cli.py"), "--help"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == ["motion_matching: run it from the repository root as python -m tools.mm_cli, "
                                        "or use blender -b -c motion_matching bake inside Blender."]


def test_a_scenarios_tag_queries_keep_their_points_at_another_speed(tmp_path):
    path = tmp_path / "moves.json"
    path.write_text('{"points": [{"t": 0, "x": 0, "y": 0, "query": "walk"}, '
                    '{"t": 4, "x": 0, "y": -4, "query": "run"}, {"t": 8, "x": 0, "y": -16}]}')
    faster = bake_args.load_scenario(str(path), 2.0)
    assert faster.queries == ((0.0, "walk"), (2.0, "run"))


def test_the_ground_is_checked_before_blender_starts(base, tmp_path):
    (tmp_path / "hills.obj").write_bytes(b"x")
    assert bake_args.parse(base + ["--ground", str(tmp_path / "hills.obj")]).ground == str(tmp_path / "hills.obj")
    for given, words in ((str(tmp_path / "hills.png"), "unknown kind of file '.png'"),
                         (str(tmp_path / "gone.obj"), "--ground file not found"),
                         (str(tmp_path / "scene.blend"), "name the mesh in the .blend")):
        with pytest.raises(bake_args.Failure, match=words):
            bake_args.parse(base + ["--ground", given])
