"""tools/mm_cli.py (the extension's bake command for a checkout) leaves nothing
behind and never touches the user's Blender profile: each run gets its own
throw-away user folder made before bpy is imported and removes it (and
Blender's session folder) at the end, so two runs at once both succeed; bad
calls and unexpected errors are one line, status 1, with nothing written.
Every process here runs with HOME, XDG_CONFIG_HOME and TMPDIR pointed at empty
temporary folders."""

import os
import subprocess
import sys

from sample_paths import REPO, SAMPLE_TAKE

CLI = ["-m", "tools.mm_cli"]   # as README says, from the repository root


def _env(tmp_path, **extra):
    home, temp = tmp_path / "home", tmp_path / "temp"
    home.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("BLENDER_USER_RESOURCES", "MM_CLI_TRACEBACK")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), TMPDIR=str(temp), TMP=str(temp),
               TEMP=str(temp), **extra)
    return env


def _untouched(tmp_path):
    """Nothing under HOME's Blender config folder, nothing left in the temp folder."""
    config = tmp_path / "home" / ".config" / "blender"
    assert not config.exists() or not any(config.iterdir()), sorted(str(p) for p in config.rglob("*"))
    assert sorted(os.listdir(tmp_path / "temp")) == []


def _one_line(proc):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert [line for line in lines if line.startswith("motion_matching: ")] == lines[-1:], proc.stderr[-2000:]
    return lines[-1]


def test_two_runs_at_once_leave_nothing_behind(tmp_path):
    env = _env(tmp_path)
    # The second plays the path faster: its scaled scenario file is made in the temp folder and removed.
    procs = [subprocess.Popen([sys.executable, *CLI, "--bvh", SAMPLE_TAKE, "--scenario", "straight_walk",
                               "--fps", "24", "--out", str(tmp_path / ("run%d" % i))]
                              + (["--speed-scale", "1.5"] if i else []),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
             for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert "searches / jumps" in out and "lock exists" not in err
    for i in range(2):
        assert (tmp_path / ("run%d" % i) / "baked.blend").is_file()
    _untouched(tmp_path)


def test_bad_calls_are_one_line_with_nothing_written(tmp_path):
    env = _env(tmp_path)
    taken = tmp_path / "taken.txt"
    taken.write_text("x")
    for extra, message in ((["--fps", "0"], "--fps must be a frame rate"),
                           (["--fps", "-24"], "--fps must be a frame rate"),
                           (["--scale", "0"], "--scale must be a number"),
                           (["--axis-forward", "Q"], "--axis-forward must be one of"),
                           (["--scenario", "unknown"], "--scenario 'unknown' is neither"),
                           (["--out", str(taken)], "is a file"),
                           (["--handedness"], "Argument --handedness: expected one argument.")):
        argv = ["--bvh", SAMPLE_TAKE, "--out", str(tmp_path / "o")] + extra
        proc = subprocess.run([sys.executable, *CLI, *argv], capture_output=True, text=True, timeout=120, env=env,
                              cwd=REPO)
        assert message in _one_line(proc), extra
        assert proc.stdout == ""
    assert not (tmp_path / "o").exists()
    _untouched(tmp_path)


# The wrapper with the extension's bake replaced by one that fails unexpectedly.
DRIVER = r'''
import os, sys
from tools import addon_session, mm_cli
start = addon_session.start
def failing_start(*args, **kwargs):
    module = start(*args, **kwargs)
    def run(checked):
        raise ValueError("boom")
    addon_session.addon_module("cli.bake").run = run
    return module
addon_session.start = failing_start
code = mm_cli.main(sys.argv[1:])
import bpy
print("enabled:", sorted(k for k in bpy.context.preferences.addons.keys() if k.endswith("motion_matching")))
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
'''


def test_unexpected_error_is_one_line_and_cleans_up(tmp_path):
    proc = subprocess.run([sys.executable, "-c", DRIVER, "--bvh", SAMPLE_TAKE, "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=300, env=_env(tmp_path), cwd=REPO)
    line = _one_line(proc)
    assert line.startswith("motion_matching: unexpected error") and "ValueError: boom" in line
    assert "enabled: []" in proc.stdout
    assert not (tmp_path / "o").exists()
    _untouched(tmp_path)
