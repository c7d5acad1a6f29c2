"""Failure-stage counts: results by furthest stage reached, NR split by cause (RLPF Table 5).

Stages follow RLPF's order NX < NC < NR < WO < OK; NR is split by `Verdict.detail`
(TIMEOUT, MEMORY_LIMIT, RUNTIME_ERROR, ...) because RLPF reports timeouts apart from crashes.
The unit is one result. Infrastructure failures are not program outcomes: they are refused or
excluded (see `ResultsPolicy`) and counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.verdict import Stage, Verdict
from perfgym.metrics._inputs import ResultsPolicy, group_results


class FailureStages(BaseModel):
    """Results per furthest stage reached, with NR split by cause."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Results counted (infrastructure failures excluded or refused).")
    by_stage: dict[str, int] = Field(description="NX/NC/NR/WO/OK -> results.")
    nr_causes: dict[str, int] = Field(description="Verdict.detail of NR results -> count.")
    infra_errors: int = Field(default=0, description="Results excluded as sandbox failures.")
    notes: list[str] = Field(default_factory=list)


def failure_stages(
    results: Sequence[Verdict], policy: ResultsPolicy | None = None
) -> FailureStages:
    """Count results by stage (RLPF Table 5 / failure-stage analysis)."""
    policy = policy or ResultsPolicy()
    grouped = group_results(results, "failure stages", policy)
    kept = [v for vs in grouped.tasks.values() for v in vs]
    by_stage = {s.value: 0 for s in Stage}
    causes: dict[str, int] = {}
    for v in kept:
        by_stage[v.stage.value] += 1
        if v.stage is Stage.NR:
            cause = v.detail or "unspecified"
            causes[cause] = causes.get(cause, 0) + 1
    return FailureStages(
        n=len(kept),
        by_stage=by_stage,
        nr_causes=dict(sorted(causes.items())),
        infra_errors=len(results) - len(kept),
        notes=list(grouped.notes),
    )
