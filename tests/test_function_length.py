"""No function in core/, bridge/, cli/ or tools/ (their packages included) runs
over about 80 lines without saying why: a function that long either gets split
into its stages or carries ``# long: <reason>`` on its ``def`` line or the line
before; no file there runs over about 400 lines without ``long file: <reason>``
in its first lines (read with ``ast`` and as text, no Blender)."""

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("core", "bridge", "cli", "tools")
LIMIT = 80
FILE_LIMIT = 400


def long_functions(source, limit=LIMIT):
    """[(name, first line, lines)] of functions longer than ``limit`` lines
    (def to last line, docstring included) without a ``# long:`` reason."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        length = node.end_lineno - first + 1
        if length <= limit:
            continue
        near = lines[node.lineno - 1] + "\n" + (lines[first - 2] if first >= 2 else "")
        if "# long:" not in near:
            out.append((node.name, node.lineno, length))
    return out


def python_files(root):
    """Every .py file under ``root`` (a folder such as core/), its packages
    included, as paths relative to it."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.relpath(os.path.join(dirpath, f), root) for f in sorted(filenames) if f.endswith(".py")]
    return out


@pytest.mark.parametrize("folder, packages", [
    ("core", {"bake", "database", "io", "maths", "measure", "retarget", "skeleton"}),
    ("bridge", {"bake", "blender", "database", "files", "preview", "retarget"}),
    ("cli", {""}),
    ("tools", {""}),
])
def test_the_walk_reaches_every_package(folder, packages):
    assert packages <= {os.path.dirname(f) for f in python_files(os.path.join(REPO, folder))}


def test_the_walk_goes_into_packages_and_skips_caches(tmp_path):
    for rel in ("a.py", "pkg/__init__.py", "pkg/sub/b.py", "pkg/__pycache__/c.py", "notes.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert python_files(str(tmp_path)) == ["a.py", os.path.join("pkg", "__init__.py"),
                                           os.path.join("pkg", "sub", "b.py")]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_long_function_without_a_reason(folder):
    root = os.path.join(REPO, folder)
    found = []
    for name in python_files(root):
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            found += [(name,) + f for f in long_functions(fh.read())]
    assert found == []


def long_file_reason(source, limit=FILE_LIMIT):
    """None when ``source`` is at most ``limit`` lines or says in its first
    lines why it is longer (``long file: <reason>``); else its line count."""
    lines = source.splitlines()
    if len(lines) <= limit or any("long file:" in line for line in lines[:30]):
        return None
    return len(lines)


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_file_over_400_lines_without_a_reason(folder):
    root = os.path.join(REPO, folder)
    assert python_files(root)
    found = []
    for name in python_files(root):
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            n = long_file_reason(fh.read())
        if n is not None:
            found.append((name, n))
    assert found == []


@pytest.mark.parametrize("source, found", [
    ("x = 1\n" * 401, 401),
    ("x = 1\n" * 400, None),
    ('"""A table.\n\nlong file: one table of names.\n"""\n' + "x = 1\n" * 500, None),
])
def test_the_file_check_counts_lines_and_reads_reasons(source, found):
    assert long_file_reason(source) == found


def _body(n):
    return "".join("    x = %d\n" % i for i in range(n))


@pytest.mark.parametrize("source, found", [
    ("def f():\n" + _body(80), [("f", 1, 81)]),
    ("def f():\n" + _body(79), []),
    ("def f():  # long: one table\n" + _body(90), []),
    ("# long: one table\ndef f():\n" + _body(90), []),
    ("@dec\ndef f():\n" + _body(79), [("f", 2, 81)]),
    ("class A:\n    def g(self):\n" + "".join("        y = %d\n" % i for i in range(85)), [("g", 2, 86)]),
])
def test_the_check_counts_lines_and_reads_reasons(source, found):
    assert long_functions(source) == found
