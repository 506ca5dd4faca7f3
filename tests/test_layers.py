"""The add-on's layers only look down: panels -> operators -> bridge
(bridge) -> core, read from the source with ``ast`` (no Blender).

Every import is counted, at module level or inside a function: a lazy import
that runs back up is still a dependency that runs back up."""

import ast
import glob
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lower number = lower layer. A module may import its own layer or lower ones.
LAYERS = {"core": 0, "bridge": 1, "operators": 2, "panels": 3, "cli": 3}
TOP = 4                                   # the package's __init__ and registration: may import all
TOP_MODULES = ("__init__", "registration")
FORBIDDEN_IN_CORE = ("bpy", "mathutils", "gpu", "gpu_extras", "bpy_extras", "bmesh", "addon_utils")


def addon_modules(root=REPO):
    """{dotted name relative to the add-on ('' for its __init__): file path}."""
    out = {}
    for name in TOP_MODULES:
        path = os.path.join(root, name + ".py")
        if os.path.isfile(path):
            out["" if name == "__init__" else name] = path
    for package in LAYERS:
        folder = os.path.join(root, package)
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, root).replace(os.sep, ".")
            for f in filenames:
                if f.endswith(".py"):
                    stem = f[:-3]
                    out[rel if stem == "__init__" else rel + "." + stem] = os.path.join(dirpath, f)
    return out


def layer_of(module):
    head = module.split(".")[0]
    return LAYERS.get(head, TOP)


def _package_of(module, path):
    """The package a module's relative imports start from."""
    if os.path.basename(path) == "__init__.py":
        return module
    return module.rpartition(".")[0]


def _resolve(base, level, package):
    """``from <level dots><base>`` inside ``package``: the dotted target, or None
    when it climbs out of the add-on."""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    parts = parts[:len(parts) - (level - 1)]
    if base:
        parts += base.split(".")
    return ".".join(parts)


def imports_of(module, path, modules):
    """(internal modules imported, external top-level names imported) by one file."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = _package_of(module, path)
    internal, external = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                external.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                external.add((node.module or "").split(".")[0])
                continue
            target = _resolve(node.module, node.level, package)
            if target is None:
                continue
            for alias in node.names:
                sub = (target + "." + alias.name) if target else alias.name
                if sub in modules:          # `from . import module`
                    internal.add(sub)
                elif target in modules:     # `from .module import name`
                    internal.add(target)
    internal.discard(module)
    return internal, external


def import_graph(root=REPO):
    modules = addon_modules(root)
    graph, external = {}, {}
    for module, path in modules.items():
        graph[module], external[module] = imports_of(module, path, modules)
    return graph, external


def upward_imports(graph):
    return sorted((m, t) for m, targets in graph.items() for t in targets if layer_of(t) > layer_of(m))


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


GRAPH, EXTERNAL = import_graph()


def test_the_walk_sees_every_layer():
    heads = {m.split(".")[0] for m in GRAPH}
    assert set(LAYERS) <= heads
    assert len([m for m in GRAPH if m.startswith("core.")]) > 10
    # The walk resolves relative imports (a bake operator imports its bridge).
    assert "bridge.bake_job" in GRAPH["operators.bake"] and "bridge.bake" in GRAPH["bridge.bake_job"]
    # ... and goes into core's packages, across them and up to core's own modules.
    packages = {m.split(".")[1] for m in GRAPH if m.startswith("core.") and m.count(".") >= 2}
    assert {"bake", "database", "io", "maths", "measure", "retarget", "skeleton"} <= packages
    assert "core.database.feature_spec" in GRAPH["core.bake.matching"]
    assert "core.errors" in GRAPH["core.io.bvh_data"]


def test_no_import_runs_up_a_layer():
    assert upward_imports(GRAPH) == []


def test_core_imports_no_blender():
    bad = sorted((m, e) for m, ext in EXTERNAL.items() if layer_of(m) == 0 for e in ext if e in FORBIDDEN_IN_CORE)
    assert bad == []


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def _blender_classes(tree):
    """Names of the classes a module defines on a bpy.types base, and its ``classes`` list (None if none)."""
    defined = [node.name for node in tree.body if isinstance(node, ast.ClassDef)
               and any(ast.unparse(b).startswith("bpy.types.") for b in node.bases)]
    listed = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "classes" for t in node.targets):
            listed = [ast.unparse(e) for e in node.value.elts]
    return defined, listed


def test_registration_lists_classes_per_module():
    """Each module that defines Blender classes lists them in ``classes``, as
    Blender's bundled add-ons do, and the registration module registers it."""
    with open(os.path.join(REPO, "registration.py"), encoding="utf-8") as fh:
        registration = fh.read()
    for module, path in addon_modules().items():
        with open(path, encoding="utf-8") as fh:
            defined, listed = _blender_classes(ast.parse(fh.read(), path))
        if not defined:
            continue
        assert listed is not None and set(defined) <= set(listed), module
        assert re.search(r"\b%s\b" % module.rpartition(".")[2], registration), module


# The checks themselves, on small made-up trees (so they are known to be able to fail).


