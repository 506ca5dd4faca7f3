"""The add-on runs on the numpy each Blender brings: 1.26 with Blender 4.2 to 5.0,
2.x with 5.1 and later. Every numpy name the shipped code spells out
(``np.name``, ``np.linalg.name``...) must exist in the numpy installed here,
without a deprecation warning. CI runs this under both numpy series, so a
name that one of them lacks (removed in 2.0, or added after 1.26) fails there,
even on a code path no other test reaches."""

import ast
import os
import warnings

import numpy as np

from sample_paths import REPO

SHIPPED = ("core", "bridge", "operators", "panels", "tools")


def _sources():
    for top in SHIPPED:
        for folder, _dirs, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                if name.endswith(".py"):
                    yield os.path.join(folder, name)
    for name in os.listdir(REPO):
        if name.endswith(".py"):
            yield os.path.join(REPO, name)


def _numpy_names(path):
    """Dotted numpy names used in a file, e.g. {'linalg.norm', 'einsum'}."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    aliases = {"numpy"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == "numpy")
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = []
        inner = node
        while isinstance(inner, ast.Attribute):
            chain.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and inner.id in aliases:
            names.add(".".join(reversed(chain)))
    # Keep only the longest chains (np.linalg.norm covers np.linalg).
    return {n for n in names if not any(m.startswith(n + ".") for m in names)}


def _resolve(dotted):
    obj = np
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_numpy_name_exists_here():
    used = {}
    for path in _sources():
        for name in _numpy_names(path):
            used.setdefault(name, os.path.relpath(path, REPO))
    assert len(used) > 50      # the scan found the code's numpy use
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, where in sorted(used.items()):
            try:
                _resolve(name)
            except (AttributeError, DeprecationWarning) as exc:
                missing.append("np.%s (%s): %s" % (name, where, exc))
    assert not missing, "numpy %s lacks: %s" % (np.__version__, "; ".join(missing))


def test_the_scan_sees_a_missing_name(tmp_path):
    script = tmp_path / "uses.py"
    script.write_text("import numpy as xp\nxp.linalg.norm([1])\nxp.not_a_numpy_function(2)\n")
    names = _numpy_names(str(script))
    assert names == {"linalg.norm", "not_a_numpy_function"}
    assert not hasattr(np, "not_a_numpy_function")
