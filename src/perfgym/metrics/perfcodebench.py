"""PerfCodeBench's leaderboard (RLPF Table 1/8): CRR, FBR, RBR, Slow, Gap, CGRE and friends.

Definitions (RLPF, Eqs. 1–3 and the Table 1/8 captions), per task i with candidate, baseline
and reference durations Tc, Tb, Tr and correctness C:

    FBR_i  = C · 1[Tc < Tb]                     faster than the baseline
    RBR_i  = C · 1[Tc ≤ Tr]                     reaches the expert reference
    CGRE_i = C · clip((Tb − Tc)/(Tb − Tr), 0, 1) share of the baseline→reference gap closed

Denominators: CRR, FBR, RBR, Slow, Gap, mean CGRE and CGRE≥0.8 are over **all tasks**
(failures count 0). Slow/CRR = (CRR − FBR)/CRR is over the **correct** tasks and
Gap/FBR = (FBR − RBR)/FBR over the **faster-than-baseline** tasks. Per task, Slow is
"correct and not faster" and Gap is "faster and not reference-level" (Table 8's wording); when
the reference is faster than the baseline these equal CRR − FBR and FBR − RBR exactly.

Edge cases perfgym defines (the paper does not): when Tb ≤ Tr the gap is empty and CGRE is
the limit of Eq. 3 as Tr rises to Tb, i.e. 1[Tc < Tb] (= FBR), the same rule as the RLPF
reward's default `degenerate_gap="step"`. A correct result whose
timing is missing or degraded keeps its CRR credit but earns no FBR/RBR/CGRE; the notes count
such tasks. With several samples per task, a task's value is the mean over its samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, checked_duration, group_results, no_context
from perfgym.metrics.bootstrap import BootstrapConfig, bootstrap_ci
from perfgym.metrics.result import MetricResult

# Column order of the per-task table every statistic below reads.
_C, _F, _R, _G, _GE, _SLOW, _GAP = range(7)
_WITHIN = {_C: "correct tasks", _F: "faster-than-baseline tasks"}


class PerfCodeBenchConfig(BaseModel):
    """Settings of the PerfCodeBench table."""

    model_config = ConfigDict(extra="forbid")

    cgre_threshold: float = Field(
        default=0.8, description="CGRE≥x counts tasks closing ≥ x of the gap."
    )
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("cgre_threshold")
    @classmethod
    def _threshold(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("cgre_threshold must lie in [0, 1]")
        return v


class SampleOutcome(BaseModel):
    """RLPF's per-result signals for one verdict."""

    model_config = ConfigDict(extra="forbid")

    correct: bool
    fbr: bool
    rbr: bool
    cgre: float
    speedup: float | None = Field(default=None, description="Tb/Tc of a correct, timed result.")
    timing_missing: bool = Field(
        default=False, description="Correct, but a needed duration is absent."
    )


def cgre(tc: float, tb: float, tr: float) -> float:
    """clip((Tb − Tc)/(Tb − Tr), 0, 1); when Tb ≤ Tr (no gap to close): 1[Tc < Tb]."""
    if tb <= tr:
        return 1.0 if tc < tb else 0.0
    return float(min(1.0, max(0.0, (tb - tc) / (tb - tr))))


def sample_outcome(v: Verdict) -> SampleOutcome:
    """FBR, RBR, CGRE and speedup of one verdict (Eqs. 1–3)."""
    if not v.correct:
        return SampleOutcome(correct=False, fbr=False, rbr=False, cgre=0.0)
    where = f"task {v.task_id!r} sample {v.sample}"
    tc = checked_duration(v.candidate, f"{where} candidate")
    tb = checked_duration(v.baseline, f"{where} baseline")
    tr = checked_duration(v.reference, f"{where} reference")
    fbr = tc is not None and tb is not None and tc < tb
    rbr = tc is not None and tr is not None and tc <= tr
    gap = cgre(tc, tb, tr) if tc is not None and tb is not None and tr is not None else 0.0
    speedup = tb / tc if tc is not None and tb is not None else None
    missing = tc is None or tb is None or tr is None
    return SampleOutcome(
        correct=True, fbr=fbr, rbr=rbr, cgre=gap, speedup=speedup, timing_missing=missing
    )


class PerfCodeBenchTable(BaseModel):
    """RLPF Table 1 columns plus Table 8's Slow and Gap, each with a bootstrap CI."""

    model_config = ConfigDict(extra="forbid")

    crr: MetricResult
    fbr: MetricResult
    rbr: MetricResult
    slow: MetricResult
    gap: MetricResult
    slow_over_crr: MetricResult
    gap_over_fbr: MetricResult
    cgre: MetricResult
    cgre_at_least: MetricResult
    n_tasks: int

    def rows(self) -> list[MetricResult]:
        return [
            self.crr,
            self.fbr,
            self.rbr,
            self.slow_over_crr,
            self.gap_over_fbr,
            self.cgre,
            self.cgre_at_least,
            self.slow,
            self.gap,
        ]