def _tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    modules = addon_modules(str(tmp_path))
    return {m: imports_of(m, p, modules)[0] for m, p in modules.items()}


@pytest.mark.parametrize("files, upward, loops", [
    ({"core/__init__.py": "", "core/a.py": "from . import b\n", "core/b.py": "import numpy\n",
      "bridge/__init__.py": "", "bridge/x.py": "from ..core import a\n"},
     [], []),
    ({"core/__init__.py": "", "bridge/__init__.py": "", "operators/__init__.py": "",
      "operators/op.py": "", "bridge/x.py": "def f():\n    from ..operators.op import g\n"},
     [("bridge.x", "operators.op")], []),
    ({"core/__init__.py": "", "bridge/__init__.py": "",
      "bridge/p.py": "from .q import A\n",
      "bridge/q.py": "def f():\n    from . import p\n"},
     [], [["bridge.p", "bridge.q"]]),
    # Inside core's packages: a module two packages deep that reaches up to the bridge,
    # lazily, is caught; one that imports a sibling package is not.
    ({"core/__init__.py": "", "core/bake/__init__.py": "", "core/maths/__init__.py": "",
      "core/maths/t.py": "import numpy\n", "bridge/__init__.py": "", "bridge/store.py": "",
      "core/bake/run.py": "from ..maths import t\ndef f():\n    from ...bridge import store\n"},
     [("core.bake.run", "bridge.store")], []),
    ({"core/__init__.py": "", "core/bake/__init__.py": "", "core/io/__init__.py": "",
      "core/io/bvh.py": "from ..bake.legs import lock\n", "core/bake/legs.py": "from ..io import bvh\nlock = 1\n"},
     [], [["core.bake.legs", "core.io.bvh"]]),
])
def test_the_checks_catch_made_up_faults(tmp_path, files, upward, loops):
    graph = _tree(tmp_path, files)
    assert upward_imports(graph) == upward
    assert cycles(graph) == loops


# No module path games outside tests/: tools/ and bench/ are packages run with
# ``python -m`` from the repository root, the add-on uses relative imports.

LOADERS_BY_FILE = ("spec_from_file_location", "SourceFileLoader", "run_path", "load_source")


def path_games(source, name="<source>"):
    """[(line, what)] of the places a source changes ``sys.path`` (a call of one
    of its methods, or an assignment to it or an item of it) or loads a module
    by its file name."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = ast.unparse(node.func.value)
            if target == "sys.path":
                out.append((node.lineno, "sys.path." + node.func.attr))
            elif node.func.attr in LOADERS_BY_FILE:
                out.append((node.lineno, node.func.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in LOADERS_BY_FILE:
            out.append((node.lineno, node.func.id))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                text = ast.unparse(t)
                if text == "sys.path" or text.startswith("sys.path["):
                    out.append((node.lineno, "assignment to " + text))
    return out


def repository_sources(root=REPO):
    """Paths (relative to the root) of the tracked kind of .py files outside
    tests/: the add-on, tools/ and bench/ (hidden folders, virtual
    environments and out/ are not the repository's)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("__pycache__", "out")
                       and not (rel == "." and d == "tests")]
        out += [os.path.normpath(os.path.join(rel, f)) for f in filenames if f.endswith(".py")]
    return sorted(out)


def test_nothing_outside_tests_changes_sys_path_or_loads_by_file():
    sources = repository_sources()
    assert {os.path.join("tools", "mm_cli.py"), os.path.join("bench", "bench_bake.py"), "registration.py"} <= set(sources)
    assert not [s for s in sources if s.startswith("tests" + os.sep)]
    found = []
    for rel in sources:
        with open(os.path.join(REPO, rel), encoding="utf-8") as fh:
            found += [(rel,) + g for g in path_games(fh.read(), rel)]
    assert found == []
    # Nor do the commands and the walkthrough script the README and docs/ give users.
    pages = ["README.md"] + sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "**", "*.md"),
                                                                               recursive=True))
    assert os.path.join("docs", "user", "walkthrough.md") in pages
    for page in pages:
        with open(os.path.join(REPO, page), encoding="utf-8") as fh:
            assert not re.search(r"sys\.path\.(insert|append)\(", fh.read()), page


@pytest.mark.parametrize("source, found", [
    ("import sys\nsys.path.insert(0, '.')\n", [(2, "sys.path.insert")]),
    ("import sys, os\nsys.path.append(os.getcwd())\n", [(2, "sys.path.append")]),
    ("import sys\nsys.path[:0] = ['x']\n", [(2, "assignment to sys.path[:0]")]),
    ("import sys\nsys.path += ['x']\n", [(2, "assignment to sys.path")]),
    ("import importlib.util as u\nspec = u.spec_from_file_location('m', 'm.py')\n",
     [(2, "spec_from_file_location")]),
    ("from runpy import run_path\nrun_path('x.py')\n", [(2, "run_path")]),
    ("import sys\nprint(sys.path)\nfrom tools import addon_session\n", []),
])
def test_the_path_check_reads_what_it_should(source, found):
    assert path_games(source) == found
