"""Per-model summary of a results set: stage counts, pass@k and the PerfCodeBench headline numbers.

Every rate is aggregated per task first (a task's samples give one value) and then averaged
over tasks; `n` counts tasks, `samples` counts verdicts. Values are fractions of tasks (0-1),
the one format the console, the JSON and the HTML report all print."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import PerfgymError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy
from perfgym.metrics.bootstrap import BootstrapConfig
from perfgym.metrics.perfcodebench import PerfCodeBenchConfig, perfcodebench_table
from perfgym.timing.decision import Decision

#: The headline columns: the significant decisions, then the paper's strict rule beside them.
HEADLINE = ("crr", "fbr", "fbr_strict", "rbr", "rbr_strict", "cgre", "cgre_strict")
#: pass@k for these k (and for the fewest samples any task has, when more than one), where
#: every task has at least k samples: the unbiased estimator of Chen et al. (2021).
PASS_KS = (1, 10, 100)
#: The flag the judge puts on a verdict of a task where nothing was timed.
NOT_TIMED = "not_timed"


class ModelSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    n: int = Field(description="Tasks (the unit every rate and its bootstrap CI is over).")
    samples: int = Field(0, description="Verdicts (samples) over all tasks.")
    stages: dict[str, int] = Field(description="Verdicts per stage (counts of samples).")
    infra_errors: int
    metrics: dict[str, tuple[float, float | None, float | None]] = Field(
        default_factory=dict, description="name -> (value, CI low, CI high)."
    )
    note: str = ""
    timed: bool = Field(True, description="False: correctness only; `metrics` holds pass@k.")

    def cell(self, name: str, sep: str = " ") -> str:
        if name not in self.metrics:
            return "-"
        return fraction(*self.metrics[name], sep=sep)


def fraction(
    v: float | None, lo: float | None = None, hi: float | None = None, sep: str = " "
) -> str:
    """A rate as perfgym prints it everywhere: a fraction with three decimals, its CI bracketed."""
    if v is None:
        return "-"
    if lo is None or hi is None:
        return f"{v:.3f}"
    return f"{v:.3f}{sep}[{lo:.3f}, {hi:.3f}]"


def summarise_models(
    verdicts: list[Verdict], decision: Decision = "significant", seed: int = 0
) -> list[ModelSummary]:
    """Per model: stage counts and `HEADLINE` (fbr, rbr, cgre under `decision`; the `_strict`
    columns always under the paper's rule); `seed` seeds the bootstrap CIs."""
    by_model: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_model.setdefault(v.model, []).append(v)
    rows = []
    config = PerfCodeBenchConfig(
        policy=ResultsPolicy(infra_errors="exclude"),
        bootstrap=BootstrapConfig(seed=seed),
        decision=decision,
    )
    for model, vs in by_model.items():
        if not_timed(vs):
            rows.append(correctness_summary(model, vs, seed))
            continue
        row = ModelSummary(
            model=model,
            n=len({v.task_id for v in vs}),
            samples=len(vs),
            stages=dict(Counter(v.stage.value for v in vs if not v.infra_error)),
            infra_errors=sum(v.infra_error for v in vs),
        )
        try:
            add_pass_at_k(row, vs, seed)
            table = perfcodebench_table(vs, config)
            for name in HEADLINE:
                m = getattr(table, name)
                row.metrics[name] = (m.value, m.ci_low, m.ci_high)
        except PerfgymError as exc:
            row.note = str(exc)
        rows.append(row)
    return rows


def pass_ks(least: int) -> list[int]:
    """The k of pass@k a run with at least `least` samples per task reports."""
    return sorted({k for k in (*PASS_KS, least) if k <= least})


def add_pass_at_k(row: ModelSummary, vs: list[Verdict], seed: int) -> None:
    """pass@k per task (unbiased estimator over that task's samples), then the mean over tasks
    with a bootstrap CI resampling tasks; infrastructure errors are left out."""
    from perfgym.metrics.ptau import PassAtKConfig, correctness_pass_at_k

    per_task = Counter(v.task_id for v in vs if not v.infra_error)
    if not per_task:
        return
    policy = ResultsPolicy(infra_errors="exclude")
    for k in pass_ks(min(per_task.values())):
        config = PassAtKConfig(k=k, policy=policy, bootstrap=BootstrapConfig(seed=seed))
        m = correctness_pass_at_k(vs, config)
        row.metrics[m.name] = (m.value if m.value is not None else 0.0, m.ci_low, m.ci_high)


def not_timed(verdicts: list[Verdict]) -> bool:
    """A correctness-only set: nothing of it was measured, and the judge said so."""
    return any(NOT_TIMED in v.flags for v in verdicts) and all(
        v.candidate is None for v in verdicts
    )


def correctness_summary(model: str, vs: list[Verdict], seed: int = 0) -> ModelSummary:
    """Stage counts and pass@k (unbiased estimator per task, the mean over tasks, a bootstrap
    CI over tasks) of a correctness-only set; infrastructure errors are left out."""
    scored = [v for v in vs if not v.infra_error]
    row = ModelSummary(model=model, n=len({v.task_id for v in vs}), samples=len(vs), timed=False,
                       stages=dict(Counter(v.stage.value for v in scored)),
                       infra_errors=len(vs) - len(scored), note="not timed (correctness only)")  # fmt: skip
    if not scored:
        row.note = "not timed; no verdict to score"
        return row
    add_pass_at_k(row, vs, seed)
    return row
