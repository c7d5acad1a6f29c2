"""`check_task`: is a repository task usable, before any model call? And the steps it is made
of (`build_copy`, `run_tests`), which every later stage reuses.

Each failure is one line (`TaskCheckError`): a repository that cannot be fetched, a setup
(build) command that fails, a test command that fails on the original, a workload that
crashes, times out or gives a different result on a second call, an expert patch that does
not apply.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.repos.applied import COMPILED_SUFFIXES
from perfgym.repos.copy import RepoCopy, make_copy
from perfgym.repos.loading import expert_patch_text
from perfgym.repos.outcomes import PytestConfig, original_config, pytest_argv, run_supervised
from perfgym.repos.runner import WorkloadRun, run_workload
from perfgym.repos.shell import PatchError, ShellResult, apply_patch, run_shell
from perfgym.repos.task import RepoTask
from perfgym.sandbox.base import Sandbox


class TaskCheckError(ConfigError):
    """A repository task cannot be used as given; the message says why in one line."""


def _last_lines(text: str, n: int = 2) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[-300:] or "(no output)"


def build_copy(
    task: RepoTask,
    patch: str | None = None,
    *,
    sandbox: Sandbox | None = None,
    dest_root: Path | None = None,
) -> RepoCopy:
    """A fresh copy of the task's repository with `patch` applied and the setup command run.
    RepoFetchError, PatchError or TaskCheckError (setup failed) say what went wrong."""
    copy = make_copy(task.repo, task.commit, folder=task.folder, dest_root=dest_root)
    try:
        if patch:
            copy = dataclasses.replace(copy, applied=apply_patch(copy, patch, sandbox=sandbox))
        if task.setup:
            before = copy_files(copy.path)
            res = run_shell(copy, task.setup, timeout_s=task.limits.build_s,
                            memory_mb=task.limits.memory_mb, sandbox=sandbox)  # fmt: skip
            if not res.ok:
                why = "timed out" if res.timed_out else f"exit {res.returncode}"
                raise TaskCheckError(
                    f"task {task.id}: setup `{task.setup}` failed ({why}): {_last_lines(res.output)}"
                )
            remove_bytecode(copy.path)
            after = copy_files(copy.path)
            written = tuple(sorted(p for p in after if before.get(p) != after[p]))
            copy = dataclasses.replace(copy, built_files=written,
                                       built_code=tuple(p for p in written
                                                        if p.endswith(_CODE_SUFFIXES)))  # fmt: skip
        close_shared_writes(copy.path)
    except BaseException:
        copy.remove()
        raise
    return copy


#: What Python runs from a copy: modules, start-up hooks, and compiled modules (`applied`).
_CODE_SUFFIXES = (".py", ".pth", *COMPILED_SUFFIXES)


def copy_files(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under `root` (but .git), by path: (size, mtime ns, inode)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(root) and d == ".git")]
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def remove_bytecode(root: Path) -> None:
    """Every bytecode file of a built copy removed: Python compiles the sources again. Red team
    helper-111's `setup.py` compiled a data file's text into
    `bloomc/__pycache__/filter.cpython-311.pyc` (unchecked hash), which Python loaded instead of
    the patch's `filter.py`: broken code and a forgery of the tests' outcomes no check read."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(root) and d == ".git")]
        for name in filenames:
            if name.endswith((*importlib.machinery.BYTECODE_SUFFIXES, ".pyo")):
                os.unlink(os.path.join(dirpath, name))


