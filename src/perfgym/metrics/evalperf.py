"""EvalPerf's Differential Performance Score (DPS) and DPS_norm.

From EvalPerf (Liu et al., COLM 2024; evalplus `evalperf.py::worker_on_one_task`): a task's
reference solutions are the representatives of performance clusters, slowest first, each with
a score: the cumulative percentage of profiled solutions in that cluster and the slower ones
(ascending; the fastest cluster 100). A passing sample is matched against the clusters from
the fastest down: the first cluster j whose reference cost is not below the sample's
(sample <= ref_j) gives DPS = score_j and DPS_norm = 100·(j+1)/n; a sample slower than every
cluster, or whose profiling failed, scores 0 on both. A task's DPS is the mean over its
passing samples; a task with fewer than `min_correct` passing samples is not scored (the paper
needs 1, the evalplus script's default is 10 of 100). The metric is the mean over scored tasks,
reported here as a fraction (EvalPerf prints percentages).

EvalPerf profiles CPU instructions; perfgym compares the cost its timing layer measured (the
candidate's `estimate_s`, the references' stored `median_s`), so the references must have
been measured on the same machine and the same input (`clusters_from_tasks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, checked_duration, group_results, no_context
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.result import MetricResult
from perfgym.tasks.task import Task


class Cluster(BaseModel):
    """One performance cluster of a task: its reference's measured cost and its score."""

    model_config = ConfigDict(extra="forbid")

    cost_s: float = Field(gt=0, description="The cluster reference's measured duration.")
    score: float = Field(gt=0, le=100, description="Cumulative percentage, as published.")


Clusters = Mapping[str, Sequence[Cluster]]


class EvalPerfConfig(BaseModel):
    """Settings of DPS / DPS_norm."""

    model_config = ConfigDict(extra="forbid")

    norm: bool = Field(default=False, description="DPS_norm (cluster rank) instead of DPS.")
    min_correct: int = Field(default=1, description="Fewest passing samples for a task to count.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("min_correct")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("min_correct must be >= 1")
        return v


def checked_clusters(clusters: Clusters | None, task_id: str) -> list[Cluster]:
    """A task's clusters, slowest first, with increasing scores; ConfigError otherwise."""
    if clusters is None:
        raise ConfigError("dps: needs clusters=... (task id -> clusters, slowest first)")
    if task_id not in clusters or not clusters[task_id]:
        raise ConfigError(f"dps: no reference clusters for task {task_id!r}")
    out = list(clusters[task_id])
    for a, b in zip(out, out[1:], strict=False):
        if b.score <= a.score:
            raise ConfigError(
                f"dps: task {task_id!r} cluster scores must increase from slowest to fastest"
            )
    return out


def sample_scores(cost_s: float | None, clusters: Sequence[Cluster]) -> tuple[float, float]:
    """(DPS, DPS_norm) of one passing sample, in percent; None cost (failed profile) -> 0."""
    if cost_s is None:
        return 0.0, 0.0
    n = len(clusters)
    for j in range(n - 1, -1, -1):  # fastest cluster first
        if cost_s <= clusters[j].cost_s:
            return clusters[j].score, 100.0 * (j + 1) / n
    return 0.0, 0.0


def dps(
    results: Sequence[Verdict], clusters: Clusters | None, config: EvalPerfConfig | None = None
) -> MetricResult:
    """DPS (or DPS_norm) over one model's results, as a fraction."""
    config = config or EvalPerfConfig()
    name = "dps_norm" if config.norm else "dps"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    too_few: list[str] = []
    unordered: list[str] = []
    failed_profile = 0
    for tid, vs in grouped.tasks.items():
        passing = [v for v in vs if v.correct]
        if len(passing) < config.min_correct:
            too_few.append(tid)
            continue
        refs = checked_clusters(clusters, tid)
        if any(b.cost_s > a.cost_s for a, b in zip(refs, refs[1:], strict=False)):
            unordered.append(tid)
        scores = []
        for v in passing:
            cost = checked_duration(v.candidate, f"{name}: task {tid!r} sample {v.sample}")
            failed_profile += cost is None
            dps_value, norm_value = sample_scores(cost, refs)
            scores.append((norm_value if config.norm else dps_value) / 100.0)
        per_task[tid] = sum(scores) / len(scores)
    notes = list(grouped.notes)
    if too_few:
        notes.append(
            f"{len(too_few)} task(s) had fewer than {config.min_correct} passing sample(s) and "
            "are not scored (EvalPerf's rule)"
        )
    if unordered:
        notes.append(
            f"{len(unordered)} task(s) whose measured cluster references are not slowest-first "
            "(EvalPerf's non-lazy mode warns on these)"
        )
    if failed_profile:
        notes.append(f"{failed_profile} passing sample(s) had no usable duration and scored 0")
    denominator = f"tasks with at least {config.min_correct} passing sample(s)"
    if not per_task:
        return MetricResult(
            name=name, value=None, n=0, denominator=denominator,
            per_task=dict.fromkeys(too_few), notes=[*notes, "no task was scored"],
            config=config.model_dump(),
        )  # fmt: skip
    result = summarize(
        name, per_task, config.bootstrap, denominator=denominator, notes=notes,
        settings=config.model_dump(),
    )  # fmt: skip
    return result.model_copy(update={"per_task": {**result.per_task, **dict.fromkeys(too_few)}})


def clusters_from_tasks(tasks: Sequence[Task]) -> dict[str, list[Cluster]]:
    """Task id -> clusters from EvalPerf tasks whose `cluster-j` pool solutions carry a stored
    `median_s` measured here, scored by `metadata["evalperf"]["scores"]` (slowest first)."""
    out: dict[str, list[Cluster]] = {}
    for task in tasks:
        scores = (task.metadata.get("evalperf") or {}).get("scores")
        if not scores:
            raise ConfigError(f"dps: task {task.id!r} is not an EvalPerf task (no scores)")
        refs = [s for s in task.pool if s.label.startswith("cluster-")]
        if len(refs) != len(scores):
            raise ConfigError(
                f"dps: task {task.id!r} has {len(refs)} clusters, {len(scores)} scores"
            )
        clusters = []
        for sol, score in zip(refs, scores, strict=True):
            if sol.stored is None or sol.stored.median_s is None:
                raise ConfigError(
                    f"dps: task {task.id!r} {sol.label} has no measured duration; measure the "
                    "cluster references on this machine first"
                )
            clusters.append(Cluster(cost_s=sol.stored.median_s, score=score))
        out[task.id] = clusters
    return out


class DPSMetric:
    """DPS / DPS_norm as a `Metric`; `compute(results, clusters=...)`."""

    def __init__(self, config: EvalPerfConfig | None = None) -> None:
        self.config = config or EvalPerfConfig()
        self.name = "dps_norm" if self.config.norm else "dps"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("clusters",))
        return dps(results, context.get("clusters"), self.config)
