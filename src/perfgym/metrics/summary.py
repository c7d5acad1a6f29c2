"""Per-model summary of a results set: stage counts and the PerfCodeBench headline numbers."""

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
#: A correctness-only run's columns (nothing was timed): pass@k for these k, where every task
#: has at least k samples.
PASS_KS = (1, 10, 100)
#: The flag the judge puts on a verdict of a task where nothing was timed.
NOT_TIMED = "not_timed"


class ModelSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    n: int
    stages: dict[str, int]
    infra_errors: int
    metrics: dict[str, tuple[float, float | None, float | None]] = Field(
        default_factory=dict, description="name -> (value, CI low, CI high)."
    )
    note: str = ""
    timed: bool = Field(True, description="False: correctness only; `metrics` holds pass@k.")

    def cell(self, name: str) -> str:
        if name not in self.metrics:
            return "-"
        v, lo, hi = self.metrics[name]
        if lo is None or hi is None:
            return f"{v:.3f}"
        return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


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
            n=len(vs),
            stages=dict(Counter(v.stage.value for v in vs if not v.infra_error)),
            infra_errors=sum(v.infra_error for v in vs),
        )
        try:
            table = perfcodebench_table(vs, config)
            for name in HEADLINE:
                m = getattr(table, name)
                row.metrics[name] = (m.value, m.ci_low, m.ci_high)
        except PerfgymError as exc:
            row.note = str(exc)
        rows.append(row)
    return rows


def not_timed(verdicts: list[Verdict]) -> bool:
    """A correctness-only set: nothing of it was measured, and the judge said so."""
    return any(NOT_TIMED in v.flags for v in verdicts) and all(
        v.candidate is None for v in verdicts
    )


def correctness_summary(model: str, vs: list[Verdict], seed: int = 0) -> ModelSummary:
    """Stage counts and pass@k (unbiased estimator per task, the mean over tasks, a bootstrap
    CI over tasks) of a correctness-only set; infrastructure errors are left out."""
    from perfgym.metrics.bootstrap import summarize
    from perfgym.metrics.estimators import pass_at_k

    scored = [v for v in vs if not v.infra_error]
    row = ModelSummary(model=model, n=len(vs), timed=False,
                       stages=dict(Counter(v.stage.value for v in scored)),
                       infra_errors=len(vs) - len(scored), note="not timed (correctness only)")  # fmt: skip
    by_task: dict[str, list[bool]] = {}
    for v in scored:
        by_task.setdefault(v.task_id, []).append(v.stage.value == "OK")
    if not by_task:
        row.note = "not timed; no verdict to score"
        return row
    least = min(len(p) for p in by_task.values())
    for k in PASS_KS:
        if k > least:
            break
        per_task = {t: pass_at_k(len(p), sum(p), k) for t, p in by_task.items()}
        m = summarize(f"pass@{k}", per_task, BootstrapConfig(seed=seed))
        row.metrics[f"pass@{k}"] = (m.value if m.value is not None else 0.0, m.ci_low, m.ci_high)
    return row
