"""Venus/Afterburner Beyond-T/M/I, their B%/M%/W% breakdown, and Mercury's Beyond.

Venus / Afterburner (paper 004; Elfsong/Afterburner `evaluation/venus/venus_evaluator.py`,
`venus_bootstrap.py`, `evaluation/beyond_statistic.ipynb`):
    percentile p = 1 − bisect_left(sorted(pool), x)/|pool| = share of passing human solutions
    that are *not faster* than the candidate (ties count as beaten), for x = execution time
    (T), peak memory (M) or memory integral (I). A failed sample scores 0.
    Beyond-X = mean of p over all samples (failures included).
    B% = passed and p = 1 (no human solution strictly better: better than all humans),
    W% = passed and p = 0 (worse than every human), M% = the other passed samples, F% = failed;
    the four add up to 1 over all samples.
Mercury (Du et al. 2024; bigcode-evaluation-harness `custom_metrics/beyond_eval.py`):
    with the pool's passing runtimes spanning [r_min, r_max], a sample scores
    (r_max − clip(r, r_min, r_max))/(r_max − r_min), a failed sample counting as r = ∞ (score 0);
    Beyond@k = mean over problems of the mean score of the problem's first k samples.

perfgym averages samples within a task first and then tasks, so every task weighs the same
(Afterburner sums all samples; the two agree when tasks have equal sample counts). The pool
is the task's passing (`StoredStatus.OK`) stored measurements. A pool smaller than `min_pool`
(default 2) is refused; Mercury also refuses a pool whose runtimes are all equal (no range).
A correct sample whose measurement is missing scores 0 and is counted in the notes.
"""

from __future__ import annotations

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
    stored_value,
    task_pool,
    timing_memory,
)
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.estimators import fraction_not_faster
from perfgym.metrics.result import MetricResult
from perfgym.tasks.task import StoredMeasurement

Pools = Mapping[str, Sequence[StoredMeasurement]]
Dimension = Literal["time", "memory", "integral"]

# Which stored field holds each dimension in a pool, and its letter in Beyond-T/M/I.
_POOL_FIELD = {"time": "median_s", "memory": "peak_rss_mb", "integral": "memory_integral_mb_s"}
_LETTER = {"time": "T", "memory": "M", "integral": "I"}


