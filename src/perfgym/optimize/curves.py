"""Per-iteration metrics of a run (Afterburner Table 3 style): for each iteration, every task's
best program so far is scored as one sample: pass@1, FBR, RBR (perfgym's significant decisions),
median speedup over the baseline, Beyond-T/M/I where the tasks carry stored pool measurements,
and the share of the round's proposals that were correct."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import PerfgymError
from perfgym.judge.verdict import Verdict
from perfgym.metrics.beyond import BeyondConfig, beyond_breakdown
from perfgym.metrics.bootstrap import BootstrapConfig
from perfgym.metrics.perfcodebench import sample_outcome
from perfgym.optimize.search import TaskState
from perfgym.tasks.task import StoredMeasurement, Task

DIMENSIONS = (("T", "time"), ("M", "memory"), ("I", "integral"))


class IterationRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    iteration: int
    tasks: int
    pass_at_1: float
    fbr: float
    rbr: float
    median_speedup: float | None
    beyond: dict[str, float | None]
    proposals_ok: float | None  # correct proposals / proposals of this round (None: no round)
    accepted: int  # tasks whose best changed in this iteration
    speedups: dict[str, list[float | None]] = Field(
        default_factory=dict,
        description="Task -> [speed-up over the baseline, 95 % CI low, high] of its best as "
        "measured at this iteration (CI None: too few rounds to test).",
    )


def speedup_ci(v: Verdict | None) -> tuple[float, float | None, float | None] | None:
    """Tb/Tc of a correct verdict with the 95 % CI of the paired comparison of its rounds
    (baseline against candidate, measured together: the comparison's estimate, which can
    differ a little from the ratio of medians `median_speedup` uses); None when it has no
    usable timing."""
    from perfgym.timing.compare import compare_timings

    if v is None or not v.correct or v.candidate is None or v.baseline is None:
        return None
    outcome = sample_outcome(v)
    if outcome.speedup is None:
        return None
    try:
        paired = len(v.baseline.samples_s) == len(v.candidate.samples_s)
        c = compare_timings(v.baseline, v.candidate, paired=paired)
    except PerfgymError:
        c = None
    if c is None or c.ci is None:
        return outcome.speedup, None, None
    return c.ratio, c.ci[0], c.ci[1]  # the comparison's own estimate, inside its own interval


def _pools(tasks: Sequence[Task]) -> dict[str, list[StoredMeasurement]] | None:
    pools = {t.id: [s.stored for s in t.pool if s.stored is not None] for t in tasks}
    return pools if all(len(p) >= 2 for p in pools.values()) else None


def _carry(state: TaskState, iteration: int) -> Verdict | None:
    """The task's best as of `iteration`: the latest snapshot at or before it."""
    known = [i for i in state.snapshots if i <= iteration and state.snapshots[i] is not None]
    return state.snapshots[max(known)] if known else None


def iteration_rows(states: Mapping[str, TaskState], iterations: int) -> list[IterationRow]:
    tasks = [s.task for s in states.values()]
    pools = _pools(tasks)
    first = min((min(s.snapshots) for s in states.values() if s.snapshots), default=1)
    rows = []
    for it in range(min(first, 1), iterations + 1):
        best = {tid: _carry(s, it) for tid, s in states.items()}
        outcomes = [sample_outcome(v) if v is not None else None for v in best.values()]
        n = max(1, len(outcomes))
        speeds = [o.speedup for o in outcomes if o is not None and o.correct and o.speedup]
        beyond: dict[str, float | None] = {}
        for letter, dim in DIMENSIONS:
            beyond[letter] = _beyond([v for v in best.values() if v is not None], pools, dim)
        ok = [s.proposals_ok[it] for s in states.values() if it in s.proposals_ok]
        rows.append(IterationRow(
            iteration=it, tasks=len(states),
            pass_at_1=sum(1 for o in outcomes if o is not None and o.correct) / n,
            fbr=sum(1 for o in outcomes if o is not None and o.fbr) / n,
            rbr=sum(1 for o in outcomes if o is not None and o.rbr) / n,
            median_speedup=statistics.median(speeds) if speeds else None, beyond=beyond,
            proposals_ok=sum(a for a, _ in ok) / sum(b for _, b in ok) if ok else None,
            accepted=sum(1 for s in states.values() if it in s.accepted_at),
            speedups={tid: list(c) for tid, v in best.items() if (c := speedup_ci(v))}))  # fmt: skip
    return rows


def _beyond(verdicts: list[Verdict], pools: dict[str, list[StoredMeasurement]] | None,
            dimension: Any) -> float | None:  # fmt: skip
    if pools is None or not verdicts:
        return None
    cfg = BeyondConfig(dimension=dimension, bootstrap=BootstrapConfig(replicates=128))
    try:
        return beyond_breakdown(verdicts, pools, cfg).beyond.value
    except PerfgymError:  # a pool without this dimension: not computable
        return None
