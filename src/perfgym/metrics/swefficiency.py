"""SWE-fficiency's speedup-ratio score (swefficiency/swefficiency `scripts/eval/get_report.py`).

Per task, with speedups measured over the unmodified repository (perfgym: the baseline):

    speedup_model  = Tb / Tc   if the patch passes its correctness tests, else 1 (no speedup)
    speedup_expert = Tb / Tr
    SR             = speedup_model / speedup_expert   (= Tr/Tc when correct, Tr/Tb otherwise)

and the score is the harmonic mean of SR over all tasks (PerfAgent §IV-A restates it: a failed
patch scores 1/speedup_expert). The hack-adjusted variant scores a hack-flagged patch as a
failed one (speedup 1). Durations are the totals (`Timing.estimate_s`); one result per task.
A correct patch without a usable duration is scored as failed and counted in the notes; a
missing baseline or reference duration leaves SR undefined and is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import (
    DEFAULT_HACK_FLAGS,
    ResultsPolicy,
    checked_duration,
    group_results,
    is_hacked,
    no_context,
)
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.result import MetricResult


class SpeedupRatioConfig(BaseModel):
    """Settings of the SWE-fficiency score."""

    model_config = ConfigDict(extra="forbid")

    hack_adjusted: bool = Field(default=False, description="Score hack-flagged patches as failed.")
    hack_flags: tuple[str, ...] = Field(
        default=DEFAULT_HACK_FLAGS, description="Flags that mark a hack (besides 'hack…')."
    )
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())


def _harmonic(rows: np.ndarray) -> float:
    return float(len(rows) / np.sum(1.0 / rows))


def speedup_ratio_score(
    results: Sequence[Verdict], config: SpeedupRatioConfig | None = None
) -> MetricResult:
    """Harmonic mean over tasks of SR = speedup_model / speedup_expert (SWE-fficiency)."""
    config = config or SpeedupRatioConfig()
    name = "swefficiency_sr" + ("(hack-adj)" if config.hack_adjusted else "")
    grouped = group_results(results, name, config.policy, one_per_task=True)
    per_task: dict[str, float] = {}
    untimed = hacked = 0
    for tid, (v,) in grouped.tasks.items():
        where = f"task {tid!r}"
        tb = checked_duration(v.baseline, f"{where} baseline")
        tr = checked_duration(v.reference, f"{where} reference")
        if tb is None or tr is None:
            raise ConfigError(f"{name}: {where} lacks a baseline or reference duration")
        speedup_model = 1.0
        if v.correct:
            tc = checked_duration(v.candidate, f"{where} candidate")
            if tc is None:
                untimed += 1
            elif config.hack_adjusted and is_hacked(v, config.hack_flags):
                hacked += 1
            else:
                speedup_model = tb / tc
        per_task[tid] = speedup_model / (tb / tr)
    notes = list(grouped.notes)
    if untimed:
        notes.append(f"{untimed} correct patch(es) had no usable duration; scored as speedup 1")
    if hacked:
        notes.append(f"{hacked} correct patch(es) carried a hack flag; scored as speedup 1")
    return summarize(
        name,
        per_task,
        config.bootstrap,
        statistic=_harmonic,
        denominator="all tasks (harmonic mean)",
        notes=notes,
        settings=config.model_dump(),
    )


class SpeedupRatioMetric:
    """The SWE-fficiency score as a `Metric`."""

    def __init__(self, config: SpeedupRatioConfig | None = None) -> None:
        self.config = config or SpeedupRatioConfig()
        self.name = "swefficiency_sr" + ("(hack-adj)" if self.config.hack_adjusted else "")

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context)
        return speedup_ratio_score(results, self.config)


def repo_speedup_ratio_score(
    attempts: Sequence[Any],
    *,
    hack_adjusted: bool = False,
    bootstrap: BootstrapConfig | None = None,
) -> MetricResult:
    """SWE-fficiency's score over repository attempts (`perfgym.metrics.gso.RepoAttempt`, one
    per task): SR = speedup / expert_speedup, a failed (or, hack-adjusted, flagged) patch
    counting as speedup 1; the harmonic mean over tasks."""
    name = "repo_swefficiency_sr" + ("(hack-adj)" if hack_adjusted else "")
    per_task: dict[str, float] = {}
    for a in attempts:
        if a.task_id in per_task:
            raise ConfigError(f"{name}: task {a.task_id!r} has more than one attempt")
        if not a.expert_speedup or a.expert_speedup <= 0:
            raise ConfigError(f"{name}: task {a.task_id!r} has no expert speedup")
        counted = a.correct and a.speedup is not None and not (hack_adjusted and a.hacked)
        per_task[a.task_id] = (a.speedup if counted else 1.0) / a.expert_speedup
    if not per_task:
        raise ConfigError(f"{name}: no attempts")
    return summarize(name, per_task, bootstrap or BootstrapConfig(), statistic=_harmonic,
                     denominator="all tasks (harmonic mean)",
                     settings={"hack_adjusted": hack_adjusted})  # fmt: skip
