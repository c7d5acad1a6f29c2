"""DMC-Optim's optimisation environment over one verdict: filter workloads, apply limits, rank (paper 003, §4, §D.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.verdict import Verdict
from perfgym.rewards._pool import (
    Pool,
    leaderboard_position,
    mean_position,
    order_statistic,
)
from perfgym.timing.result import is_positive_seconds


class EnvironmentConfig(BaseModel):
    """Where timing enters: pre-execution filter, intra-execution limit, post-execution ranking."""

    model_config = ConfigDict(extra="forbid")

    filter: Literal["none", "absolute", "relative"] = Field(
        default="none",
        description="Pre-execution: 'absolute' keeps workloads whose human runtime <= "
        "filter_threshold_s; 'relative' drops the slowest filter_fraction of workloads.",
    )
    filter_threshold_s: float = Field(
        default=2.0, gt=0, description="Absolute filter threshold (s)."
    )
    filter_fraction: float = Field(
        default=0.2, ge=0, lt=1, description="Relative filter: share dropped."
    )
    filter_stat: float = Field(
        default=50.0,
        gt=0,
        le=100,
        description="Percentile of the pool that stands for 'human runtime'.",
    )
    limit: Literal["none", "absolute", "relative", "ranked"] = Field(
        default="none",
        description="Intra-execution deadline per workload: 'absolute' limit_s; 'relative' the "
        "limit_percentile-th pool duration on that workload; 'ranked' the slowest of the pool's "
        "top limit_percentile% solutions on that workload. Each times limit_factor.",
    )
    limit_s: float = Field(default=2.0, gt=0, description="Absolute deadline (s).")
    limit_percentile: float = Field(
        default=50.0, gt=0, le=100, description="τ of relative/ranked limits."
    )
    limit_factor: float = Field(
        default=1.0, gt=0, description="Slack multiplied into relative/ranked limits."
    )
    cap_s: float = Field(
        default=10.0, gt=0, description="Hard cap on every workload (DMC-Optim's CES: 10 s)."
    )
    on_missing_timing: Literal["none", "timeout"] = Field(
        default="none",
        description="A correct program with a workload it has no duration for: 'none' -> None; "
        "'timeout' -> that workload timed out (DMC-Optim's fallback rule, §C.4).",
    )

    @property
    def needs_pool(self) -> bool:
        return self.filter != "none" or self.limit in ("relative", "ranked")


@dataclass
class EnvironmentOutcome:
    """What the environment measured for one correct candidate."""

    workloads: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    mean_position: float | None = None
    leaderboard_position: float | None = None
    reason: str = ""

    @property
    def timeout_fraction(self) -> float:
        return len(self.timeouts) / len(self.workloads) if self.workloads else 0.0


def candidate_durations(verdict: Verdict) -> tuple[dict[str, float], set[str], str]:
    """Per-workload seconds (only from an ok timing), ids of timed-out tests, and a problem if any."""
    timed_out = {t.id for t in verdict.tests if t.timed_out}
    timing = verdict.candidate
    if verdict.hid_time:
        # Scored by `run_environment` as timing out on every workload.
        hid_w = set(timing.per_workload_s) if timing is not None else set()
        return {}, timed_out | hid_w, "candidate hid time"
    if timing is None or not timing.ok:
        state = "absent" if timing is None else timing.status.value
        return {}, timed_out, f"candidate timing {state}"
    bad = sorted(w for w, s in timing.per_workload_s.items() if not is_positive_seconds(s))
    if bad:
        return {}, timed_out, f"candidate per-workload durations not positive finite: {bad}"
    return dict(timing.per_workload_s), timed_out, ""


def _filtered(cfg: EnvironmentConfig, pool: Pool, workloads: list[str]) -> list[str]:
    if cfg.filter == "none":
        return workloads
    human = {w: order_statistic(pool.on(w), cfg.filter_stat) for w in workloads if len(pool.on(w))}
    if cfg.filter == "absolute":
        # A workload no human ran has no runtime to judge it by: it stays.
        return [w for w in workloads if w not in human or human[w] <= cfg.filter_threshold_s]
    drop_n = math.floor(cfg.filter_fraction * len(human))
    slowest = sorted(human, key=lambda w: (-human[w], w))[:drop_n]
    return [w for w in workloads if w not in slowest]


def _deadlines(cfg: EnvironmentConfig, pool: Pool, workloads: list[str]) -> dict[str, float]:
    import numpy as np  # numpy loads where a pool is ranked, not on import

    limit: dict[str, float] = {}
    if cfg.limit == "absolute":
        limit = dict.fromkeys(workloads, cfg.limit_s)
    elif cfg.limit == "relative":
        limit = {
            w: cfg.limit_factor * order_statistic(pool.on(w), cfg.limit_percentile)
            for w in workloads
            if len(pool.on(w))
        }
    elif cfg.limit == "ranked":
        # Limits are set before the candidate runs: rank the pool among itself only.
        means = pool.leaderboard(workloads)
        ranked = [j for j in np.argsort(means, kind="stable") if not np.isnan(means[j])]
        keep = max(1, math.ceil(cfg.limit_percentile / 100.0 * len(ranked))) if ranked else 0
        chosen = pool.matrix[ranked[:keep]]
        for w in workloads:
            k = pool.index.get(w)
            times = chosen[:, k] if k is not None else np.empty(0)
            times = times[~np.isnan(times)]
            if len(times):
                limit[w] = cfg.limit_factor * float(times.max())
    return {w: min(cfg.cap_s, limit.get(w, math.inf)) for w in workloads}


def run_environment(
    cfg: EnvironmentConfig, verdict: Verdict, pool: Pool, *, leaderboard: bool
) -> EnvironmentOutcome:
    """Filter, time-limit and rank one correct candidate; `EnvironmentOutcome.reason` set when it cannot."""
    seconds, timed_out, problem = candidate_durations(verdict)
    universe = sorted(pool.workloads() | set(seconds) | timed_out)
    if verdict.hid_time:
        # Hiding time is the candidate's doing: it times out on every workload (the lowest
        # rank a correct program can have), never None.
        seconds, timed_out = {}, set(universe)
    if not universe or (not seconds and not timed_out and cfg.on_missing_timing == "none"):
        return EnvironmentOutcome(
            reason=f"timing missing: {problem or 'no per-workload durations'}"
        )
    workloads = _filtered(cfg, pool, universe)
    unmeasured = [w for w in workloads if w not in seconds and w not in timed_out]
    if unmeasured and cfg.on_missing_timing == "none":
        why = f" ({problem})" if problem else ""
        return EnvironmentOutcome(
            reason=f"timing missing: no duration for workloads {unmeasured}{why}"
        )
    deadlines = _deadlines(cfg, pool, workloads)
    censored: dict[str, float] = {}
    timeouts: list[str] = []
    for w in workloads:
        took = seconds.get(w, math.inf)
        if w in timed_out or took > deadlines[w]:
            timeouts.append(w)
            # A killed run is recorded at its deadline, as a timing service would record it.
            took = deadlines[w]
        censored[w] = took
    outcome = EnvironmentOutcome(workloads=workloads, timeouts=timeouts)
    outcome.mean_position = mean_position(censored, pool, workloads)
    if leaderboard and outcome.mean_position is not None:
        means = pool.leaderboard(workloads, extra=censored)
        outcome.leaderboard_position = leaderboard_position(outcome.mean_position, means)
    return outcome
