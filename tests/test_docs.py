"""The documentation holds together (no Blender): the README stays short, every
relative link in the README, docs/ and bench/RESULTS.md reaches a file of the
repository (and its #anchor a heading there, by GitHub's rule), no page cites an
issue number, and the README keeps the fresh-machine commands that .ci/run runs."""

import glob
import os
import re

import pytest

from sample_paths import REPO

README_MAX_LINES = 150
SETUP_COMMAND = "python3.13 -m venv .venv-5.3 && .venv-5.3/bin/pip install -r requirements/blender-5.3.txt"
TEST_COMMAND = ".venv-5.3/bin/python -m pytest"
DEMO_COMMAND = ".venv-5.3/bin/python -m tools.demo --out out/demo"
WALKTHROUGH = os.path.join("docs", "user", "walkthrough.md")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_ISSUE = re.compile(r"\bissues?[ -]?#?\d+|(?<![\w/&])#\d+\b", re.I)


def doc_pages(root=REPO):
    """The pages checked: README.md, every .md under docs/, bench/RESULTS.md (relative paths)."""
    pages = ["README.md", os.path.join("bench", "RESULTS.md")]
    pages += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "**", "*.md"),
                                                                 recursive=True))
    return pages


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code removed."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, re.sub(r"`[^`]*`", "``", line)))
    return out


def slug(heading):
    """GitHub's anchor for a heading's text: markup dropped, lower case,
    everything but letters, digits, underscores, hyphens and spaces removed,
    spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)     # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                           # inline HTML
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor the headings of a page give (a repeated heading gets -1, -2, ...)."""
    seen, out = {}, set()
    for _, line in prose_lines(text):
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2).replace("``", ""))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(text):
    """(line number, target) of every Markdown link and image outside code."""
    found, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            found += [(n, m.group(1)) for m in _LINK.finditer(re.sub(r"`[^`]*`", "``", line))]
    return found


def broken_links(page, root=REPO):
    """Sentences for each relative link of ``page`` (a path relative to ``root``)
    that does not reach a file inside ``root``, or whose #anchor is no heading of it."""
    with open(os.path.join(root, page), encoding="utf-8") as fh:
        text = fh.read()
    out = []
    for n, target in links(text):
        if _SCHEME.match(target):
            continue                                   # https:, mailto: ...: not the repository's
        path, _, anchor = target.partition("#")
        if path:
            full = os.path.normpath(os.path.join(root, os.path.dirname(page), path))
            if os.path.relpath(full, root).startswith(os.pardir):
                out.append("%s:%d: %s leaves the repository" % (page, n, target))
                continue
            if not os.path.isfile(full):
                out.append("%s:%d: %s is no file of the repository" % (page, n, target))
                continue
        else:
            full = os.path.join(root, page)
        if anchor:
            if not full.endswith(".md"):
                out.append("%s:%d: %s has an anchor into a file that is not Markdown" % (page, n, target))
                continue
            with open(full, encoding="utf-8") as fh:
                if anchor not in anchors(fh.read()):
                    out.append("%s:%d: %s: no heading of %s has the anchor #%s"
                               % (page, n, target, os.path.relpath(full, root), anchor))
    return out


def too_long(text, limit=README_MAX_LINES):
    """A sentence when ``text`` runs over ``limit`` lines, else None."""
    n = len(text.splitlines())
    return None if n <= limit else "%d lines; keep it to about %d and move detail into docs/" % (n, limit)


def issue_citations(text):
    """(line number, the words) of every "issue 10", "(issue 7)", "issue-3", "#12" in the text."""
    return [(n, m.group(0)) for n, line in enumerate(text.splitlines(), 1) for m in _ISSUE.finditer(line)]


def _read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as fh:
        return fh.read()


# ---------------------------------------------------------------- the repository's pages

def test_readme_is_short():
    assert too_long(_read("README.md")) is None


def test_the_pages_are_there():
    pages = doc_pages()
    for rel in ("README.md", os.path.join("bench", "RESULTS.md"), WALKTHROUGH, os.path.join("docs", "maths.md"),
                os.path.join("docs", "dev", "architecture.md"), os.path.join("docs", "dev", "npz-format.md")):
        assert rel in pages


def test_every_relative_link_resolves():
    broken = [b for page in doc_pages() for b in broken_links(page)]
    assert broken == []


def test_no_page_cites_an_issue_number():
    found = [(page, n, words) for page in doc_pages() for n, words in issue_citations(_read(page))]
    assert found == []


def test_readme_keeps_the_fresh_machine_and_demo_commands():
    lines = [line.strip() for line in _read("README.md").splitlines()]
    for command in (SETUP_COMMAND, TEST_COMMAND, DEMO_COMMAND):
        assert command in lines, command
    assert os.path.isfile(os.path.join(REPO, "requirements", "blender-5.3.txt"))


def test_ci_page_names_a_requirements_file_for_every_ci_version():
    ci = _read(os.path.join("docs", "dev", "ci.md"))
    run = _read(os.path.join(".ci", "run"))
    versions = re.search(r"VERSIONS=\$\{MM_CI_VERSIONS:-([0-9. ]+)\}", run).group(1).split()
    assert versions
    for v in versions:
        assert "requirements/blender-%s.txt" % v in ci, v
    for req in re.findall(r"requirements/blender-[0-9.]+\.txt", ci):
        assert os.path.isfile(os.path.join(REPO, req)), req


def test_walkthrough_page_holds_the_script_block():
    text = _read(WALKTHROUGH)
    block = re.search(r"<!-- walkthrough -->\n```python\n(.*?)```", text, re.S)
    assert block and "addon_session.start()" in block.group(1) and "ops.bake()" in block.group(1)


# ---------------------------------------------------------------- the checks catch what they should

@pytest.mark.parametrize("heading, anchor", [
    ("Set up and run the tests (fresh machine)", "set-up-and-run-the-tests-fresh-machine"),
    ("The database file (.npz)", "the-database-file-npz"),
    ("Time, stride and orientation warping", "time-stride-and-orientation-warping"),
    ("Fields of report.json", "fields-of-reportjson"),
    ("`core/io` and [links](x.md)", "coreio-and-links"),
    ("Time warp: off against on", "time-warp-off-against-on"),
    ("snake_case names", "snake_case-names"),
])
def test_slug_follows_github(heading, anchor):
    assert slug(heading) == anchor


def test_repeated_headings_get_numbered_anchors():
    assert anchors("# A\n## A\n### A\n```\n# not a heading\n```\n") == {"a", "a-1", "a-2"}


def _made_up_repo(tmp_path, page_text):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A part\n")
    (tmp_path / "docs" / "pic.png").write_bytes(b"\x89PNG")
    (tmp_path / "README.md").write_text(page_text)
    return broken_links("README.md", str(tmp_path))


def test_good_links_pass(tmp_path):
    text = ("# Top\n\nSee [other](docs/other.md), [its part](docs/other.md#a-part), [here](#top),\n"
            "![pic](docs/pic.png), [web](https://example.com/x#y) and `[code](nowhere.md)`.\n"
            "```\n[in a block](missing.md)\n```\n")
    assert _made_up_repo(tmp_path, text) == []


@pytest.mark.parametrize("link, words", [
    ("[gone](docs/missing.md)", "is no file"),
    ("[dir](docs)", "is no file"),
    ("[bad part](docs/other.md#no-such-part)", "no heading"),
    ("[bad here](#nowhere)", "no heading"),
    ("[out](../outside.md)", "leaves the repository"),
    ("![pic](docs/pic.jpg)", "is no file"),
    ("[pic part](docs/pic.png#x)", "not Markdown"),
])
def test_broken_links_are_found(tmp_path, link, words):
    found = _made_up_repo(tmp_path, "# Top\n\nText with %s in it.\n" % link)
    assert len(found) == 1 and words in found[0] and found[0].startswith("README.md:3:")


@pytest.mark.parametrize("text, found", [
    ("The time warp (issue 10 item 2) plays faster.", ["issue 10"]),
    ("As Issue 7 says", ["Issue 7"]),
    ("see issue-3 and issues 4", ["issue-3", "issues 4"]),
    ("fixed in #12.", ["#12"]),
    ("No issue here, a tissue 5 and section 6, frame #a, colour &#123;", []),
])
def test_issue_citations_are_found(text, found):
    assert [w for _, w in issue_citations(text)] == found


def test_the_length_check_counts_lines():
    assert too_long("line\n" * README_MAX_LINES) is None
    assert too_long("line\n" * (README_MAX_LINES + 1)).startswith("%d lines" % (README_MAX_LINES + 1))
    assert too_long("a\nb\nc", limit=2) is not None and too_long("a\nb", limit=2) is None


def core_modules(root=REPO, layer="core"):
    """'<layer>/<package>/<module>' paths (without .py) of every module of
    ``layer`` (core/ or bridge/)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, layer)):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        out += [os.path.relpath(os.path.join(dirpath, f[:-3]), root).replace(os.sep, "/")
                for f in filenames if f.endswith(".py") and f != "__init__.py"]
    return sorted(out)


@pytest.mark.parametrize("layer, example", [("core", "core/job/run"), ("bridge", "bridge/database/store")])
def test_the_architecture_page_names_every_module_of_a_package(layer, example):
    """Every module inside a package of core/ or bridge/ is named on the architecture page."""
    with open(os.path.join(REPO, "docs", "dev", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    modules = core_modules(layer=layer)
    missing = [m for m in modules if m.count("/") >= 2 and "`%s`" % m.rsplit("/", 1)[1] not in text]
    assert example in modules
    assert missing == []


def test_every_path_a_page_names_exists():
    """`core/...py`, `bridge/...py`, `tools/...py` paths in the docs name real files."""
    bad = []
    for page in doc_pages():
        with open(page, encoding="utf-8") as fh:
            for path in re.findall(r"`((?:core|bridge|tools|bench|operators|panels)/[\w/]+\.py)`", fh.read()):
                if not os.path.isfile(os.path.join(REPO, path)):
                    bad.append((os.path.relpath(page, REPO), path))
    assert bad == []
