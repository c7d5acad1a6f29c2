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

from perfgym.repos import shell
from perfgym.repos.copy import make_copy
from perfgym.repos.diffs import parse_patch
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
        "a.py", "new.py", "data.bin"}  # fmt: skip


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


def test_a_patch_git_reads_otherwise_is_refused(repo: Path, repo_cache: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Should the reading and git ever disagree again, the patch is not applied at all."""
    copy = make_copy(repo)
    try:
        monkeypatch.setattr(shell, "parse_patch", lambda _p: parse_patch(NO_NEWLINE))
        with pytest.raises(PatchError, match="as written"):
            apply_patch(copy, HEADER_LINE)
        assert not (copy.path / "org.py").exists()
        monkeypatch.undo()
        apply_patch(copy, HEADER_LINE)
        assert (copy.path / "org.py").exists()
        with pytest.raises(PatchError, match="does not apply"):  # git's own refusal, as before
            apply_patch(copy, HEADER_LINE)
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
