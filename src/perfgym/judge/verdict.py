"""`Verdict`: how far a candidate got through extract → build → run → check → measure."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox.execution import HIDING_FLAGS, Status


class Stage(str, Enum):
    """Furthest stage reached, in RLPF's order: NX < NC < NR < WO < OK."""

    NX = "NX"  # no extractable program
    NC = "NC"  # did not build
    NR = "NR"  # crashed, timed out, or exceeded memory/output
    WO = "WO"  # ran, wrong output
    OK = "OK"  # correct

    @property
    def rank(self) -> int:
        return _ORDER[self]

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Stage):
            return NotImplemented
        return self.rank < other.rank


_ORDER = {Stage.NX: 0, Stage.NC: 1, Stage.NR: 2, Stage.WO: 3, Stage.OK: 4}


class TestResult(BaseModel):
    """One correctness test or workload run."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False

    id: str
    passed: bool
    status: Status
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    message: str = ""


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
    harness_elapsed_ns: list[int] = Field(
        default_factory=list, description="Self-reported elapsed_ns (kept, cross-checked)."
    )
    status: TimingStatus = TimingStatus.OK
    status_reason: str = ""
    flags: list[str] = Field(
        default_factory=list,
        description="Timing suspicions: 'timing_drift' (probes moved; status degraded), "
        "'first_call_gap' (first call much slower than repeats: a caching signature), and the "
        "sandbox's accounting flags (HIDING_FLAGS: 'hidden_cpu', 'outlived_main', "
        "'cpu_over_wall'; status degraded).",
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


class Verdict(BaseModel):
    """The judge's answer for one (task, candidate)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    suite: str = Field("", description="Suite the task came from; '' when unknown.")
    model: str = Field(
        "", description="Who produced the candidate (a model name, 'baseline', ...)."
    )
    sample: int = Field(0, description="Index of this candidate among the model's samples.")
    stage: Stage
    detail: str = Field("", description="NR: TIMEOUT/MEMORY_LIMIT/RUNTIME_ERROR/...; NX/NC reason.")
    reason: str = ""
    infra_error: bool = Field(
        False, description="True when the sandbox (not the program) failed; never a wrong answer."
    )
    language: str = ""
    source: str | None = Field(None, description="The extracted program.")
    extraction_rule: str = ""
    build_log: str = ""
    tests: list[TestResult] = Field(default_factory=list)
    candidate: Timing | None = None
    baseline: Timing | None = None
    reference: Timing | None = None
    flags: list[str] = Field(
        default_factory=list, description="Suspicions, e.g. 'harness_timer_mismatch'."
    )
    config: dict[str, Any] = Field(default_factory=dict, description="Judge config used.")
    machine: str = ""

    @property
    def correct(self) -> bool:
        return self.stage is Stage.OK
