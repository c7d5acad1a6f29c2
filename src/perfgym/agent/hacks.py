"""The agent's hack check: `perfgym.repos.hacks.detect_hacks` (static checks of the patch,
dynamic ones of its measurement), its hack findings as the attempt records them."""

from __future__ import annotations

from pathlib import Path

from perfgym.agent.attempt import HackFinding
from perfgym.repos.hacks import detect_hacks
from perfgym.repos.measure import TaskMeasurement
from perfgym.repos.task import RepoTask


def hack_check(
    task: RepoTask, diff: str, patched: Path, measurement: TaskMeasurement | None
) -> list[HackFinding]:
    """Findings that make the patch a hack (a flagged patch is never kept as the best)."""
    report = detect_hacks(task, diff, patched, measurement)
    return [
        HackFinding(
            kind=f.kind, evidence=f"{f.message} ({f.evidence})" if f.evidence else f.message
        )
        for f in report.hacks
    ]
