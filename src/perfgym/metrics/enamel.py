"""ENAMEL's eff@k as a pure function of measured level times (q-rz/enamel, `enam/evaluate.py`).

ENAMEL (Qiu et al., ICLR 2025) scores a sample level by level (4 input-size levels; tests per
level 8, 4, 4, 4; each test timed 6 times and summarised by the Hodges–Lehmann estimator):

    t_j   = max over level j's tests of the sample's HL time (after time correction)
    r_j   = max over level j's tests of the reference's HL time
    T_j   = the level's time limit; ENAMEL uses one limit for every level,
            T = α · max_{j: w_j>0} r_j with α = 2 (`timeout_factor`); `enamel_level_limits`
            builds it. The run itself is killed at T/min(correction, 1) + 0.01 s, but
            efficiency uses T.
    e_j   = max(0, T_j − t_j) / (T_j − r_j)
    score = Σ_j w_j e_j / Σ_j w_j, weights (0, 3, 3, 4)

A wrong answer or an error on any test zeroes every level (and the sample fails pass@k); a
timeout on level j zeroes level j and all later levels (they are never run); a timeout on the
first level also fails the sample for pass@k. Per problem, eff@k is the unbiased expected
maximum score of k of its n samples (order-statistics estimator), pass@k the HumanEval
estimator; both are averaged over problems. Levels with weight 0 are never scored (ENAMEL
leaves their reference at −∞, so e_j = 0 there); perfgym reports 0 for them as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.metrics._inputs import no_context
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.enamel_levels import (
    ENAMEL_WEIGHTS,
    EnamelProblem,
    EnamelSample,
    enamel_level_limits,
)
from perfgym.metrics.estimators import eff_at_k, finite_values, hodges_lehmann, pass_at_k
from perfgym.metrics.result import MetricResult

__all__ = [
    "ENAMEL_WEIGHTS",
    "EnamelConfig",
    "EnamelMetric",
    "EnamelProblem",
    "EnamelSample",
    "enamel_eff_at_k",
    "enamel_level_limits",
    "enamel_level_time",
    "enamel_pass_at_k",
    "level_efficiencies",
    "sample_efficiency",
]


class EnamelConfig(BaseModel):
    """Settings of ENAMEL's eff@k and pass@k."""

    model_config = ConfigDict(extra="forbid")

    weights: tuple[float, ...] = Field(default=ENAMEL_WEIGHTS, description="Level weights w_j.")
    k: int = Field(default=1, description="eff@k / pass@k's k; every problem needs ≥ k samples.")
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not math.isfinite(w) or w < 0 for w in v) or sum(v) <= 0:
            raise ValueError("weights must be finite, >= 0, and not all 0")
        return v

    @field_validator("k")
    @classmethod
    def _k(cls, v: int) -> int:
        if v < 1:
            raise ValueError("k must be >= 1")
        return v


def enamel_level_time(per_test_repeats: Sequence[Sequence[float]]) -> float:
    """t_j: the largest Hodges–Lehmann time among a level's tests (each test's repeats)."""
    if not per_test_repeats:
        raise ConfigError("enamel level time: the level has no tests")
    return max(hodges_lehmann(reps) for reps in per_test_repeats)


def _check_levels(p: EnamelProblem, n_levels: int) -> None:
    where = f"enamel problem {p.task_id!r}"
    if len(p.reference_times_s) != n_levels or len(p.level_limits_s) != n_levels:
        raise ConfigError(f"{where}: expected {n_levels} reference times and level limits")
    finite_values(p.reference_times_s, f"{where} reference times")
    finite_values(p.level_limits_s, f"{where} level limits", positive=True)


def _check_sample(s: EnamelSample, n_levels: int, where: str) -> None:
    if len(s.level_times_s) != n_levels:
        raise ConfigError(f"{where}: expected {n_levels} level times")
    times = s.level_times_s
    first_timeout = next((j for j, t in enumerate(times) if t is None), n_levels)
    if any(t is not None for t in times[first_timeout:]):
        raise ConfigError(f"{where}: a level after a timeout has a time")
    if first_timeout:
        finite_values([t for t in times[:first_timeout] if t is not None], f"{where} times")


def _check_problem(p: EnamelProblem, n_levels: int) -> None:
    _check_levels(p, n_levels)
    if not p.samples:
        raise ConfigError(f"enamel problem {p.task_id!r}: no samples")
    for i, s in enumerate(p.samples):
        _check_sample(s, n_levels, f"enamel problem {p.task_id!r} sample {i}")


