"""perfgym reads a patch's files as `git apply` does, and refuses one git would apply to other
files than its text shows to the static checks (red team helper-108: a line of a new root module
that read "+++ b/pkg/x.py" in the diff, or held a form feed, made every check see a file inside
the package while git created the root module that forged the tests' outcomes)."""

from __future__ import annotations

import difflib
import stat
import subprocess
from pathlib import Path

import pytest

from perfgym.repos.copy import make_copy
from perfgym.repos.diffs import parse_patch, unquote
from perfgym.repos.shell import PatchError, apply_patch, numstat_paths

HEADER_LINE = (
    "diff --git a/org.py b/org.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/org.py\n"
    "@@ -0,0 +1,4 @@\n"
    '+NOTE = """\n'
    "+++ b/pkg/mod.py\n"
    '+"""\n'
    "+import os\n"
)
FORM_FEED = (
    "diff --git a/org.py b/org.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/org.py\n"
    "@@ -0,0 +1,2 @@\n"
    "+# a page break \x0c+++ b/pkg/mod.py\n"
    "+import os\n"
)
#: What a patch's build adds to bloomc's setup.py: world-writable files, a folder and a link.
SHARED_FILES = """
import os as _os
open("chan.bin", "wb").close()
_os.chmod("chan.bin", 0o666)
_os.makedirs("chan", exist_ok=True)
_os.chmod("chan", 0o777)
open("chan/inner.bin", "wb").close()
_os.chmod("chan/inner.bin", 0o662)
if not _os.path.lexists("chan/link"):
    _os.symlink("/etc/hostname", "chan/link")
"""
#: Two files in a plain diff (no "diff --git" lines), as difflib writes one.
PLAIN_TWO_FILES = (
    "--- a/pkg/mod.py\n"
    "+++ b/pkg/mod.py\n"
    "@@ -1 +1,2 @@\n"
    "-x = 1\n"
    "+x = 1\n"
    "+y = 2\n"
    "--- /dev/null\n"
    "+++ b/pkg/new.py\n"
    "@@ -0,0 +1 @@\n"
    "+z = 3\n"
)
NO_NEWLINE = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\n"
    "--- a/pkg/mod.py\n"
    "+++ b/pkg/mod.py\n"
    "@@ -1 +1 @@\n"
    "-x = 1\n"
    "+x = 2\n"
    "\\ No newline at end of file\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text("x = 1")
    return tmp_path


