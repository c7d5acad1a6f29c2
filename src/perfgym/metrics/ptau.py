"""DMC-Optim's p-τ pass@k: correct *and* no slower than the τ-th-percentile human reference.

DMC-Optim (paper 003, §1 and §5) counts a solution under pτ "only when it is correct and no
slower than the τ-th-percentile human reference, with smaller τ stricter" (p100: no slower
than the slowest reference; p10: within the fastest tenth), and reports pass@1 and pass@10
with the unbiased estimator 1 − C(n−c, k)/C(n, k) over n samples per problem (Chen et al.
2021), c being the samples that pass the criterion.

perfgym's reading of "the τ-th-percentile human reference", stated because the paper's text
does not pin it: the pool's passing solutions are ranked by total duration and the reference
is the one at nearest rank ⌈τ/100 · m⌉ (a real solution, no interpolation).
`comparison="total"` compares the candidate's total duration with that reference's total;
`comparison="per_test"` compares workload by workload against that same reference (DMC-Optim's
ranked-reference timeouts), allowing a fraction `tolerance` of workloads to be slower
(DMC-Optim's timeout tolerance ρ; 0 = every workload). Pool durations are used as given:
calibrate stored durations to the present machine before calling (timing layer).
A correct sample without a usable duration cannot be shown fast, so it does not pass; the
notes count such samples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import (
    ResultsPolicy,
    checked_duration,
    group_results,
    no_context,
    stored_total,
    task_pool,
    workload_durations,
)
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.estimators import nearest_rank, pass_at_k
from perfgym.metrics.result import MetricResult
from perfgym.tasks.task import StoredMeasurement

Pools = Mapping[str, Sequence[StoredMeasurement]]


class PTauConfig(BaseModel):
    """Settings of p-τ pass@k."""

    model_config = ConfigDict(extra="forbid")

    tau: float = Field(default=50.0, description="Percentile of the human pool, in (0, 100].")
    k: int = Field(default=1, description="pass@k's k; every task needs at least k samples.")
    comparison: Literal["total", "per_test"] = Field(
        default="total", description="Compare total durations, or workload by workload."
    )
    tolerance: float = Field(
        default=0.0, description="per_test: fraction of workloads allowed to be slower."
    )
    min_pool: int = Field(default=2, description="Fewest passing pool solutions accepted.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("tau")
    @classmethod
    def _tau(cls, v: float) -> float:
        if math.isnan(v) or not 0.0 < v <= 100.0:
            raise ValueError("tau must lie in (0, 100]")
        return v

    @field_validator("k", "min_pool")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be >= 1")
        return v

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("tolerance must lie in [0, 1]")
        return v


def _reference(pool: list[StoredMeasurement], task_id: str, tau: float) -> StoredMeasurement:
    """The pool solution at nearest rank τ by total duration."""
    totals: list[tuple[float, int]] = []
    for i, m in enumerate(pool):
        total = stored_total(m, f"task {task_id!r} pool solution {i}")
        if total is None:
            raise ConfigError(f"p-tau: task {task_id!r} pool solution {i} has no duration")
        totals.append((total, i))
    threshold = nearest_rank([t for t, _ in totals], tau)
    # The first solution (in pool order) whose total equals the nearest-rank value.
    return pool[next(i for t, i in totals if t == threshold)]


def sample_passes(v: Verdict, ref: StoredMeasurement, config: PTauConfig) -> bool | None:
    """Whether one verdict passes p-τ against the chosen reference; None if it has no timing."""
    if not v.correct:
        return False
    where = f"task {v.task_id!r} sample {v.sample} candidate"
    if config.comparison == "total":
        tc = checked_duration(v.candidate, where)
        total = stored_total(ref, f"task {v.task_id!r} reference")
        if tc is None:
            return None
        assert total is not None  # checked when the reference was chosen
        return tc <= total
    cand = workload_durations(v.candidate, where)
    if cand is None:
        return None
    if not ref.per_workload_s:
        raise ConfigError(
            f"p-tau per_test: the τ-reference of task {v.task_id!r} has no per-workload durations"
        )
    missing = sorted(set(ref.per_workload_s) - set(cand))
    if missing:
        raise ConfigError(f"p-tau per_test: {where} lacks workloads {missing[:5]}")
    slower = sum(1 for w, r in ref.per_workload_s.items() if cand[w] > r)
    return slower <= config.tolerance * len(ref.per_workload_s)


def p_tau_pass_at_k(
    results: Sequence[Verdict], pools: Pools | None, config: PTauConfig | None = None
) -> MetricResult:
    """p-τ pass@k over one model's results, each task judged against its own human pool."""
    config = config or PTauConfig()
    name = f"p{config.tau:g}_pass@{config.k}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    untimed = 0
    for tid, vs in grouped.tasks.items():
        if len(vs) < config.k:
            raise ConfigError(f"{name}: task {tid!r} has {len(vs)} sample(s), fewer than k")
        ref = _reference(task_pool(pools, tid, name, config.min_pool), tid, config.tau)
        outcomes = [sample_passes(v, ref, config) for v in vs]
        untimed += sum(1 for o in outcomes if o is None)
        per_task[tid] = pass_at_k(len(vs), sum(1 for o in outcomes if o), config.k)
    notes = list(grouped.notes)
    if untimed:
        notes.append(f"{untimed} correct sample(s) had no usable duration and did not pass")
    return summarize(name, per_task, config.bootstrap, notes=notes, settings=config.model_dump())


class PTauMetric:
    """p-τ pass@k as a `Metric`; `compute(results, pools=...)`."""

    def __init__(self, config: PTauConfig | None = None) -> None:
        self.config = config or PTauConfig()
        self.name = f"p{self.config.tau:g}_pass@{self.config.k}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("pools",))
        return p_tau_pass_at_k(results, context.get("pools"), self.config)


class PassAtKConfig(BaseModel):
    """Settings of plain correctness pass@k."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=1, description="pass@k's k; every task needs at least k samples.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())


def correctness_pass_at_k(
    results: Sequence[Verdict], config: PassAtKConfig | None = None
) -> MetricResult:
    """Unbiased pass@k of correctness alone (the 'pure correctness' row DMC-Optim reports)."""
    config = config or PassAtKConfig()
    name = f"pass@{config.k}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    for tid, vs in grouped.tasks.items():
        if len(vs) < config.k:
            raise ConfigError(f"{name}: task {tid!r} has {len(vs)} sample(s), fewer than k")
        per_task[tid] = pass_at_k(len(vs), sum(v.correct for v in vs), config.k)
    return summarize(
        name, per_task, config.bootstrap, notes=grouped.notes, settings=config.model_dump()
    )


class PassAtKMetric:
    """Correctness pass@k as a `Metric`."""

    def __init__(self, config: PassAtKConfig | None = None) -> None:
        self.config = config or PassAtKConfig()
        self.name = f"pass@{self.config.k}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context)
        return correctness_pass_at_k(results, self.config)
