"""Shared fixtures of the repository-task tests: one cache folder and sandbox per session."""

from __future__ import annotations

import hashlib
import os
import warnings
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
    """Each example's expert patch evaluated (4 interleaved rounds); once more where the first
    evaluation did not find every workload significantly faster. One evaluation on a shared VM
    misses now and then (full104: bloomc, one stalled round; stop 58's CI: textindex's hidden
    workload at 0.67x, every round, the visible one at 5.6x in the same rounds): the second is
    an independent draw, and an expert patch that is not faster fails both. The first's
    figures are kept as a warning, so a CI log says what the miss looked like."""
    from perfgym.repos.evaluate import evaluate_patch
    from perfgym.repos.loading import expert_patch_text

    def evaluate(checked):  # type: ignore[no-untyped-def]
        text = expert_patch_text(checked.task) or ""
        return evaluate_patch(checked.task, text, checked.original, rounds=4, repeats=0)

    out = {}
    for tid, c in examples.items():
        ev = evaluate(c)
        if not _expert_decided(ev):
            warnings.warn(f"{tid}: the expert's first evaluation missed, evaluated again: "
                          f"{expert_figures(ev)}", stacklevel=1)  # fmt: skip
            ev = evaluate(c)
        out[tid] = ev
    return out


def _expert_decided(ev) -> bool:  # type: ignore[no-untyped-def]
    m = ev.measurement
    return (ev.stage == "done" and m is not None and ev.ci is not None and ev.ci[0] > 1.2
            and all(w.significant and w.outputs_match for w in m.workloads))  # fmt: skip


def expert_figures(ev) -> str:  # type: ignore[no-untyped-def]
    """Per workload, every round's counted time, first call, import + setup and charge (ms)."""
    m = ev.measurement
    if m is None:
        return f"stage {ev.stage}: {ev.error}"

    def ms(xs) -> str:  # type: ignore[no-untyped-def]
        return "/".join(f"{x * 1000:.0f}" for x in xs)

    return "; ".join(
        f"{w.name} {w.speedup} ci {w.ci} orig {ms(w.original_s)} call {ms(w.original_call_s)} "
        f"pre {ms(w.original_setup_s)} | pat {ms(w.patched_s)} call {ms(w.patched_call_s)} "
        f"pre {ms(w.patched_setup_s)} charged {ms(w.charged_s)} "
        f"par {ms(w.parallel_charged_s)} redrawn {w.remeasured_rounds}"
        for w in m.workloads
    )


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
