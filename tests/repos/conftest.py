"""Shared fixtures of the repository-task tests: one cache folder and sandbox per session."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from repo_cache import repo_cache_dir


@pytest.fixture(scope="session")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies and clones live outside /tmp (the sandbox replaces /tmp in every run)."""
    with repo_cache_dir("s", "/var/tmp/perfgym-test-repos") as root:
        yield root


def _tree_hash(root: Path) -> str:
    """A digest of every path, mode and file content under `root`."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            st = p.lstat()
            h.update(f"{p.relative_to(root)}\0{st.st_mode}\0".encode())
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def tree_hash():  # type: ignore[no-untyped-def]
    """The tree digest as a fixture (test modules cannot import conftest in importlib mode)."""
    return _tree_hash


def _edit_patch(repo: Path, edits: list[tuple[str, str, str]]) -> str:
    """A unified diff of `repo` with each (path, old, new) replacement made in order (old must
    occur; old == "" appends new, creating the file if need be)."""
    import difflib

    files: dict[str, tuple[str, str]] = {}
    for rel, old, new in edits:
        path = repo / rel
        before, after = files.get(rel) or ((path.read_text() if path.exists() else "",) * 2)
        assert old in after, f"{old!r} not in {rel}"
        files[rel] = (before, after.replace(old, new, 1) if old else after + new)
    out: list[str] = []
    for rel, (before, after) in files.items():
        out += difflib.unified_diff(before.splitlines(keepends=True),
                                    after.splitlines(keepends=True),
                                    fromfile=f"a/{rel}", tofile=f"b/{rel}")  # fmt: skip
    return "".join(out)


@pytest.fixture(scope="session")
def edit_patch():  # type: ignore[no-untyped-def]
    """Builds a patch from text replacements in a repository folder."""
    return _edit_patch


@pytest.fixture(scope="session")
def examples(repo_cache: Path):  # type: ignore[no-untyped-def]
    """The three example tasks, each checked once (built original copy kept for the session)."""
    from perfgym.repos.checks import check_task
    from perfgym.repos.loading import load_repo_suite

    checked = {t.id: check_task(t) for t in load_repo_suite("perfgym-repos")}
    yield checked
    for c in checked.values():
        c.remove()


@pytest.fixture(scope="session")
def expert_runs(examples):  # type: ignore[no-untyped-def]
    """Each example's expert patch evaluated once (4 interleaved rounds)."""
    from perfgym.repos.evaluate import evaluate_patch
    from perfgym.repos.loading import expert_patch_text

    return {
        tid: evaluate_patch(
            c.task, expert_patch_text(c.task) or "", c.original, rounds=4, repeats=0
        )
        for tid, c in examples.items()
    }


@pytest.fixture(scope="session", autouse=True)
def _sandbox_cpu_report():  # type: ignore[no-untyped-def]
    """With PERFGYM_REPOS_CPU=1, print the CPU and wall the sandboxed runs used (the test
    budget is set for an idle machine; this machine rarely is)."""
    if os.environ.get("PERFGYM_REPOS_CPU") != "1":
        yield
        return
    from perfgym.repos.shell import shared_sandbox

    sb = shared_sandbox()
    inner = sb.run
    totals = {"runs": 0.0, "cpu_s": 0.0, "wall_s": 0.0}

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        ex = inner(*args, **kwargs)
        totals["runs"] += 1
        if ex.measurement is not None:
            totals["cpu_s"] += ex.measurement.cpu_s
            totals["wall_s"] += ex.measurement.wall_s
        return ex

    sb.run = counted  # type: ignore[method-assign]
    yield
    sb.run = inner  # type: ignore[method-assign]
    print(f"\nsandboxed runs: {totals['runs']:.0f}, CPU {totals['cpu_s']:.1f} s, "
          f"wall {totals['wall_s']:.1f} s")  # fmt: skip
