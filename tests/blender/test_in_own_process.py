"""The modules Blender 4.2 runs in a pytest process of their own (see
bl_helpers.OWN_PROCESS): run there, every test of them must pass."""

import os
import subprocess
import sys

import pytest

from bl_helpers import ISOLATED_ENV, OWN_PROCESS, needs_own_process
from tools import addon_session


@pytest.mark.skipif(not needs_own_process(), reason="this Blender runs them in the suite's own process")
@pytest.mark.parametrize("module", OWN_PROCESS)
def test_module_passes_in_a_process_of_its_own(addon, module):
    env = dict(os.environ, **{ISOLATED_ENV: "1"})
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           os.path.join("tests", "blender", module)],
                          cwd=addon_session.REPO, env=env, capture_output=True, text=True, timeout=1800)
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and " failed" not in proc.stdout, tail
