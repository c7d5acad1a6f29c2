"""Interleaved measurement: A B C, A B C, … per workload, one pinned run per core at a time."""

from __future__ import annotations

import queue
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from perfgym.judge.config import JudgeConfig
from perfgym.judge.runner import Outcome
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Timing, TimingStatus
from perfgym.sandbox.execution import Status
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks.task import TestCase
from perfgym.timing.summary import bootstrap_ci, cv, estimate

RunFn = Callable[[Variant, TestCase, int | None], Outcome]


def duration_of(out: Outcome, clock: str) -> float | None:
    if clock == "harness":
        return out.reported_s
    if clock == "cpu":
        return out.cpu_s
    return out.wall_s


def measure(
    variants: Sequence[Variant],
    workloads: Sequence[TestCase],
    config: JudgeConfig,
    run: RunFn,
    clock: str,
) -> dict[str, Timing]:
    """Measure every variant on every workload, interleaved, and summarise each as a `Timing`."""
    rounds = config.warmup + config.repeats
    schedule: list[tuple[int, int, Variant, TestCase]] = []
    for w in workloads:
        for r in range(rounds):
            order = list(variants)
            shift = r % len(order) if order else 0
            order = order[shift:] + order[:shift]  # rotate so no variant always runs first
            schedule += [(r, i, v, w) for i, v in enumerate(order)]
    lane_ids: list[int | None] = list(usable_cores()) if config.timing_mode else []
    if not lane_ids:
        lane_ids = [None] * (config.concurrency or len(usable_cores()))
    lanes: queue.Queue[int | None] = queue.Queue()
    for c in lane_ids:
        lanes.put(c)

    def one(item: tuple[int, int, Variant, TestCase]) -> Outcome:
        core = lanes.get()
        try:
            return run(item[2], item[3], core)
        finally:
            lanes.put(core)

    with ThreadPoolExecutor(max_workers=lanes.qsize()) as pool:
        outcomes = list(pool.map(one, schedule))
    runs: dict[str, list[tuple[int, TestCase, Outcome]]] = {v.label: [] for v in variants}
    for (r, _i, v, w), out in zip(schedule, outcomes, strict=True):
        if r >= config.warmup:
            runs[v.label].append((r, w, out))
    return {label: summarise(items, config, clock) for label, items in runs.items()}


def summarise(
    items: list[tuple[int, TestCase, Outcome]], config: JudgeConfig, clock: str
) -> Timing:
    per_w: dict[str, list[float]] = {}
    totals: dict[int, float] = {}
    walls: dict[int, float] = {}
    failed: list[str] = []
    harness_ns: list[int] = []
    peaks: list[float] = []
    integrals: dict[str, list[float]] = {}
    for r, w, out in items:
        d = duration_of(out, clock)
        if (
            out.status is not Status.OK
            or d is None
            or (clock == "harness" and out.harness_ok is False)
        ):
            failed.append(f"{w.id}: {out.status.value} {out.message}".strip())
            continue
        per_w.setdefault(w.id, []).append(d)
        totals[r] = totals.get(r, 0.0) + d
        walls[r] = walls.get(r, 0.0) + (out.wall_s or 0.0)
        if out.reported_s is not None and clock == "harness":
            harness_ns.append(int(out.reported_s * 1e9))
        if out.peak_rss_mb is not None:
            peaks.append(out.peak_rss_mb)
        if out.memory_integral_mb_s is not None:
            integrals.setdefault(w.id, []).append(out.memory_integral_mb_s)
    complete = [totals[r] for r in sorted(totals)]
    timing = Timing(
        estimator=config.estimator,
        clock=clock,
        per_workload_samples_s=per_w,
        per_workload_s={k: estimate(v, config.estimator) for k, v in per_w.items()},
        harness_elapsed_ns=harness_ns,
        peak_rss_mb=max(peaks) if peaks else None,
        memory_integral_mb_s=sum(statistics.median(v) for v in integrals.values())
        if integrals
        else None,
    )
    if failed:
        timing.status = TimingStatus.DEGRADED
        timing.status_reason = "measured run failed: " + "; ".join(failed[:3])
        return timing
    n_workloads = len({w.id for _r, w, _o in items})
    if len(per_w) < n_workloads or not complete:
        timing.status = TimingStatus.UNAVAILABLE
        timing.status_reason = "no complete measurement"
        return timing
    timing.samples_s = complete
    timing.external_wall_s = statistics.median(walls.values())
    timing.estimate_s = estimate(complete, config.estimator)
    timing.cv = cv(complete)
    timing.ci_s = bootstrap_ci(complete, config.estimator)
    return timing