def close_shared_writes(root: Path) -> None:
    """No file or folder of a built copy stays writable by its group or by others. A run's uid
    is not the copy's owner, and `mincore` reports a file's true page residency to a process
    that could write it: red team helper-108's patch had its build (`setup.py`) leave four
    world-writable files, read their pages' residency in each timed run and set it with
    `madvise(MADV_PAGEOUT)`, a channel that carried the answers from one run to the next
    (bloomc, 3.6-5.3x paid in 6 of 6 runs for code no faster than the original's)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for path in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o022:
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o022)


#: The tests each built original passed, by (copy path, test command): what a patch must pass.
_ORIGINAL_PASSED: dict[tuple[str, str], frozenset[str]] = {}


def run_tests(
    task: RepoTask, copy: RepoCopy | Path, command: str | None = None, *,
    sandbox: Sandbox | None = None, expected: frozenset[str] | None = None,
    config: PytestConfig | None = None,
) -> ShellResult:  # fmt: skip
    """The task's test command (or `command`) on a built copy. A plain pytest command runs
    under perfgym's supervisor (`perfgym.repos.outcomes`): it passes only when every test in
    `expected` (None: at least one test) was collected and passed, as the records that left
    pytest while it ran show, under `config` (the ORIGINAL's pytest configuration; None reads
    the copy's own, right only for an original). Any other command passes on exit 0."""
    path = copy.path if isinstance(copy, RepoCopy) else Path(copy)
    cmd = command or task.test_command
    if pytest_argv(cmd) is None:
        return run_shell(path, cmd, timeout_s=task.limits.test_s,
                         memory_mb=task.limits.memory_mb, sandbox=sandbox)  # fmt: skip
    run = run_supervised(path, cmd, timeout_s=task.limits.test_s, memory_mb=task.limits.memory_mb,
                         config=config or original_config(path), expected=expected,
                         sandbox=sandbox, protected=task.protected_paths)  # fmt: skip
    if expected is None and run.passed:
        _ORIGINAL_PASSED.setdefault((str(path), cmd), frozenset(
            t for t, o in run.outcomes.items() if o == "passed"))  # fmt: skip
    return ShellResult(
        output=f"{run.output}\n[perfgym] tests: {run.summary}",
        returncode=0 if run.passed else (run.exit_status or 1),
        timed_out=run.timed_out,
        wall_s=run.wall_s,
        cpu_s=0.0,
        status=run.status,
        reason=run.summary,
    )


def original_passed(
    task: RepoTask, original: RepoCopy, command: str | None = None, *,
    sandbox: Sandbox | None = None,
) -> frozenset[str] | None:  # fmt: skip
    """The tests the built `original` passes under the task's pytest command (run once, then
    remembered); None when the command is not a plain pytest command."""
    cmd = command or task.test_command
    if pytest_argv(cmd) is None:
        return None
    key = (str(original.path), cmd)
    if key not in _ORIGINAL_PASSED:
        res = run_tests(task, original, cmd, sandbox=sandbox)
        if not res.ok:
            raise TaskCheckError(f"task {task.id}: the tests fail on the original: {res.reason}")
    return _ORIGINAL_PASSED[key]


@dataclass
class CheckedTask:
    """A task that passed `check_task`, with its built original copy (reuse it; `remove` it)."""

    task: RepoTask
    original: RepoCopy
    tests: ShellResult
    workloads: dict[str, WorkloadRun] = field(default_factory=dict)

    def remove(self) -> None:
        self.original.remove()


def check_task(task: RepoTask, *, sandbox: Sandbox | None = None) -> CheckedTask:
    """Fetch, build, test and run every workload of the original once; TaskCheckError (one
    line) at the first problem. The built original copy is returned for reuse."""
    try:
        original = build_copy(task, sandbox=sandbox)
    except (ConfigError, PatchError) as exc:
        if isinstance(exc, TaskCheckError):
            raise
        raise TaskCheckError(f"task {task.id}: {exc}") from exc
    try:
        tests = run_tests(task, original, sandbox=sandbox)
        if not tests.ok:
            why = "timed out" if tests.timed_out else f"exit {tests.returncode}"
            raise TaskCheckError(f"task {task.id}: the test command fails on the original "
                                 f"repository ({why}): {_last_lines(tests.output)}")  # fmt: skip
        runs = {}
        for w in task.workloads:
            run = run_workload(task, original, w, repeats=1, sandbox=sandbox)
            if not run.ok:
                raise TaskCheckError(f"task {task.id}: workload {w.name!r}: {run.error}")
            if len(set(run.digests)) != 1:
                raise TaskCheckError(f"task {task.id}: workload {w.name!r} returns a different "
                                     "result on a second call (its output cannot be checked)")  # fmt: skip
            runs[w.name] = run
        expert = expert_patch_text(task)
        if expert:
            probe = make_copy(task.repo, task.commit, folder=task.folder)
            try:
                apply_patch(probe, expert, sandbox=sandbox)
            except PatchError as exc:
                raise TaskCheckError(f"task {task.id}: expert patch: {exc}") from exc
            finally:
                probe.remove()
    except BaseException:
        original.remove()
        raise
    return CheckedTask(task=task, original=original, tests=tests, workloads=runs)
