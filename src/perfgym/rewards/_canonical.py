"""The canonical verdicts `check_reward` feeds a reward: RLPF's staircase and the edge cases."""

from __future__ import annotations

import math
from typing import Any

from perfgym.judge.verdict import Stage, TestResult, Timing, TimingStatus, Verdict
from perfgym.run_status import Status

TB, TR = 1.0, 0.25
"""Canonical baseline and reference durations (s); two workloads share each total equally."""

WORKLOADS = ("w1", "w2")

CANONICAL_NOISE_BAND = 0.05
"""The canonical timings' A/A noise band: every rung's Tc lies well outside it."""

# Tc per rung: WO is fast on purpose (speed must never lift a wrong answer above a correct one).
_RUNG_TC = {"WO": 0.1, "correct": 1.2, "faster": 0.6, "reference": 0.2}


def timing(total: float, **extra: Any) -> Timing:
    """A Timing of `total` seconds split evenly over the canonical workloads."""
    share = total / len(WORKLOADS)
    fields: dict[str, Any] = {
        "estimate_s": total,
        "samples_s": [total],
        # One round, as RLPF trains: the judge then stamps the task's A/A noise band.
        "noise_band": CANONICAL_NOISE_BAND,
        "per_workload_s": dict.fromkeys(WORKLOADS, share),
        "peak_rss_mb": 64.0 * total,
        "memory_integral_mb_s": 64.0 * total * total,
    }
    fields.update(extra)
    return Timing(**fields)


def verdict(stage: Stage, tc: float | None = None, **extra: Any) -> Verdict:
    fields: dict[str, Any] = {
        "task_id": "canonical",
        "stage": stage,
        "candidate": timing(tc) if tc is not None else None,
        "baseline": timing(TB),
        "reference": timing(TR),
    }
    fields.update(extra)
    return Verdict(**fields)


def staircase() -> list[tuple[str, Verdict]]:
    """One verdict per rung: NX < NC < NR < WO < correct < faster < reference (RLPF Eq. 7)."""
    return [
        ("NX", verdict(Stage.NX, reason="no code block")),
        ("NC", verdict(Stage.NC, source="int main(", reason="compile error")),
        ("NR", verdict(Stage.NR, source="x", detail="RUNTIME_ERROR")),
        ("WO", verdict(Stage.WO, _RUNG_TC["WO"], source="x")),
        ("correct", verdict(Stage.OK, _RUNG_TC["correct"], source="x")),
        ("faster", verdict(Stage.OK, _RUNG_TC["faster"], source="x")),
        ("reference", verdict(Stage.OK, _RUNG_TC["reference"], source="x")),
    ]


def edge_cases() -> list[tuple[str, Verdict]]:
    """Verdicts every reward must survive: equal times, degenerate gaps, missing/bad timings, infra."""
    ok = Stage.OK
    nan = math.nan
    half_timeout = timing(0.5, per_workload_s={"w1": 0.25})
    return [
        ("tc_equals_tb", verdict(ok, TB)),
        ("tc_below_tr", verdict(ok, 0.1)),
        ("tb_below_tr", verdict(ok, 0.4, baseline=timing(0.5), reference=timing(0.8))),
        ("tb_equals_tr", verdict(ok, 0.5, baseline=timing(0.5), reference=timing(0.5))),
        ("candidate_absent", verdict(ok)),
        (
            "candidate_degraded",
            verdict(ok, 0.5, candidate=timing(0.5, status=TimingStatus.DEGRADED)),
        ),
        (
            "candidate_unavailable",
            verdict(
                ok,
                candidate=Timing.model_validate(
                    {"status": TimingStatus.UNAVAILABLE, "status_reason": "no clock"}
                ),
            ),
        ),
        (
            "candidate_nan",
            verdict(ok, candidate=timing(nan, per_workload_s=dict.fromkeys(WORKLOADS, nan))),
        ),
        ("candidate_zero", verdict(ok, candidate=timing(0.0))),
        ("candidate_negative", verdict(ok, candidate=timing(-1.0))),
        ("baseline_absent", verdict(ok, 0.5, baseline=None)),
        ("reference_absent", verdict(ok, 0.5, reference=None)),
        ("clock_mismatch", verdict(ok, 0.5, candidate=timing(0.5, clock="cpu"))),
        ("no_per_workload", verdict(ok, candidate=timing(0.5, per_workload_s={}))),
        (
            "workload_timeout",
            verdict(
                ok,
                candidate=half_timeout,
                tests=[TestResult(id="w2", passed=True, status=Status.TIMEOUT)],
            ),
        ),
        (
            "infra_error",
            verdict(Stage.NR, infra_error=True, detail="SANDBOX_ERROR", reason="bwrap failed"),
        ),
    ]


COMPLETION = "<thinking>use a heap</thinking>\n<solution>\n```python\nprint(1)\n```\n</solution>"


def pool_entry() -> list[dict[str, float | None]]:
    """Five references per canonical verdict, per workload 0.125 s (= TR/2) up to 0.5 s (= TB/2)."""
    return [dict.fromkeys(WORKLOADS, s) for s in (0.125, 0.2, 0.3, 0.4, 0.5)]


CANONICAL_COLUMNS: dict[str, Any] = {
    "pool": pool_entry,
    "completions": lambda: COMPLETION,
    "format_ok": lambda: True,
    "objective": lambda: "optimization",
    "input_passed": lambda: True,
    "input_time_s": lambda: TB,
    "baseline_s": lambda: TB,
    "reference_s": lambda: TR,
}
"""Column name -> maker of its canonical per-verdict value."""
