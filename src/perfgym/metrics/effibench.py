"""EffiBench's NET, NMU and NTMU: a correct sample's cost normalised by the canonical solution's.

From EffiBench (Huang et al. 2024; huangd1999/EffiBench `calculate_memory_usage.py`): for each
problem whose generated code passed, the execution time (ET), the peak memory (MU) and the
memory-time integral (TMU) are divided by the canonical solution's, and NET / NMU / NTMU are
the means of these ratios over those problems (lower is better; 1 = as the canonical
solution). Problems without passing code are outside the denominator: EffiBench reports
pass@1 beside them, and so should a reader of these figures (`notes` counts them).

perfgym's inputs: a verdict's candidate timing (`estimate_s`, `peak_rss_mb`,
`memory_integral_mb_s`) over the same verdict's reference timing, the canonical solution
measured in the same run (EffiBench measures both with one harness); `canonical=` (task id ->
`StoredMeasurement`) is used for a task whose verdicts carry no reference timing. With several
samples per task, the task's ratio is the mean over its correct samples. A correct sample
without the measurement is refused, never dropped (dropping it would flatter the model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing, Verdict
from perfgym.metrics._inputs import (
    ResultsPolicy,
    checked_duration,
    group_results,
    no_context,
    stored_value,
    timing_memory,
)
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.result import MetricResult
from perfgym.tasks.task import StoredMeasurement

Quantity = Literal["net", "nmu", "ntmu"]
Canonical = Mapping[str, StoredMeasurement]

#: What each figure divides: (Timing attribute, StoredMeasurement attribute, words).
_FIELDS: dict[str, tuple[str, str, str]] = {
    "net": ("estimate_s", "median_s", "execution time"),
    "nmu": ("peak_rss_mb", "peak_rss_mb", "peak memory"),
    "ntmu": ("memory_integral_mb_s", "memory_integral_mb_s", "memory integral"),
}


class EffiBenchConfig(BaseModel):
    """Settings of NET / NMU / NTMU."""

    model_config = ConfigDict(extra="forbid")

    quantity: Quantity = Field(default="net", description="net | nmu | ntmu.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())


def timing_value(t: Timing | None, quantity: str, where: str) -> float | None:
    """A timing's execution time, peak memory or memory integral (net/nmu/ntmu), checked."""
    attr = _FIELDS[quantity][0]
    if quantity == "net":
        return checked_duration(t, where)
    value = timing_memory(t, attr, where)
    if value == 0.0:
        raise ConfigError(f"{where}: {attr} is 0; a ratio to it is undefined")
    return value


def canonical_value(
    v: Verdict, quantity: str, canonical: Canonical | None, metric: str = ""
) -> float:
    """The canonical solution's figure for a verdict: its reference timing, else stored."""
    label = metric or f"effibench-{quantity}"
    where = f"{label}: task {v.task_id!r} sample {v.sample} canonical"
    value = timing_value(v.reference, quantity, where)
    if value is None and canonical is not None and v.task_id in canonical:
        attr = _FIELDS[quantity][1]
        value = stored_value(canonical[v.task_id], attr, f"{where} (stored)")
        if value == 0.0:
            raise ConfigError(f"{where} (stored): {attr} is 0; a ratio to it is undefined")
    if value is None:
        raise ConfigError(
            f"{where}: no {_FIELDS[quantity][2]} of the canonical solution (the verdict's "
            "reference timing, or canonical=...)"
        )
    return value


def effibench_ratio(
    results: Sequence[Verdict],
    canonical: Canonical | None = None,
    config: EffiBenchConfig | None = None,
) -> MetricResult:
    """NET, NMU or NTMU (per `config.quantity`) over one model's results."""
    config = config or EffiBenchConfig()
    q = config.quantity
    name = f"effibench-{q}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    no_correct: list[str] = []
    for tid, vs in grouped.tasks.items():
        ratios = []
        for v in vs:
            if not v.correct:
                continue
            where = f"{name}: task {tid!r} sample {v.sample} candidate"
            mine = timing_value(v.candidate, q, where)
            if mine is None:
                raise ConfigError(
                    f"{where}: correct but no {_FIELDS[q][2]} measured; EffiBench divides "
                    "every passing sample's figure, so it cannot be left out"
                )
            ratios.append(mine / canonical_value(v, q, canonical))
        if ratios:
            per_task[tid] = sum(ratios) / len(ratios)
        else:
            no_correct.append(tid)
    notes = list(grouped.notes)
    if no_correct:
        notes.append(
            f"{len(no_correct)} of {len(grouped.tasks)} task(s) had no correct sample and are "
            "outside the denominator (EffiBench's rule); read beside pass@1"
        )
    if not per_task:
        return MetricResult(
            name=name, value=None, n=0, denominator="tasks with a correct sample",
            per_task=dict.fromkeys(no_correct), notes=[*notes, "no task had a correct sample"],
            config=config.model_dump(),
        )  # fmt: skip
    result = summarize(
        name, per_task, config.bootstrap, denominator="tasks with a correct sample",
        notes=notes, settings=config.model_dump(),
    )  # fmt: skip
    return result.model_copy(update={"per_task": {**result.per_task, **dict.fromkeys(no_correct)}})


class EffiBenchMetric:
    """NET / NMU / NTMU as a `Metric`; `compute(results, canonical=...)` (canonical optional)."""

    def __init__(self, config: EffiBenchConfig | None = None) -> None:
        self.config = config or EffiBenchConfig()
        self.name = f"effibench-{self.config.quantity}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("canonical",))
        return effibench_ratio(results, context.get("canonical"), self.config)