class BeyondConfig(BaseModel):
    """Settings of Venus Beyond-X and its B/M/W breakdown."""

    model_config = ConfigDict(extra="forbid")

    dimension: Dimension = Field(default="time", description="time | memory | integral.")
    min_pool: int = Field(default=2, description="Fewest passing pool solutions accepted.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("min_pool")
    @classmethod
    def _min_pool(cls, v: int) -> int:
        if v < 1:
            raise ValueError("min_pool must be >= 1")
        return v


def candidate_value(v: Verdict, dimension: Dimension) -> float | None:
    """The candidate's time (s), peak memory (MiB) or memory integral (MiB·s)."""
    where = f"task {v.task_id!r} sample {v.sample} candidate"
    if dimension == "time":
        return checked_duration(v.candidate, where)
    attr = "peak_rss_mb" if dimension == "memory" else "memory_integral_mb_s"
    return timing_memory(v.candidate, attr, where)


def pool_values(
    pool: Sequence[StoredMeasurement], task_id: str, dimension: Dimension
) -> list[float]:
    """The pool's values on one dimension; every passing pool solution must carry it."""
    attr = _POOL_FIELD[dimension]
    out: list[float] = []
    for i, m in enumerate(pool):
        x = stored_value(m, attr, f"task {task_id!r} pool solution {i}")
        if x is None:
            raise ConfigError(f"task {task_id!r} pool solution {i} has no {attr}")
        out.append(x)
    return out


class BeyondBreakdown(BaseModel):
    """Beyond-X with B%/M%/W%/F% (fractions of all samples, averaged per task)."""

    model_config = ConfigDict(extra="forbid")

    beyond: MetricResult
    better: MetricResult = Field(description="B%: passed, no human solution strictly better.")
    within: MetricResult = Field(description="M%: passed, inside the human range.")
    worse: MetricResult = Field(description="W%: passed, slower/larger than every human.")
    failed: MetricResult = Field(description="Samples that did not pass.")


def beyond_breakdown(
    results: Sequence[Verdict], pools: Pools | None, config: BeyondConfig | None = None
) -> BeyondBreakdown:
    """Venus Beyond-T/M/I and B%/M%/W% against each task's pool of human solutions."""
    config = config or BeyondConfig()
    letter = _LETTER[config.dimension]
    name = f"beyond-{letter}"
    grouped = group_results(results, name, config.policy)
    cols: dict[str, dict[str, float]] = {k: {} for k in ("beyond", "B", "M", "W", "F")}
    unmeasured = 0
    for tid, vs in grouped.tasks.items():
        pool = pool_values(task_pool(pools, tid, name, config.min_pool), tid, config.dimension)
        acc = dict.fromkeys(cols, 0.0)
        for v in vs:
            x = candidate_value(v, config.dimension) if v.correct else None
            if v.correct and x is None:
                unmeasured += 1
            if x is None:
                acc["F"] += 1
                continue
            p = fraction_not_faster(pool, x)
            acc["beyond"] += p
            acc["B" if p == 1.0 else "W" if p == 0.0 else "M"] += 1
        for key in cols:
            cols[key][tid] = acc[key] / len(vs)
    notes = list(grouped.notes)
    if unmeasured:
        notes.append(f"{unmeasured} correct sample(s) had no {config.dimension} measurement")
    settings = config.model_dump()

    def make(key: str, label: str) -> MetricResult:
        return summarize(label, cols[key], config.bootstrap, notes=notes, settings=settings)

    return BeyondBreakdown(
        beyond=make("beyond", name),
        better=make("B", f"B%-{letter}"),
        within=make("M", f"M%-{letter}"),
        worse=make("W", f"W%-{letter}"),
        failed=make("F", "F%"),
    )


class BeyondMetric:
    """Venus Beyond-T/M/I as a `Metric`; `compute(results, pools=...)`."""

    def __init__(self, config: BeyondConfig | None = None) -> None:
        self.config = config or BeyondConfig()
        self.name = f"beyond-{_LETTER[self.config.dimension]}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("pools",))
        return beyond_breakdown(results, context.get("pools"), self.config).beyond


class MercuryConfig(BaseModel):
    """Settings of Mercury's Beyond@k."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=1, description="Samples per task averaged (the first k by index).")
    min_pool: int = Field(default=2, description="Fewest passing pool solutions accepted.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("k", "min_pool")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be >= 1")
        return v


def mercury_score(runtime: float | None, pool: Sequence[float], task_id: str) -> float:
    """(r_max − clip(r, r_min, r_max))/(r_max − r_min); None (failed) scores 0."""
    lo, hi = min(pool), max(pool)
    if hi <= lo:
        raise ConfigError(
            f"mercury beyond: task {task_id!r} pool runtimes are all {lo!r}; the range is empty"
        )
    if runtime is None:
        return 0.0
    return (hi - min(max(runtime, lo), hi)) / (hi - lo)


def mercury_beyond(
    results: Sequence[Verdict], pools: Pools | None, config: MercuryConfig | None = None
) -> MetricResult:
    """Mercury's Beyond@k over one model's results."""
    config = config or MercuryConfig()
    name = f"mercury_beyond@{config.k}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    unmeasured = 0
    for tid, vs in grouped.tasks.items():
        if len(vs) < config.k:
            raise ConfigError(f"{name}: task {tid!r} has {len(vs)} sample(s), fewer than k")
        pool = pool_values(task_pool(pools, tid, name, config.min_pool), tid, "time")
        scores = []
        for v in vs[: config.k]:  # Mercury averages the first k generations, not a random k
            runtime = candidate_value(v, "time") if v.correct else None
            unmeasured += v.correct and runtime is None
            scores.append(mercury_score(runtime, pool, tid))
        per_task[tid] = sum(scores) / config.k
    notes = list(grouped.notes)
    if unmeasured:
        notes.append(f"{unmeasured} correct sample(s) had no usable duration and scored 0")
    return summarize(name, per_task, config.bootstrap, notes=notes, settings=config.model_dump())


class MercuryMetric:
    """Mercury's Beyond@k as a `Metric`; `compute(results, pools=...)`."""

    def __init__(self, config: MercuryConfig | None = None) -> None:
        self.config = config or MercuryConfig()
        self.name = f"mercury_beyond@{self.config.k}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("pools",))
        return mercury_beyond(results, context.get("pools"), self.config)
