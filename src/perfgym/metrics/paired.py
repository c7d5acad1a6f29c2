"""Paired comparison of two systems on the problems both solve (RLPF Eq. 8, EffiBench-X).

RLPF evaluates transfer to EffiBench-X with this protocol (paper 000, "EffiBench-X" paragraph
and Eq. 8): for each shared problem k (correct under both systems) let
ρ_k = measurement_before / measurement_after, so ρ_k > 1 means the second system improved, and

    Δ = exp( (1/N) Σ_k ln ρ_k ) − 1

reported for execution time (ET; perfgym: `Timing.estimate_s`) and memory integral (MI;
`Timing.memory_integral_mb_s`), with the ET win rate: the share of shared problems on which
the second system is strictly faster. One result per problem on each side. Shared problems
where MI was not measured on either side are left out of the MI figure only (notes say how
many); a shared problem without ET on either side is refused, since it cannot be compared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, checked_duration, group_results, timing_memory
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.result import MetricResult


class PairedConfig(BaseModel):
    """Settings of the paired comparison."""

    model_config = ConfigDict(extra="forbid")

    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())


class PairedComparison(BaseModel):
    """How the second system ('after') compares with the first ('before')."""

    model_config = ConfigDict(extra="forbid")

    model_before: str
    model_after: str
    n_shared: int = Field(description="Problems both systems solve (the denominator).")
    n_before_only: int = Field(description="Problems only the first system solves.")
    n_after_only: int = Field(description="Problems only the second system solves.")
    et_improvement: MetricResult = Field(description="Δ for execution time (fraction).")
    mi_improvement: MetricResult | None = Field(
        description="Δ for memory integral; None when no shared problem has MI on both sides."
    )
    et_win_rate: MetricResult = Field(description="Share of shared problems faster after.")


def _gm_minus_one(rows: np.ndarray) -> float:
    # Per-task values are ln ρ_k, so the bootstrap resamples problems and re-forms Δ.
    return float(np.exp(rows.mean()) - 1.0)


def paired_comparison(
    before: Sequence[Verdict], after: Sequence[Verdict], config: PairedConfig | None = None
) -> PairedComparison:
    """RLPF Eq. 8 on ET and MI plus the ET win rate, over problems both systems solve."""
    config = config or PairedConfig()
    a = group_results(before, "paired comparison (before)", config.policy, one_per_task=True)
    b = group_results(after, "paired comparison (after)", config.policy, one_per_task=True)
    if a.suite and b.suite and a.suite != b.suite:
        raise ConfigError(f"paired comparison: different suites {a.suite!r}, {b.suite!r}")
    solved_a = {t for t, (v,) in a.tasks.items() if v.correct}
    solved_b = {t for t, (v,) in b.tasks.items() if v.correct}
    shared = sorted(solved_a & solved_b)
    if not shared:
        raise ConfigError("paired comparison: no problem is solved by both systems")
    log_et: dict[str, float] = {}
    log_mi: dict[str, float] = {}
    wins: dict[str, float] = {}
    for tid in shared:
        va, vb = a.tasks[tid][0], b.tasks[tid][0]
        ta = checked_duration(va.candidate, f"task {tid!r} before")
        tb = checked_duration(vb.candidate, f"task {tid!r} after")
        if ta is None or tb is None:
            raise ConfigError(f"paired comparison: task {tid!r} lacks a usable duration")
        log_et[tid] = float(np.log(ta / tb))
        wins[tid] = 1.0 if tb < ta else 0.0
        ma = timing_memory(va.candidate, "memory_integral_mb_s", f"task {tid!r} before")
        mb = timing_memory(vb.candidate, "memory_integral_mb_s", f"task {tid!r} after")
        if ma is not None and mb is not None and ma > 0 and mb > 0:
            log_mi[tid] = float(np.log(ma / mb))
    notes = [*a.notes, *b.notes]
    settings = config.model_dump()
    et = summarize(
        "effibench_et_improvement",
        log_et,
        config.bootstrap,
        statistic=_gm_minus_one,
        denominator="problems both systems solve",
        notes=[*notes, "per_task holds ln(ET_before/ET_after)"],
        settings=settings,
    )
    mi = None
    if log_mi:
        dropped = len(shared) - len(log_mi)
        mi_notes = [*notes, "per_task holds ln(MI_before/MI_after)"]
        if dropped:
            mi_notes.append(f"{dropped} shared problem(s) lack a positive memory integral")
        mi = summarize(
            "effibench_mi_improvement",
            log_mi,
            config.bootstrap,
            statistic=_gm_minus_one,
            denominator="problems both systems solve, with MI on both sides",
            notes=mi_notes,
            settings=settings,
        )
    win = summarize(
        "effibench_et_win_rate",
        wins,
        config.bootstrap,
        denominator="problems both systems solve",
        notes=notes,
        settings=settings,
    )
    return PairedComparison(
        model_before=a.model,
        model_after=b.model,
        n_shared=len(shared),
        n_before_only=len(solved_a - solved_b),
        n_after_only=len(solved_b - solved_a),
        et_improvement=et,
        mi_improvement=mi,
        et_win_rate=win,
    )
