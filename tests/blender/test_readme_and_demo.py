"""The walkthrough script (docs/user/walkthrough.md) runs as written; the README's demo command
succeeds (fresh processes)."""

import json
import os
import re
import subprocess
import sys

from sample_paths import REPO


def _env():
    return {k: v for k, v in os.environ.items() if k != "BLENDER_USER_RESOURCES"}


def test_walkthrough_script_runs_as_written(tmp_path):
    with open(os.path.join(REPO, "docs", "user", "walkthrough.md"), encoding="utf-8") as fh:
        text = fh.read()
    block = re.search(r"<!-- walkthrough -->\n```python\n(.*?)```", text, re.S)
    assert block, "docs/user/walkthrough.md lost its walkthrough block"
    out = os.path.join(REPO, "out", "walkthrough")
    if os.path.exists(os.path.join(out, "baked.fbx")):
        os.remove(os.path.join(out, "baked.fbx"))
    # As the walkthrough page says: fed to the bpy Python started in the repository root.
    proc = subprocess.run([sys.executable, "-"], input=block.group(1), cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "searches / jumps" in proc.stdout
    assert os.path.getsize(os.path.join(out, "baked.fbx")) > 10000


def test_demo_command(tmp_path):
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        assert ".venv-5.3/bin/python -m tools.demo --out out/demo" in fh.read()   # the command run below
    out = tmp_path / "demo"
    proc = subprocess.run([sys.executable, "-m", "tools.demo", "--out", str(out),
                           "--video-frames", "6", "--tiles", "4"], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("contact_sheet.png", "top_view.png", "baked.bvh", "baked.glb", "report.json", "coverage.json", "demo.blend",
                 "demo_0001-0006.mp4"):
        assert (out / name).is_file() and (out / name).stat().st_size > 1000, name
    assert "tracking error" in proc.stdout and "worst moments" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["frames"] > 300
    # The demo's moves: a stand, a run, a stand, a walk and a stand, each mostly on its tags.
    assert [m["query"] for m in report["moves"]] == ["idle", "run", "idle", "walk", "idle"]
    assert all(m["share"] > 0.8 for m in report["moves"]), report["moves"]
    assert "move at 25" in proc.stdout
    # A real PNG was written.

    with open(out / "contact_sheet.png", "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