def level_efficiencies(
    sample: EnamelSample, problem: EnamelProblem, weights: Sequence[float] = ENAMEL_WEIGHTS
) -> list[float]:
    """e_j for each level (0 for wrong/error samples, for timed-out levels and after them)."""
    _check_levels(problem, len(weights))
    _check_sample(sample, len(weights), f"enamel problem {problem.task_id!r} sample")
    if not sample.correct:
        return [0.0] * len(weights)
    effs: list[float] = []
    for j, (t, r, limit, w) in enumerate(
        zip(
            sample.level_times_s,
            problem.reference_times_s,
            problem.level_limits_s,
            weights,
            strict=True,
        )
    ):
        if t is None:  # timeout: this level and every later one score 0
            return effs + [0.0] * (len(weights) - j)
        if w == 0:
            effs.append(0.0)
            continue
        if limit <= r:
            raise ConfigError(
                f"enamel problem {problem.task_id!r} level {j}: limit {limit!r} s is not above "
                f"the reference time {r!r} s"
            )
        effs.append(max(0.0, limit - t) / (limit - r))
    return effs


def sample_efficiency(
    sample: EnamelSample, problem: EnamelProblem, weights: Sequence[float] = ENAMEL_WEIGHTS
) -> float:
    """The weighted level efficiency Σ w_j e_j / Σ w_j of one sample."""
    effs = level_efficiencies(sample, problem, weights)
    return float(np.average(effs, weights=np.asarray(weights, dtype=float)))


def sample_passed(sample: EnamelSample) -> bool:
    """ENAMEL's pass: correct everywhere and the first level did not time out."""
    return sample.correct and bool(sample.level_times_s) and sample.level_times_s[0] is not None


def _validated(problems: Sequence[EnamelProblem], config: EnamelConfig, name: str) -> None:
    if not problems:
        raise ConfigError(f"{name}: no problems")
    ids = [p.task_id for p in problems]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{name}: a problem id appears twice")
    for p in problems:
        _check_problem(p, len(config.weights))
        if len(p.samples) < config.k:
            raise ConfigError(f"{name}: problem {p.task_id!r} has fewer than k samples")


#: Below this many problems the bootstrap interval is noted as little more than their range.
MIN_PROBLEMS_FOR_CI = 10


def enamel_eff_at_k(
    problems: Sequence[EnamelProblem], config: EnamelConfig | None = None
) -> MetricResult:
    """ENAMEL eff@k averaged over problems, with a bootstrap CI over problems."""
    config = config or EnamelConfig()
    name = f"eff@{config.k}"
    _validated(problems, config, name)
    per_task = {
        p.task_id: eff_at_k([sample_efficiency(s, p, config.weights) for s in p.samples], config.k)
        for p in problems
    }
    above = sorted(t for t, v in per_task.items() if v > 1.0)
    notes = [f"{len(above)} problem(s) score above 1 ({', '.join(above[:5])}): ENAMEL's e_j = "
             "max(0, T - t_j) / (T - r_j) is not clipped, a sample faster than the reference "
             "scores above 1 (at most T / (T - r_j) <= 2), and so can the interval"] if above \
        else []  # fmt: skip
    if len(per_task) < MIN_PROBLEMS_FOR_CI:
        notes.append(f"{len(per_task)} problems: the percentile interval is about the range of "
                     "their scores, not a confidence interval of the suite's figure")  # fmt: skip
    return summarize(name, per_task, config.bootstrap, notes=notes,
                     settings=config.model_dump())  # fmt: skip


def enamel_pass_at_k(
    problems: Sequence[EnamelProblem], config: EnamelConfig | None = None
) -> MetricResult:
    """ENAMEL pass@k (HumanEval's unbiased estimator) averaged over problems."""
    config = config or EnamelConfig()
    name = f"pass@{config.k}"
    _validated(problems, config, name)
    per_task = {
        p.task_id: pass_at_k(len(p.samples), sum(map(sample_passed, p.samples)), config.k)
        for p in problems
    }
    return summarize(name, per_task, config.bootstrap, settings=config.model_dump())


class EnamelMetric:
    """ENAMEL eff@k as a `Metric` over `EnamelProblem`s."""

    def __init__(self, config: EnamelConfig | None = None) -> None:
        self.config = config or EnamelConfig()
        self.name = f"eff@{self.config.k}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context)
        return enamel_eff_at_k(results, self.config)
