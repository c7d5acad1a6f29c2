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
