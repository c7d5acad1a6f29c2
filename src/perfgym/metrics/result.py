"""`MetricResult` and the `Metric` protocol every metric implements (`Metric.compute`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class MetricResult(BaseModel):
    """One metric's value over a results set, with its bootstrap CI and per-task values."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Metric name, e.g. 'crr' or 'p50_pass@1'.")
    value: float | None = Field(
        description="Point estimate (fractions, not percentages); None when undefined, e.g. "
        "Slow/CRR with no correct task. `notes` says why."
    )
    ci_low: float | None = Field(default=None, description="Lower end of the bootstrap CI.")
    ci_high: float | None = Field(default=None, description="Upper end of the bootstrap CI.")
    confidence: float = Field(default=0.95, description="Coverage the CI was built for.")
    n: int = Field(description="Tasks the value is computed over (the bootstrap unit).")
    denominator: str = Field(
        default="", description="In words, what the value is divided by (e.g. 'all tasks')."
    )
    per_task: dict[str, float | None] = Field(
        default_factory=dict,
        description="Task id -> that task's contribution; None where the task is outside a "
        "conditional denominator (e.g. failed tasks for Slow/CRR).",
    )
    notes: list[str] = Field(default_factory=list, description="Caveats, exclusions, sources.")
    config: dict[str, Any] = Field(default_factory=dict, description="Settings that produced it.")

    def percent(self) -> float | None:
        """The value as a percentage (papers print percentages)."""
        return None if self.value is None else 100.0 * self.value


@runtime_checkable
class Metric(Protocol):
    """A configured metric: built by a factory, registered by name, applied with `compute`.

    `results` is what the metric consumes (judge `Verdict`s for most; ENAMEL problems for
    `eff@k`). Extra inputs a metric needs, such as a pool of human solutions, are keyword
    arguments documented on each metric.
    """

    name: str

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult: ...
