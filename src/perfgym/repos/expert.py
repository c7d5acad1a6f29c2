"""Measure a task's expert patch and record its speedup in task.toml (`expert_speedup`).

    PYTHONPATH=src python3 -m perfgym.repos.expert perfgym-repos --rounds 10 [--write]

The figure is the geometric mean over all workloads (hidden ones included) of the paired
interleaved comparison in `measure_workloads`; the expert's tests must pass and its outputs
must equal the original's, or nothing is recorded.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from perfgym.errors import PerfgymError
from perfgym.repos.checks import TaskCheckError, build_copy, check_task, run_tests
from perfgym.repos.loading import expert_patch_text, load_repo_suite, task_file
from perfgym.repos.measure import TaskMeasurement, measure_workloads
from perfgym.repos.task import RepoTask
from perfgym.sandbox.base import Sandbox


def measure_expert(
    task: RepoTask, *, rounds: int = 10, sandbox: Sandbox | None = None
) -> TaskMeasurement:
    """The expert patch against the original on every workload; TaskCheckError when the task
    has no expert patch, the patch breaks the tests or changes an output."""
    patch = expert_patch_text(task)
    if not patch:
        raise TaskCheckError(f"task {task.id}: no expert patch")
    checked = check_task(task, sandbox=sandbox)
    expert = build_copy(task, patch, sandbox=sandbox)
    try:
        tests = run_tests(task, expert, sandbox=sandbox)
        if not tests.ok:
            raise TaskCheckError(f"task {task.id}: the expert patch fails the tests")
        m = measure_workloads(task, checked.original, expert, rounds=rounds, sandbox=sandbox)
    finally:
        expert.remove()
        checked.remove()
    if not m.correct or m.speedup is None:
        raise TaskCheckError(f"task {task.id}: the expert patch is not correct: {m.error}")
    return m


def record_expert_speedup(task: RepoTask, speedup: float) -> Path:
    """Write `expert_speedup = X` (3 significant digits) into the task's task.toml."""
    if task.folder is None or (path := task_file(task.folder)) is None or path.suffix != ".toml":
        raise TaskCheckError(f"task {task.id}: no task.toml to record the expert speedup in")
    text = path.read_text()
    line = f"expert_speedup = {speedup:.3g}"
    if re.search(r"^expert_speedup\s*=.*$", text, flags=re.M):
        text = re.sub(r"^expert_speedup\s*=.*$", line, text, count=1, flags=re.M)
    else:
        text = re.sub(r"^(expert_patch\s*=.*)$", rf"\1\n{line}", text, count=1, flags=re.M)
    path.write_text(text)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", help="a suite folder, a task folder or 'perfgym-repos'")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="record the figure in task.toml")
    args = parser.parse_args(argv)
    try:
        for task in load_repo_suite(args.suite):
            m = measure_expert(task, rounds=args.rounds)
            assert m.speedup is not None
            ci = f"[{m.ci[0]:.3g}, {m.ci[1]:.3g}]" if m.ci else "n/a"
            per = ", ".join(f"{w.name} {w.speedup:.3g}x{'*' if w.significant else ''}"
                            for w in m.workloads)  # fmt: skip
            print(f"{task.id}: expert speedup {m.speedup:.3g}x CI {ci} ({per})", flush=True)
            if args.write:
                record_expert_speedup(task, m.speedup)
    except PerfgymError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