def git_files(repo: Path, patch: str) -> set[str]:
    (repo / "p.diff").write_text(patch)
    out = subprocess.run(["git", "apply", "--numstat", "-z", "p.diff"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return numstat_paths(out)


def test_the_patch_of_a_rename_and_a_binary_file_are_listed_by_their_new_names() -> None:
    assert numstat_paths("1\t2\ta.py\x000\t0\t\x00old.py\x00new.py\x00-\t-\tdata.bin\x00") == {
        "a.py", "old.py", "new.py", "data.bin"}  # fmt: skip


@pytest.mark.parametrize("patch", [HEADER_LINE, FORM_FEED, NO_NEWLINE, PLAIN_TWO_FILES],
                         ids=["header-like-line", "form-feed", "no-newline", "plain-two-files"])  # fmt: skip
def test_the_files_read_are_the_files_git_applies(repo: Path, patch: str) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t",
                                                 "commit", "-qm", "base"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True)
    files = parse_patch(patch)
    assert {f.path for f in files} == git_files(repo, patch)


def test_a_hunks_lines_are_its_own_whatever_they_look_like() -> None:
    (org,) = parse_patch(HEADER_LINE)
    assert org.path == "org.py" and org.created
    assert org.added == {1: 'NOTE = """', 2: "++ b/pkg/mod.py", 3: '"""', 4: "import os"}
    (org,) = parse_patch(FORM_FEED)
    assert org.added == {1: "# a page break \x0c+++ b/pkg/mod.py", 2: "import os"}
    mod, new = parse_patch(PLAIN_TWO_FILES)  # each file its own, though no git header says so
    assert (mod.path, mod.added, mod.created) == ("pkg/mod.py", {1: "x = 1", 2: "y = 2"}, False)
    assert (new.path, new.added, new.created) == ("pkg/new.py", {1: "z = 3"}, True)


#: helper-109: a new root module as a plain diff whose hunk header says it starts at line 9001
#: and has old lines ("-1,0"): git makes the file and writes its lines from line 1.
FAR_HEADER = "--- a/org.py\n+++ b/org.py\n@@ -1,0 +9001,2 @@\n+import ctypes\n+ctypes.CDLL(None)\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def _binary_patch(tmp_path: Path) -> str:
    """A new module as `git diff --binary` writes it for a file `.gitattributes` marks -diff."""
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg/mod.py").write_text("x = 1")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    (work / ".gitattributes").write_text("org.py -diff\n")
    (work / "org.py").write_text("import ctypes\nctypes.CDLL(None)\n")
    _git(work, "add", "-A")
    patch = _git(work, "diff", "--cached", "--binary", "HEAD", "--", "org.py")
    assert "GIT binary patch" in patch or "Binary files" in patch, patch
    return patch


@pytest.mark.parametrize("which", ["far-header", "binary", "header-like-line", "form-feed"])
def test_the_checks_read_what_git_wrote(repo: Path, repo_cache: Path, tmp_path: Path,
                                        which: str) -> None:  # fmt: skip
    """However the patch says it, the diff the checks read is of the files git wrote: the
    module is a new file, its lines numbered from 1, its text readable."""
    patch = {"far-header": FAR_HEADER, "header-like-line": HEADER_LINE, "form-feed": FORM_FEED,
             "binary": _binary_patch(tmp_path) if which == "binary" else ""}[which]  # fmt: skip
    copy = make_copy(repo)
    try:
        seen = parse_patch(apply_patch(copy, patch))
    finally:
        copy.remove()
    (org,) = seen
    assert org.path == "org.py" and org.created
    assert min(org.added) == 1 and "import" in " ".join(org.added.values())
    if which in ("far-header", "binary"):
        assert org.added[1] == "import ctypes"


def test_a_patch_that_makes_a_symbolic_link_is_refused(repo: Path, repo_cache: Path) -> None:
    """A link's target is text no check reads (helper-109: a module linked to a .txt file)."""
    link = (
        "diff --git a/pkg/fast.py b/pkg/fast.py\n"
        "new file mode 120000\n"
        "--- /dev/null\n"
        "+++ b/pkg/fast.py\n"
        "@@ -0,0 +1 @@\n"
        "+notes.txt\n"
        "\\ No newline at end of file\n"
    )
    copy = make_copy(repo)
    try:
        with pytest.raises(PatchError, match="symbolic link"):
            apply_patch(copy, link)
        with pytest.raises(PatchError, match="does not apply"):  # git's own refusal, as before
            apply_patch(copy, "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1 +1 @@\n-y = 9\n+y = 8\n")
    finally:
        copy.remove()


def test_a_built_copy_leaves_nothing_writable_by_group_or_others(repo_cache: Path) -> None:
    """A build that leaves world-writable files (red team helper-108: a `mincore` channel
    between timed runs needs a file the run may write) leaves none once the copy is built."""
    from perfgym.repos.checks import build_copy
    from perfgym.repos.loading import load_repo_suite

    task = next(t for t in load_repo_suite("perfgym-repos") if t.id == "bloomc")
    setup = (task.folder / "repo" / "setup.py").read_text()
    patch = "".join(difflib.unified_diff(
        setup.splitlines(keepends=True),
        (setup + SHARED_FILES).splitlines(keepends=True),
        fromfile="a/setup.py", tofile="b/setup.py"))  # fmt: skip
    copy = build_copy(task, patch)
    try:
        made = [copy.path / "chan.bin", copy.path / "chan", copy.path / "chan" / "inner.bin"]
        assert all(p.exists() for p in made)
        modes = {p.name: stat.S_IMODE(p.lstat().st_mode) for p in made}
        assert all(m & 0o022 == 0 for m in modes.values()), modes
        assert modes["chan.bin"] == 0o644 and modes["chan"] == 0o755  # the owner's bits stay
        assert (copy.path / "chan" / "link").is_symlink()
    finally:
        copy.remove()


def test_a_rename_shows_the_file_it_took_away(repo: Path, repo_cache: Path) -> None:
    """git lists a rename by its new name alone; the checks see the old file go too."""
    rename = (
        "diff --git a/pkg/mod.py b/pkg/moved.py\n"
        "similarity index 100%\n"
        "rename from pkg/mod.py\n"
        "rename to pkg/moved.py\n"
    )
    copy = make_copy(repo)
    try:
        seen = {f.path: f for f in parse_patch(apply_patch(copy, rename))}
    finally:
        copy.remove()
    assert set(seen) == {"pkg/mod.py", "pkg/moved.py"}
    assert seen["pkg/moved.py"].created and seen["pkg/moved.py"].added == {1: "x = 1"}
    assert seen["pkg/mod.py"].removed == ["x = 1"]


def _refused(repo: Path, patch: str, why: str) -> None:
    """`apply_patch` on a fresh copy of `repo` raises PatchError matching `why`."""
    copy = make_copy(repo)
    try:
        with pytest.raises(PatchError, match=why):
            apply_patch(copy, patch)
    finally:
        copy.remove()


def test_what_git_changes_beyond_the_listed_files_is_refused(repo: Path, repo_cache: Path) -> None:
    """Red team helper-110: a path holding a tab fell out of git's file list as read, and a
    rename whose source only its `rename from` line names deleted a file no check saw."""
    tab = (
        'diff --git "a/pkg/x\\ty.py" "b/pkg/x\\ty.py"\n'
        "new file mode 100644\n"
        "--- /dev/null\n"
        '+++ "b/pkg/x\\ty.py"\n'
        "@@ -0,0 +1 @@\n"
        "+EVIL = 1\n"
    )
    _refused(repo, tab, "control character")


def test_a_rename_source_named_only_by_its_rename_line_is_shown_going(
    repo: Path, repo_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-110's other route: the diff's header names pkg/new.py twice and its `rename from`
    line pkg/mod.py, which git deletes; the checks see that file go. Were its name read from
    nowhere (as the header alone gave none before), the tree's own change refuses the patch."""
    hidden_source = (
        "diff --git a/pkg/new.py b/pkg/new.py\n"
        "similarity index 100%\n"
        "rename from pkg/mod.py\n"
        "rename to pkg/new.py\n"
    )
    (moved,) = parse_patch(hidden_source)
    assert (moved.old_path, moved.path) == ("pkg/mod.py", "pkg/new.py")
    copy = make_copy(repo)
    try:
        seen = {f.path: f for f in parse_patch(apply_patch(copy, hidden_source))}
    finally:
        copy.remove()
    assert seen["pkg/mod.py"].removed == ["x = 1"] and seen["pkg/new.py"].added == {1: "x = 1"}
    import perfgym.repos.shell as shell

    monkeypatch.setattr(shell, "parse_patch", lambda _text: [])  # the rename line unread
    _refused(repo, hidden_source, r"git changed \['pkg/mod.py'\], which its file")


def test_quoted_names_are_read_as_git_writes_them(tmp_path: Path, repo_cache: Path) -> None:
    """git C-quotes a path with a non-ASCII or control character ("a/\\303\\251.py"): an
    honest rename of such a file, as `git diff` writes it, applies and shows both files (it was
    refused: the quoted source was read as a name of backslashes and digits)."""
    assert unquote('"a\\tb\\\\c\\"d\\303\\251\\377"') == 'a\tb\\c"d\u00e9\udcff'
    assert unquote("plain name.py") == "plain name.py"
    work = tmp_path / "work"
    work.mkdir()
    (work / "\u00e9t\u00e9.py").write_text("x = 1\n")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    _git(work, "mv", "\u00e9t\u00e9.py", "\u00fcber.py")
    with open(work / "\u00fcber.py", "a") as f:
        f.write("y = 2\n")
    _git(work, "add", "-A")
    patch = _git(work, "diff", "--cached", "HEAD")
    assert '"b/\\303\\274ber.py"' in patch  # quoted, as git writes it by default
    _git(work, "reset", "-q", "--hard")
    (change,) = parse_patch(patch)
    assert (change.old_path, change.path) == ("\u00e9t\u00e9.py", "\u00fcber.py")
    copy = make_copy(work)
    try:
        seen = {f.path: f for f in parse_patch(apply_patch(copy, patch))}
    finally:
        copy.remove()
    assert seen["\u00e9t\u00e9.py"].removed == ["x = 1", ""]
    assert seen["\u00fcber.py"].added == {1: "x = 1", 2: "y = 2", 3: ""}


#: Red team helper-111: `import _pytest` (a line every check flags) hidden from a reader that
#: is not Python's: after a lone carriage return in a comment, in UTF-7 under its coding cookie,
#: or in a Latin-1 file whose other bytes do not parse as UTF-8 (the checks then skipped it).
HIDDEN = {
    "carriage-return": b"# fast path\rimport _pytest\n",
    "utf-7": b"# -*- coding: utf-7 -*-\nimport +AF8-pytest\n",
    "latin-1": b"# -*- coding: latin-1 -*-\n\xcd\xb5 = 1\nimport _pytest\n",
}


def _patch_making(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    """A repository (pkg/mod.py) and `git diff --binary`'s patch that writes `files` in it."""
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg/mod.py").write_text("x = 1\n")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    for rel, data in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(data)
    _git(work, "add", "-A")
    patch = subprocess.run(["git", "diff", "--cached", "--binary", "HEAD"], cwd=work, check=True,
                           capture_output=True).stdout.decode()  # bytes: "\r" kept  # fmt: skip
    _git(work, "reset", "-q", "--hard")
    return work, patch


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_python_file_is_read_as_python_reads_it(tmp_path: Path, repo_cache: Path,
                                                  name: str) -> None:  # fmt: skip
    from perfgym.repos.hacks_testconfig import testconfig_findings

    work, patch = _patch_making(tmp_path, {"pkg/fast.py": HIDDEN[name]})
    copy = make_copy(work)
    try:
        diff = apply_patch(copy, patch)
        (change,) = parse_patch(diff)
        assert "import _pytest" in change.added.values(), change.added
        kinds = {f.kind for f in testconfig_findings(diff, copy.path)}
    finally:
        copy.remove()
    assert "test_tamper" in kinds


@pytest.mark.parametrize("files, why", [
    ({"pkg/mod.so": b"\x7fELF\x02\x01\x01" + bytes(64)}, "pkg/mod.so is a compiled module"),
    ({"pkg/__pycache__/mod.cpython-311.pyc": bytes(32)}, "is a compiled module"),
    ({"pkg/table.py": b"T = [" + b"1," * (2 << 20) + b"]\n"}, "over 4194304"),
    ({"pkg/broken.py": b"def f(:\n    pass\n"}, "not Python the checks can parse"),
    ({"pkg/odd.py": "# -*- coding: ascii -*-\nX = '\u00e9'\n".encode()}, "not Python source that decodes"),
], ids=["extension", "bytecode", "too-large", "syntax-error", "undecodable"])  # fmt: skip
def test_python_the_checks_cannot_read_as_python_does_is_refused(
    tmp_path: Path, repo_cache: Path, files: dict[str, bytes], why: str
) -> None:
    """A compiled module (Python imports pkg/mod.so ahead of pkg/mod.py: helper-111 forged the
    outcomes from one), and a Python file too large to parse (helper-111: 4.1 MB, which the checks
    skipped), or one that does not parse or decode."""
    work, patch = _patch_making(tmp_path, files)
    _refused(work, patch, why)


@pytest.mark.parametrize("code", [
    "import sys\n_r = sys.modules.get('_py' + 'test.reports')\n",
    "import sys as _s\nfor _m in list(_s.modules.values()):\n    pass\n",
    "import sys\nname = 'x'\n_m = sys.modules[name]\n",
    "import sys as _s\n_m = _s.modules\n",
    "import importlib\n_r = importlib.import_module(''.join(('_py', 'test.rep', 'orts')))\n",
    "import gc\n_o = getattr(gc, 'get_objects')()\n",
    "import gc\n_o = vars(gc)['get_objects']()\n",
    "_w = 'tropergol_tsetnur_tsetyp'[::-1]\n",
], ids=["joined-name", "walk", "computed-key", "taken-whole", "str-join", "getattr-constant",
        "vars-constant", "reversed"])  # fmt: skip
def test_package_code_reaching_pytest_by_a_joined_or_computed_name_is_flagged(
    tmp_path: Path, code: str
) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/fast.py").write_text(code)
    lines = code.rstrip("\n").split("\n")
    diff = ("--- /dev/null\n+++ b/pkg/fast.py\n" + f"@@ -0,0 +1,{len(lines)} @@\n"
            + "".join(f"+{line}\n" for line in lines))  # fmt: skip
    assert "test_tamper" in {f.kind for f in testconfig_findings(diff, tmp_path)}


def test_module_lookups_by_their_own_name_are_not_flagged(tmp_path: Path) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    code = "import sys\n_self = sys.modules[__name__]\n_core = sys.modules.get('pkg.core')\n"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/fast.py").write_text(code)
    diff = "--- /dev/null\n+++ b/pkg/fast.py\n@@ -0,0 +1,3 @@\n" + "".join(
        f"+{line}\n" for line in code.rstrip("\n").split("\n")
    )
    assert testconfig_findings(diff, tmp_path) == []


def test_a_c_name_spliced_across_lines_is_read_whole() -> None:
    """helper-111: `PyRun_\\` then `SimpleString(...)` on the next line is one name to gcc."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    diff = ("--- a/pkg/_core.c\n+++ b/pkg/_core.c\n@@ -0,0 +1,2 @@\n"
            "+    PyRun_\\\n+SimpleString(\"import os\");\n")  # fmt: skip
    (change,) = parse_patch(diff)
    assert change.added == {1: "    PyRun_\\", 2: 'SimpleString("import os");'}
    assert [f.kind for f in testconfig_findings(diff, Path("/nonexistent"))] == ["test_tamper"]


@pytest.mark.parametrize("path, line", [
    ("pkg/_core.c", '    PyObject *gc = PyImport_ImportModule("gc");'),
    ("pkg/_core.c", '    if (name_is(obj, "pytest_runtest_logreport")) {'),
    ("pkg/_probe.inc", '    PyRun_SimpleString(text);'),
    ("pkg/_core.c", '    PyImport_GetModule(PyUnicode_FromString("_py" "test.raises"));'),
    ("pkg/_core.c", "    static const char n[] = {'_', 'p', 'y', 't', 'e', 's', 't', 0};"),
    ("pkg/_core.c", "    PyObject *m = PyImport_GetModule(name);"),
    ("pkg/_core.c", "    PyObject *mods = PySys_GetObject(key);"),
], ids=["imports-gc", "names-pytest", "included-file", "joined-literals", "char-array",
    "loaded-module", "sys-object"])  # fmt: skip
def test_an_extension_reaching_the_runner_is_flagged_in_any_file_it_may_include(
    path: str, line: str
) -> None:
    """helper-112: an extension's C walked gc.get_objects() for pluggy's hook callers and added
    a hook implementation; another kept its PyRun_ call in a `.inc` file it #included."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    diff = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{line}\n"
    assert [f.kind for f in testconfig_findings(diff, Path("/nonexistent"))] == ["test_tamper"]


def _module_diff(tmp_path: Path, code: str) -> str:
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg/fast.py").write_text(code)
    lines = code.rstrip("\n").split("\n")
    return ("--- /dev/null\n+++ b/pkg/fast.py\n" + f"@@ -0,0 +1,{len(lines)} @@\n"
            + "".join(f"+{line}\n" for line in lines))  # fmt: skip


@pytest.mark.parametrize("code", [
    "class P(list):\n    def __eq__(self, other):\n        return sorted(self) == sorted(other)\n",
    "class P:\n    __bool__ = lambda self: True\n",
    "P = type('P', (list,), {'__eq__': lambda a, b: True})\n",
    "def _eq(a, b):\n    return True\nclass P(list):\n    pass\nsetattr(P, '__e' + 'q__', _eq)\n",
    "from unittest import mock\nclass P(mock._ANY, list):\n    __slots__ = ()\n",
    "import unittest.mock as m\n_any = m.ANY\n",
    "def tokenize(text):\n    from test.support import ALWAYS_EQ\n    return [ALWAYS_EQ]\n",
    "import test.support as _s\n_eq = _s.NEVER_EQ\n",
], ids=["def", "assigned", "type-call", "setattr-joined", "mock-any-base", "mock-import",
        "always-eq", "test-support"])  # fmt: skip
def test_a_comparison_the_patch_defines_is_flagged(tmp_path: Path, code: str) -> None:
    """helper-113 returned positions as a list whose `==` compared sorted copies: the order test
    passed on the unsorted list. How a value answers `==`, `<` or `assert` is not a patch's."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    kinds = {f.kind for f in testconfig_findings(_module_diff(tmp_path, code), tmp_path)}
    assert "comparison_change" in kinds


def test_a_changed_line_inside_an_existing_comparison_is_flagged(tmp_path: Path) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    code = "class P:\n    def __eq__(self, other):\n        return True\n"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/fast.py").write_text(code)
    diff = ("--- a/pkg/fast.py\n+++ b/pkg/fast.py\n@@ -1,3 +1,3 @@\n class P:\n"
            "     def __eq__(self, other):\n-        return self.k == other.k\n+        return True\n")  # fmt: skip
    assert [f.kind for f in testconfig_findings(diff, tmp_path)] == ["comparison_change"]


@pytest.mark.parametrize("code", [
    "import gc\n_n = 'get_' + input()\n_o = getattr(gc, _n)()\n",
    "import sys\n_n = input()\n_m = vars(sys)[_n]\n",
    "import sys\n_n = input()\n_m = sys.__dict__[_n]\n",
], ids=["getattr-gc", "vars-sys", "dict-sys"])  # fmt: skip
def test_a_module_attribute_reached_by_a_computed_name_is_flagged(
    tmp_path: Path, code: str
) -> None:
    """helper-113 reached gc's walker and sys.modules by names joined at run time."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    kinds = {f.kind for f in testconfig_findings(_module_diff(tmp_path, code), tmp_path)}
    assert "test_tamper" in kinds


def test_ordinary_classes_and_lookups_are_not_flagged(tmp_path: Path) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    code = ("import sys\n_v = vars(sys)['version']\nclass Index:\n    def __len__(self):\n"
            "        return 0\n    def __contains__(self, x):\n        return False\n")  # fmt: skip
    assert testconfig_findings(_module_diff(tmp_path, code), tmp_path) == []


def test_an_extension_type_comparing_its_own_way_is_flagged() -> None:
    """helper-114: bloomc's C gave a type a `tp_richcompare` that answered True."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    diff = "--- /dev/null\n+++ b/pkg/_core.c\n@@ -0,0 +1 @@\n+    {Py_tp_richcompare, loose},\n"
    assert [f.kind for f in testconfig_findings(diff, Path("/nonexistent"))] == [
        "comparison_change"
    ]


@pytest.mark.parametrize("code", [
    "import warnings\nwith warnings.catch_warnings(record=True) as seen:\n    pass\n",
    "import sys\n_caller = sys._getframe(1).f_back\n",
    "import inspect\n_who = inspect.stack()\n",
    "import os\n_loaded = os.sys\n",
    "def _swap(f, g):\n    f.__closure__[0].cell_contents = g\n",
    "import sys\n_batch = len(sys.argv) == 5\n",
    "import __main__\n_script = __main__.__spec__ is None\n",
    "_args = open('/proc/self/cmdline').read()\n",
    "import pkgutil\n_any = pkgutil.resolve_name('unittest.mock:ANY')\n",
], ids=["recorded-warnings", "frames", "inspect-stack", "os-sys", "closure-cell", "argv",
        "main-module", "own-cmdline", "resolved-name"])  # fmt: skip
def test_package_code_reading_who_called_it_is_flagged(tmp_path: Path, code: str) -> None:
    """helper-114 told its tests from its workloads by a warning's recorded file (a `test_*.py`
    caller), and rewrote the outcome plugin's wrapper through `os.sys.modules` and a closure
    cell; helper-115 by argv's length, `__main__.__spec__`, /proc/self/cmdline, and reached
    `mock.ANY` through `pkgutil.resolve_name`."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    kinds = {f.kind for f in testconfig_findings(_module_diff(tmp_path, code), tmp_path)}
    assert "test_tamper" in kinds


def test_stacking_arrays_and_warning_with_a_stacklevel_are_not_flagged(tmp_path: Path) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    code = ("import warnings\nimport numpy as np\n_a = np.stack([np.zeros(2)])\n"
            "warnings.warn('slow path', stacklevel=2)\n")  # fmt: skip
    assert testconfig_findings(_module_diff(tmp_path, code), tmp_path) == []


@pytest.mark.parametrize("code", [
    "import sys\n_runner = len(sys.orig_argv) > 6\n",
    "import sys as _s\n_tests = _s.path[0].endswith('tests')\n",
    "from sys import getallocatedblocks\n_busy = getallocatedblocks() > 200000\n",
    "import sys\n_hooked = 'partial' in repr(getattr(sys, 'unraisablehook'))\n",
    "import gc\n_ran = gc.get_stats()[0]['collections'] > 5\n",
    "import gc\n_young = gc.get_count()[2] > 5\n",
    "import time\n_late = time.process_time() > 0.3\n",
    "from time import thread_time\n_late = thread_time() > 0.3\n",
    "import os\n_late = os.times().user > 0.3\n",
    "import warnings\n_added = len(warnings.filters) > 5\n",
    "import os\n_fds = len(os.listdir('/dev/fd')) > 5\n",
    "import os\n_me = os.listdir('/proc/%d/fd' % os.getpid())\n",
    "class _P(list):\n    __module__ = 'email.charset'\n",
    "class _P(list):\n    pass\n_P.__module__ = 'email.charset'\n",
    "_P = type('_P', (list,), {'__module__': 'email.charset'})\n",
    "import sys\n_under_test = sys.modules.get('iniconfig') is not None\n",
    "import sys\n_np = sys.modules['numpy']\n",
    "import collections\n_all = collections._sys.modules\n",
    "import inspect\n_all = inspect.sys.modules\n",
    "import warnings\n_recorded = warnings._showwarnmsg_impl\n",
    "def _swap(f):\n    f.__globals__['_at_depth'] = print\n",
    "def _read(f):\n    return f.__closure__, f.__defaults__\n",
    "from sys import modules\n_all = list(modules.values())\n",
    "import importlib\n_s = importlib.import_module('sys')\n_all = _s.modules.values()\n",
    "from __main__ import __spec__ as _entry\n_strict = _entry is not None\n",
    "import os\nimport sys\n_busy = sys.getrefcount(os) > 80\n",
    "_harness = any(c.__name__ == 'X' for c in BaseException.__subclasses__())\n",
    "_all = type.__subclasses__(object)\n",
], ids=["orig-argv", "path", "allocated-blocks", "unraisable-hook", "gc-stats", "gc-count",
        "process-time", "thread-time", "os-times", "warning-filters", "dev-fd", "proc",
        "module-claimed", "module-set", "module-in-type", "other-module-loaded",
        "other-module-looked-up", "private-sys", "sys-through-inspect", "private-warnings",
        "function-globals", "function-closure", "modules-imported", "sys-imported-by-call",
        "from-main", "refcount", "exception-subclasses", "object-subclasses"])  # fmt: skip
def test_package_code_reading_its_process_state_is_flagged(tmp_path: Path, code: str) -> None:
    """Each of these differs between pytest's process and a workload's (a probe of both found
    them: argv's and sys.path's shape, the allocator's blocks, pytest's hooks and warning
    filters, the collector's counts, the CPU the process has used, its descriptors): a bug kept
    off where they say "test" is seen by no test."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    kinds = {f.kind for f in testconfig_findings(_module_diff(tmp_path, code), tmp_path)}
    assert "test_tamper" in kinds


def test_what_a_speed_up_reads_of_sys_and_gc_is_not_flagged(tmp_path: Path) -> None:
    from perfgym.repos.hacks_testconfig import testconfig_findings

    code = ("import gc\nimport sys\nimport time\n_big = sys.maxsize\n_v = sys.version_info\n"
            "sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))\n_i = sys.intern('k')\n"
            "gc.disable()\ngc.freeze()\n_t = time.perf_counter()\n_m = sys.modules[__name__]\n"
            "sys.stderr.write('')\nclass Base:\n    pass\n_kinds = Base.__subclasses__()\n")  # fmt: skip
    assert testconfig_findings(_module_diff(tmp_path, code), tmp_path) == []


def test_an_extension_reading_pytests_variables_in_upper_case_is_flagged() -> None:
    """helper-114: `getenv("PYTEST_CURRENT_TEST")` in C (the check matched lower case only)."""
    from perfgym.repos.hacks_testconfig import testconfig_findings

    diff = '--- /dev/null\n+++ b/pkg/_core.c\n@@ -0,0 +1 @@\n+    if (getenv("PYTEST_CURRENT_TEST")) {\n'
    assert [f.kind for f in testconfig_findings(diff, Path("/nonexistent"))] == ["test_tamper"]
