"""`Timing` and `TimingStatus`: the measured cost of one variant, and whether it may be used.

They sit at the bottom of the timing layer (pydantic and the stdlib only), so the judge, the
timing functions, rewards and metrics share them without importing each other;
`perfgym.judge.verdict` re-exports them.
"""

from __future__ import annotations

import math
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from perfgym.run_status import HIDING_FLAGS


def is_positive_seconds(value: object) -> bool:
    """A duration one can divide by: a finite number above zero (a bool is no duration)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


class TimingStatus(str, Enum):
    """Whether a duration may be used. DEGRADED keeps correctness but contributes no duration."""

    OK = "ok"
    DEGRADED = "degraded"
    UNAVAILABLE = "unavailable"


class Timing(BaseModel):
    """The measured cost of one variant (candidate, baseline or reference) of a task."""

    model_config = ConfigDict(extra="forbid")

    estimate_s: float | None = Field(None, description="The duration used by rewards/metrics.")
    samples_s: list[float] = Field(default_factory=list, description="Every measured total.")
    per_workload_s: dict[str, float] = Field(
        default_factory=dict, description="Workload id -> estimated duration."
    )
    per_workload_samples_s: dict[str, list[float]] = Field(default_factory=dict)
    estimator: str = "median"
    clock: str = Field("wall", description="wall | cpu | instructions")
    cv: float | None = Field(None, description="Coefficient of variation of the samples.")
    ci_s: tuple[float, float] | None = Field(None, description="95% CI of the estimate.")
    peak_rss_mb: float | None = None
    memory_integral_mb_s: float | None = None
    instructions: int | None = Field(
        None, description="clock='instructions': the estimate as a count (estimate_s holds it too)."
    )
    external_wall_s: float | None = Field(
        None, description="Median over repeats of the sandbox's wall time (for cross-checks)."
    )
    external_walls_s: list[float] = Field(
        default_factory=list,
        description="The sandbox's wall time of each measured round, in round order (pairs "
        "with another variant's rounds of the same measurement).",
    )
    external_cpus_s: list[float] = Field(
        default_factory=list,
        description="The CPU time of each measured round's runs (every process they created), "
        "in round order like external_walls_s; empty where a run's CPU was not read.",
    )
    harness_elapsed_ns: list[int] = Field(
        default_factory=list, description="Self-reported elapsed_ns (kept, cross-checked)."
    )
    noise_band: float | None = Field(
        None,
        ge=0,
        description="The A/A noise band of this program on this clock: two single runs of it "
        "land within a ratio of 1 + noise_band of each other (`timing.noise_band`). Set on the "
        "baseline's and reference's timings by the judge when its rounds are too few for a "
        "test; speed decisions against them then use it.",
    )
    status: TimingStatus = TimingStatus.OK
    status_reason: str = ""
    flags: list[str] = Field(
        default_factory=list,
        description="Timing suspicions: 'timing_drift' (probes moved; status degraded), "
        "'first_call_gap' (first call much slower than repeats: a caching signature), "
        "'first_call_unchecked' (that check's runs failed twice; nothing was compared), and the "
        "sandbox's accounting flags (HIDING_FLAGS: 'hidden_cpu', 'outlived_main', "
        "'cpu_over_wall'; status degraded), 'cores_capped' (the machine had fewer measuring "
        "cores than the task asks for: `cores` < `cores_wanted`).",
    )
    cores: int | None = Field(
        None,
        ge=1,
        description="Cores each measured run was pinned to, reserved for it alone (timing "
        "mode; None: the runs floated, or the timing predates the field).",
    )
    cores_wanted: int = Field(
        1, ge=1, description="Cores the task asks for (`Task.cores`); more than `cores`: capped."
    )
    threads_seen: int | None = Field(
        None,
        ge=1,
        description="Most threads (over all the run's processes) seen alive at once in a "
        "measured run, sampled (a run shorter than a sampling interval shows none: None).",
    )
    first_call_s: float | None = Field(
        None, description="Function tasks, first-call check: external cost of the first call."
    )
    repeat_call_s: float | None = Field(
        None, description="Function tasks, first-call check: external cost of a repeated call."
    )

    @property
    def hid_time(self) -> list[str]:
        """The accounting flags saying this variant's program hid time from the clock.

        A run that hid CPU in processes its main process never waited for, left processes
        behind, or used more CPU than its cores allow: its timing is DEGRADED, and rewards give
        it the lowest speed credit a correct program can earn (never None, never a bonus).
        """
        return [f for f in self.flags if f in HIDING_FLAGS]

    @property
    def ok(self) -> bool:
        """The judge trusts this timing (status OK); its estimate may still be no duration."""
        return self.status is TimingStatus.OK

    @property
    def usable_s(self) -> float | None:
        """The estimate in seconds when the timing is OK and the estimate finite and > 0."""
        if self.unusable_reason is not None or self.estimate_s is None:
            return None
        return float(self.estimate_s)

    @property
    def unusable_reason(self) -> str | None:
        """Why `usable_s` is None ('timing degraded: ...', 'timing has no estimate', ...)."""
        if not self.ok:
            why = f": {self.status_reason}" if self.status_reason else ""
            return f"timing {self.status.value}{why}"
        if self.estimate_s is None:
            return "timing has no estimate"
        if not is_positive_seconds(self.estimate_s):
            return f"estimate {self.estimate_s!r} is not a positive finite duration"
        return None
