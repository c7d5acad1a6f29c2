"""Small real tasks and verdicts for the simulator tests (pydantic models, no judge run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.tasks.task import Language, Solution, Task, TaskKind, TestCase

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "suites" / "perfgym-core"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def task(task_id: str, pool: dict[str, float | None] | None = None) -> Task:
    """A stdio task whose pool members have the given qualities (None: unknown quality)."""
    sols = [Solution(label=lab, source=f"print({i})", quality=q)
            for i, (lab, q) in enumerate((pool or {}).items())]  # fmt: skip
    return Task(
        id=task_id,
        family="f",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        baseline=Solution(label="baseline", source="print(0)"),
        references=[Solution(label="reference", source="print(1)")],
        pool=sols,
        tests=[TestCase(id="t1", stdin="", expected="0")],
    )


def timing(total: float, per: dict[str, float] | None = None) -> Timing:
    return Timing(estimate_s=total, per_workload_s=per or {"w1": total / 2, "w2": total / 2})


def verdict(task_id: str, label: str, tc: float | None, tb: float | None = 1.0,
            tr: float | None = 0.25, stage: Stage = Stage.OK, suite: str = "s",
            **extra: Any) -> Verdict:  # fmt: skip
    """The verdict of the solution `label` measured at `tc` seconds beside Tb and Tr
    (None: that timing is absent)."""
    return Verdict(
        task_id=task_id,
        suite=suite,
        model=label,
        stage=stage,
        candidate=timing(tc) if tc is not None and stage is Stage.OK else None,
        baseline=None if tb is None else timing(tb),
        reference=None if tr is None else timing(tr),
        **extra,
    )


def core_suite_copy(dest: Path, task_ids: list[str]) -> Path:
    """Copy committed perfgym-core task directories into `dest/perfgym-core` (a suite path)."""
    root = dest / "perfgym-core"
    root.mkdir(parents=True, exist_ok=True)
    tracked = subprocess.run(["git", "ls-files", "suites/perfgym-core"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    for tid in task_ids:
        for rel in tracked:
            parts = Path(rel).parts
            if parts[2] == tid:
                target = root / Path(*parts[2:])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(REPO / rel, target)
    return root
