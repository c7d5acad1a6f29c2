"""Fixtures of the metric tests: builders of small, real `Verdict`s (metrics are pure)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from perfgym.judge.verdict import Stage, Timing, Verdict

MakeVerdict = Callable[..., Verdict]


def timing(
    seconds: float | None,
    workloads: dict[str, float] | None = None,
    **extra: Any,
) -> Timing | None:
    """A timing with the given estimate (None -> no timing at all).

    A given duration, exact: no samples, so the significant decision compares the estimates
    beyond the equivalence margin (`speed_call`'s "exact" rule) and the paper's hand-computed
    figures hold wherever two durations are more than 3 % apart."""
    if seconds is None and not workloads:
        return None
    if seconds is None and workloads:
        seconds = sum(workloads.values())
    return Timing(estimate_s=seconds, per_workload_s=workloads or {}, **extra)


def make_verdict(
    task_id: str,
    stage: Stage | str = Stage.OK,
    tc: float | None = None,
    tb: float | None = None,
    tr: float | None = None,
    *,
    sample: int = 0,
    model: str = "m",
    suite: str = "",
    flags: tuple[str, ...] = (),
    cw: dict[str, float] | None = None,
    bw: dict[str, float] | None = None,
    rw: dict[str, float] | None = None,
    cand: dict[str, Any] | None = None,
    infra_error: bool = False,
    detail: str = "",
) -> Verdict:
    """A verdict whose candidate/baseline/reference took tc/tb/tr seconds (or per workload)."""
    return Verdict(
        task_id=task_id,
        suite=suite,
        model=model,
        sample=sample,
        stage=Stage(stage),
        detail=detail,
        infra_error=infra_error,
        candidate=timing(tc, cw, **(cand or {})),
        baseline=timing(tb, bw),
        reference=timing(tr, rw),
        flags=list(flags),
    )


@pytest.fixture
def mk() -> MakeVerdict:
    return make_verdict