def _ratio(num: int, den: int) -> Callable[[np.ndarray], float]:
    def stat(rows: np.ndarray) -> float:
        d = rows[:, den].sum()
        return float(rows[:, num].sum() / d) if d > 0 else float("nan")

    return stat


def _mean(col: int) -> Callable[[np.ndarray], float]:
    return lambda rows: float(rows[:, col].mean())


def task_table(
    results: Sequence[Verdict], config: PerfCodeBenchConfig
) -> tuple[list[str], np.ndarray, list[str]]:
    """Per-task rows [correct, fbr, rbr, cgre, cgre≥x, slow, gap] (means over samples)."""
    grouped = group_results(results, "PerfCodeBench table", config.policy)
    ids = list(grouped.tasks)
    rows = np.zeros((len(ids), 7))
    missing: list[str] = []
    unnested: list[str] = []
    for r, tid in enumerate(ids):
        outs = [sample_outcome(v) for v in grouped.tasks[tid]]
        for o in outs:
            row = [o.correct, o.fbr, o.rbr, o.cgre, o.correct and o.cgre >= config.cgre_threshold]
            slow = o.correct and not o.fbr
            gap = o.fbr and not o.rbr
            rows[r] += np.array([*row, slow, gap], dtype=float) / len(outs)
            if o.timing_missing:
                missing.append(tid)
            if o.rbr and not o.fbr:
                unnested.append(tid)
    notes = list(grouped.notes)
    if missing:
        notes.append(
            f"{len(set(missing))} correct task(s) lack a usable candidate/baseline/reference "
            "duration; they count for CRR only"
        )
    if unnested:
        notes.append(
            f"{len(set(unnested))} task(s) reach the reference without beating the baseline "
            "(reference not faster than baseline there); Slow/Gap use the per-task definitions"
        )
    return ids, rows, notes


def perfcodebench_table(
    results: Sequence[Verdict], config: PerfCodeBenchConfig | None = None
) -> PerfCodeBenchTable:
    """Compute every PerfCodeBench column over one model's results on one suite."""
    config = config or PerfCodeBenchConfig()
    ids, rows, notes = task_table(results, config)
    cfg: dict[str, Any] = config.model_dump()
    x = config.cgre_threshold

    def make(name: str, col: int, within: int | None = None) -> MetricResult:
        """Mean of column `col` over all tasks, or its ratio to column `within`'s sum."""
        stat = _mean(col) if within is None else _ratio(col, within)
        den = "all tasks" if within is None else _WITHIN[within]
        value = stat(rows)
        low, high, ci_notes = bootstrap_ci(rows, stat, config.bootstrap)
        # Conditional rates: only tasks inside the denominator carry a value.
        per_task: dict[str, float | None] = {
            t: float(rows[i, col])
            if within is None
            else (float(rows[i, col] / rows[i, within]) if rows[i, within] > 0 else None)
            for i, t in enumerate(ids)
        }
        undefined = [f"undefined: no task in the denominator ({den})"] if np.isnan(value) else []
        return MetricResult(
            name=name,
            value=None if np.isnan(value) else value,
            ci_low=low,
            ci_high=high,
            confidence=config.bootstrap.confidence,
            n=len(ids),
            denominator=den,
            per_task=per_task,
            notes=[*notes, *ci_notes, *undefined],
            config=cfg,
        )

    return PerfCodeBenchTable(
        crr=make("crr", _C),
        fbr=make("fbr", _F),
        rbr=make("rbr", _R),
        slow=make("slow", _SLOW),
        gap=make("gap", _GAP),
        slow_over_crr=make("slow/crr", _SLOW, within=_C),
        gap_over_fbr=make("gap/fbr", _GAP, within=_F),
        cgre=make("cgre", _G),
        cgre_at_least=make(f"cgre>={x:g}", _GE),
        n_tasks=len(ids),
    )


#: Column name -> attribute of `PerfCodeBenchTable`, for the registry.
COLUMNS = {
    "crr": "crr",
    "fbr": "fbr",
    "rbr": "rbr",
    "slow": "slow",
    "gap": "gap",
    "slow/crr": "slow_over_crr",
    "gap/fbr": "gap_over_fbr",
    "cgre": "cgre",
    "cgre>=x": "cgre_at_least",
}


class PerfCodeBenchMetric:
    """One PerfCodeBench column as a `Metric` (e.g. `PerfCodeBenchMetric("crr")`)."""

    def __init__(self, column: str, config: PerfCodeBenchConfig | None = None) -> None:
        if column not in COLUMNS:
            raise ConfigError(f"unknown PerfCodeBench column {column!r}; one of {list(COLUMNS)}")
        self.config = config or PerfCodeBenchConfig()
        self.column = column
        self.name = column if column != "cgre>=x" else f"cgre>={self.config.cgre_threshold:g}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context)
        table = perfcodebench_table(results, self.config)
        result: MetricResult = getattr(table, COLUMNS[self.column])
        return result
