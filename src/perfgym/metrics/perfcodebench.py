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

Decisions (docs/metrics.md "Which rule decides faster"): `PerfCodeBenchConfig.decision`
"significant" (the default) reads 1[Tc < Tb] as "the comparison says the candidate is faster"
and 1[Tc ≤ Tr] as "not slower than the reference" (`perfgym.timing.decision.speed_call`:
paired by round, with the equivalence margin, the task's noise band when rounds are too few,
a tie by construction for the baseline's or reference's own source); CGRE counts no gain the
comparison does not see (0 unless faster; 1 when level with the reference). The table also
carries `fbr_strict`, `rbr_strict` and `cgre_strict`: the paper's rule on the estimates, for
comparison with published figures.

Edge cases perfgym defines (the paper does not): when Tb ≤ Tr the gap is empty and CGRE is
the limit of Eq. 3 as Tr rises to Tb, i.e. 1[Tc < Tb] (= FBR), the same rule as the RLPF
reward's default `degenerate_gap="step"` (`degenerate_gap="zero"`: 0, Eq. 3 as written and
PerfCodeBench's published scripts' reading). A correct result whose
timing is missing or degraded keeps its CRR credit but earns no FBR/RBR/CGRE; the notes count
such tasks. With several samples per task, a task's value is the mean over its samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, checked_duration, group_results, no_context
from perfgym.metrics.bootstrap import BootstrapConfig, bootstrap_ci
from perfgym.metrics.result import MetricResult
from perfgym.timing.decision import Decision, speed_call

# Column order of the per-task table every statistic below reads.
_C, _F, _R, _G, _GE, _SLOW, _GAP, _FS, _RS, _GS = range(10)
_WITHIN = {_C: "correct tasks", _F: "faster-than-baseline tasks"}


class PerfCodeBenchConfig(BaseModel):
    """Settings of the PerfCodeBench table."""

    model_config = ConfigDict(extra="forbid")

    cgre_threshold: float = Field(
        default=0.8, description="CGRE≥x counts tasks closing ≥ x of the gap."
    )
    decision: Decision = Field(
        default="significant",
        description="What counts as faster / reference-level in fbr, rbr, cgre, slow, gap: "
        "'significant' (the comparison's decision) or 'strict' (Tc < Tb, Tc <= Tr on the "
        "estimates, as RLPF). fbr_strict, rbr_strict and cgre_strict are always strict.",
    )
    degenerate_gap: Literal["step", "zero"] = Field(
        default="step",
        description="CGRE when Tb <= Tr (no gap to close): 'step' = 1[Tc < Tb] (perfgym's rule, "
        "the limit of Eq. 3), 'zero' = 0 (Eq. 3 as written: the clipped ratio is never positive; "
        "PerfCodeBench's own rule, `eval --published --rules published`).",
    )
    same_source_ties: bool = Field(
        default=True,
        description="'significant': a candidate whose normalised source is the baseline's "
        "(reference's) ties with it by construction (Verdict.same_source). False: the "
        "statistics alone decide (to measure them).",
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


def cgre(tc: float, tb: float, tr: float, degenerate: Literal["step", "zero"] = "step") -> float:
    """clip((Tb − Tc)/(Tb − Tr), 0, 1); when Tb ≤ Tr (no gap to close): 1[Tc < Tb], or 0 with
    `degenerate="zero"`."""
    if tb <= tr:
        return 1.0 if tc < tb and degenerate == "step" else 0.0
    return float(min(1.0, max(0.0, (tb - tc) / (tb - tr))))


def sample_outcome(
    v: Verdict,
    decision: Decision = "significant",
    *,
    same_source_ties: bool = True,
    degenerate_gap: Literal["step", "zero"] = "step",
) -> SampleOutcome:
    """FBR, RBR, CGRE and speedup of one verdict (Eqs. 1–3) under `decision`."""
    if not v.correct:
        return SampleOutcome(correct=False, fbr=False, rbr=False, cgre=0.0)
    where = f"task {v.task_id!r} sample {v.sample}"
    tc = checked_duration(v.candidate, f"{where} candidate")
    tb = checked_duration(v.baseline, f"{where} baseline")
    tr = checked_duration(v.reference, f"{where} reference")
    speedup = tb / tc if tc is not None and tb is not None else None
    missing = tc is None or tb is None or tr is None
    if decision == "strict":
        fbr = tc is not None and tb is not None and tc < tb
        rbr = tc is not None and tr is not None and tc <= tr
        gap = (
            cgre(tc, tb, tr, degenerate_gap)
            if tc is not None and tb is not None and tr is not None
            else 0.0
        )
        return SampleOutcome(correct=True, fbr=fbr, rbr=rbr, cgre=gap, speedup=speedup,
                             timing_missing=missing)  # fmt: skip
    same = set(v.same_source) if same_source_ties else set()
    vs_base = (
        speed_call(v.candidate, v.baseline, same_source="baseline" in same) if tc and tb else None
    )
    vs_ref = (
        speed_call(v.candidate, v.reference, same_source="reference" in same) if tc and tr else None
    )
    fbr = vs_base is not None and vs_base.faster
    rbr = vs_ref is not None and vs_ref.at_least_as_fast
    gap = 0.0
    if fbr and tc is not None and tb is not None and tr is not None:
        # a shortfall within noise closes the gap
        gap = 1.0 if rbr else cgre(tc, tb, tr, degenerate_gap)
    return SampleOutcome(correct=True, fbr=fbr, rbr=rbr, cgre=gap, speedup=speedup,
                         timing_missing=missing)  # fmt: skip


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
    fbr_strict: MetricResult
    rbr_strict: MetricResult
    cgre_strict: MetricResult
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
            self.fbr_strict,
            self.rbr_strict,
            self.cgre_strict,
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
    """Per-task rows [correct, fbr, rbr, cgre, cgre≥x, slow, gap] under `config.decision`,
    then [fbr, rbr, cgre] under the strict rule (means over samples)."""
    grouped = group_results(results, "PerfCodeBench table", config.policy)
    ids = list(grouped.tasks)
    rows = np.zeros((len(ids), 10))
    missing: list[str] = []
    unnested: list[str] = []
    for r, tid in enumerate(ids):
        vs = grouped.tasks[tid]
        outs = [sample_outcome(v, config.decision, same_source_ties=config.same_source_ties,
                               degenerate_gap=config.degenerate_gap) for v in vs]  # fmt: skip
        for o, v in zip(outs, vs, strict=True):
            row = [o.correct, o.fbr, o.rbr, o.cgre, o.correct and o.cgre >= config.cgre_threshold]
            slow = o.correct and not o.fbr
            gap = o.fbr and not o.rbr
            st = (o if config.decision == "strict"
                  else sample_outcome(v, "strict", degenerate_gap=config.degenerate_gap))  # fmt: skip
            strict = [st.fbr, st.rbr, st.cgre]
            rows[r] += np.array([*row, slow, gap, *strict], dtype=float) / len(outs)
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
        fbr_strict=make("fbr_strict", _FS),
        rbr_strict=make("rbr_strict", _RS),
        cgre_strict=make("cgre_strict", _GS),
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
    "fbr_strict": "fbr_strict",
    "rbr_strict": "rbr_strict",
    "cgre_strict": "cgre_strict",
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
