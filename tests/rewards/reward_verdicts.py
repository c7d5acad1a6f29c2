"""Builders of small real Verdicts for the reward tests (plain pydantic models, no judge run)."""

from __future__ import annotations

from typing import Any

from perfgym.judge.verdict import Stage, TestResult, Timing, Verdict
from perfgym.sandbox.execution import Status


def timing(total: float | None, per: dict[str, float] | None = None, **extra: Any) -> Timing:
    fields: dict[str, Any] = {"estimate_s": total, "per_workload_s": per or {}}
    fields.update(extra)
    return Timing(**fields)


def ok(
    tc: float | None,
    tb: float | None = 1.0,
    tr: float | None = 0.25,
    per: dict[str, float] | None = None,
    **extra: Any,
) -> Verdict:
    """A correct verdict with candidate/baseline/reference estimates (None: that timing absent)."""
    fields: dict[str, Any] = {
        "task_id": "t",
        "stage": Stage.OK,
        "candidate": timing(tc, per) if tc is not None else None,
        "baseline": timing(tb) if tb is not None else None,
        "reference": timing(tr) if tr is not None else None,
    }
    fields.update(extra)
    return Verdict(**fields)


def failed(stage: Stage, **extra: Any) -> Verdict:
    return Verdict(task_id="t", stage=stage, **extra)


def timeout_test(workload: str) -> TestResult:
    return TestResult(id=workload, passed=True, status=Status.TIMEOUT)


STAIRCASE_TC = {"correct": 1.2, "faster": 0.6, "reference": 0.2}
"""Tc per correct rung with Tb = 1.0 and Tr = 0.25."""


def staircase() -> list[Verdict]:
    """NX, NC, NR, WO (fast: 0.1 s), correct (1.2 s), faster (0.6 s), reference (0.2 s)."""
    wo = failed(Stage.WO, candidate=timing(0.1), baseline=timing(1.0), reference=timing(0.25))
    return [
        failed(Stage.NX),
        failed(Stage.NC),
        failed(Stage.NR, detail="RUNTIME_ERROR"),
        wo,
        *(ok(tc) for tc in STAIRCASE_TC.values()),
    ]
