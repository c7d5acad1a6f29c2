"""Speedup distribution of faster-than-baseline results (RLPF Table 13).

Speedup is Tb/Tc of a correct result that beats the baseline (FBR, by default the
comparison's significant decision; `decision="strict"`: Tc < Tb). Table 13 counts, among
RLPF's 142 FBR outputs, how many reach each threshold (≥ 1.05×, 1.2×, 1.5×, 2×, 5×, 10×, 20×,
50×); the text adds the median (4.77×). The unit is one result, so with several samples per
task each faster sample counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, group_results
from perfgym.metrics.perfcodebench import sample_outcome
from perfgym.timing.decision import Decision

RLPF_THRESHOLDS: tuple[float, ...] = (1.05, 1.2, 1.5, 2.0, 5.0, 10.0, 20.0, 50.0)


class SpeedupDistribution(BaseModel):
    """How many faster-than-baseline results reach each speedup threshold."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Faster-than-baseline results (the denominator of `fractions`).")
    thresholds: list[float]
    counts: list[int] = Field(description="Results with speedup ≥ each threshold.")
    fractions: list[float | None] = Field(description="counts / n; None when n is 0.")
    median: float | None = Field(description="Median speedup of the FBR results.")
    per_result: dict[str, float] = Field(
        default_factory=dict, description="'task_id#sample' -> speedup Tb/Tc."
    )
    notes: list[str] = Field(default_factory=list)


def speedup_distribution(
    results: Sequence[Verdict],
    thresholds: Sequence[float] = RLPF_THRESHOLDS,
    policy: ResultsPolicy | None = None,
    decision: Decision = "significant",
) -> SpeedupDistribution:
    """Counts of FBR results with Tb/Tc at or above each threshold (RLPF Table 13); FBR under
    `decision` (see `perfcodebench`)."""
    ths = [float(t) for t in thresholds]
    if not ths or any(not np.isfinite(t) or t <= 0 for t in ths):
        raise ConfigError(f"speedup thresholds must be finite and > 0, got {list(thresholds)}")
    grouped = group_results(results, "speedup distribution", policy or ResultsPolicy())
    speeds: dict[str, float] = {}
    for tid, vs in grouped.tasks.items():
        for v in vs:
            o = sample_outcome(v, decision)
            if o.fbr and o.speedup is not None:
                speeds[f"{tid}#{v.sample}"] = o.speedup
    values = np.array(list(speeds.values()), dtype=float)
    counts = [int(np.count_nonzero(values >= t)) for t in ths]
    n = len(values)
    return SpeedupDistribution(
        n=n,
        thresholds=ths,
        counts=counts,
        fractions=[c / n if n else None for c in counts],
        median=float(np.median(values)) if n else None,
        per_result=speeds,
        notes=list(grouped.notes) + ([] if n else ["no result beats the baseline"]),
    )
