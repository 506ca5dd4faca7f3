"""No function in core/ runs over about 80 lines without saying why: a function
that long either gets split into its stages or carries ``# long: <reason>`` on
its ``def`` line or the line before (read with ``ast``, no Blender)."""

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = os.path.join(REPO, "core")
LIMIT = 80

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


def test_no_long_function_in_core_without_a_reason():
    found = []
    for name in sorted(os.listdir(CORE)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(CORE, name), encoding="utf-8") as fh:
            found += [(name,) + f for f in long_functions(fh.read())]
    assert found == []


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
