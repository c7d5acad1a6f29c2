"""EffiBench-X's canonical-normalised efficiency scores (execution time, memory, integral).

From EffiBench-X `evaluate_solution.py::compute_model_metrics`: per problem and language, a
model's score on a quantity is min(1, max(0, canonical / model)) when its solution passed
every test, else 0 (a failed solution counts as an infinite cost); the score is the mean over
all problems (failures in the denominator, unlike EffiBench's NET). Higher is better; 1 means
as efficient as the canonical solution or better (the clip gives nothing for beating it).
Quantities: execution time (EffiBench-X's `runtime_sum`, the sum over the tests: perfgym's
`estimate_s`), peak memory (`peak_rss_mb`) and memory integral (`memory_integral_mb_s`;
EffiBench-X divides the smaller integral of its runtime- and memory-canonical solutions, perfgym
has one canonical solution). The canonical figure is the verdict's reference timing, else
`canonical=` (task id -> `StoredMeasurement`). Several samples of a task: their mean.
A passing sample without the measurement is refused, never scored 0 or 1 silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, group_results, no_context
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.effibench import Canonical, canonical_value, timing_value
from perfgym.metrics.result import MetricResult

Dimension = Literal["time", "memory", "integral"]
_QUANTITY = {"time": "net", "memory": "nmu", "integral": "ntmu"}


class EffiBenchXConfig(BaseModel):
    """Settings of the EffiBench-X scores."""

    model_config = ConfigDict(extra="forbid")

    dimension: Dimension = Field(default="time", description="time | memory | integral.")
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())


def effibench_x_score(
    results: Sequence[Verdict],
    canonical: Canonical | None = None,
    config: EffiBenchXConfig | None = None,
) -> MetricResult:
    """The EffiBench-X score of one model's results on one dimension, as a fraction."""
    config = config or EffiBenchXConfig()
    q = _QUANTITY[config.dimension]
    name = f"effibench-x-{config.dimension}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    for tid, vs in grouped.tasks.items():
        scores = []
        for v in vs:
            if not v.correct:
                scores.append(0.0)
                continue
            where = f"{name}: task {tid!r} sample {v.sample} candidate"
            mine = timing_value(v.candidate, q, where)
            if mine is None:
                raise ConfigError(f"{where}: correct but not measured; it cannot be scored")
            ratio = canonical_value(v, q, canonical, name) / mine
            scores.append(min(1.0, max(0.0, ratio)))
        per_task[tid] = sum(scores) / len(scores)
    return summarize(
        name, per_task, config.bootstrap, notes=grouped.notes, settings=config.model_dump()
    )


class EffiBenchXMetric:
    """EffiBench-X's score as a `Metric`; `compute(results, canonical=...)` (optional)."""

    def __init__(self, config: EffiBenchXConfig | None = None) -> None:
        self.config = config or EffiBenchXConfig()
        self.name = f"effibench-x-{self.config.dimension}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context, ("canonical",))
        return effibench_x_score(results, context.get("canonical"), self.config)
