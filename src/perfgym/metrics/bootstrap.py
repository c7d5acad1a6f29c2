"""Bootstrap confidence intervals by resampling tasks (Afterburner's 128 replicates by default).

Each metric reduces its results to a table with one row per task; a replicate draws n rows
with replacement and recomputes the statistic on them, so ratio metrics (Slow/CRR, the
harmonic-mean SR) are re-formed per replicate instead of averaging per-task ratios.
Afterburner (`evaluation/venus/venus_bootstrap.py`) reports mean ± t·SEM of its replicates,
which measures the spread of the replicate *mean* and shrinks with more replicates; perfgym
reports the percentile interval of the replicates, the usual bootstrap CI of the statistic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.metrics.result import MetricResult

Statistic = Callable[[np.ndarray], float]


class BootstrapConfig(BaseModel):
    """How a metric's CI is computed."""

    model_config = ConfigDict(extra="forbid")

    replicates: int = Field(
        default=128, description="Resamples of the task set (Afterburner uses 128)."
    )
    confidence: float = Field(
        default=0.95, description="Two-sided coverage of the percentile interval."
    )
    seed: int = Field(
        default=0, description="Seed of the resampling RNG: same seed, same interval."
    )

    @field_validator("replicates")
    @classmethod
    def _replicates(cls, v: int) -> int:
        if v < 1:
            raise ValueError("replicates must be >= 1")
        return v

    @field_validator("confidence")
    @classmethod
    def _confidence(cls, v: float) -> float:
        if not 0.0 < v < 1.0:
            raise ValueError("confidence must lie in (0, 1)")
        return v


def bootstrap_ci(
    rows: np.ndarray, statistic: Statistic, config: BootstrapConfig
) -> tuple[float | None, float | None, list[str]]:
    """Percentile CI of `statistic` over task rows resampled with replacement.

    `rows` has one row per task (shape (n,) or (n, m)); `statistic` maps such an array to a
    float, returning NaN where undefined (e.g. a ratio whose denominator resampled to zero).
    Undefined replicates are dropped and reported in the returned notes.
    """
    rows = np.asarray(rows, dtype=float)
    n = rows.shape[0]
    if n == 0:
        raise ConfigError("bootstrap: no tasks to resample")
    rng = np.random.default_rng(config.seed)
    draws = rng.integers(0, n, size=(config.replicates, n))
    stats = np.array([statistic(rows[idx]) for idx in draws], dtype=float)
    notes: list[str] = []
    defined = stats[np.isfinite(stats)]
    if len(defined) < len(stats):
        notes.append(
            f"{len(stats) - len(defined)} of {len(stats)} bootstrap replicates left the "
            "statistic undefined and were dropped"
        )
    if len(defined) == 0:
        return None, None, notes
    if n == 1:
        notes.append("one task: the bootstrap interval is degenerate")
    alpha = (1.0 - config.confidence) / 2.0
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    return float(low), float(high), notes


def _mean(rows: np.ndarray) -> float:
    return float(rows.mean())


def summarize(
    name: str,
    per_task: Mapping[str, float],
    config: BootstrapConfig,
    *,
    statistic: Statistic = _mean,
    denominator: str = "all tasks",
    notes: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
) -> MetricResult:
    """A `MetricResult` for a statistic of one value per task (the mean unless told otherwise)."""
    if not per_task:
        raise ConfigError(f"{name}: no tasks to summarize")
    values = np.array(list(per_task.values()), dtype=float)
    value = statistic(values)
    low, high, ci_notes = bootstrap_ci(values, statistic, config)
    return MetricResult(
        name=name,
        value=float(value) if np.isfinite(value) else None,
        ci_low=low,
        ci_high=high,
        confidence=config.confidence,
        n=len(values),
        denominator=denominator,
        per_task={t: float(v) for t, v in per_task.items()},
        notes=[*notes, *ci_notes],
        config=dict(settings or {}),
    )
