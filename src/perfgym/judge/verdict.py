"""`Verdict`: how far a candidate got through extract → build → run → check → measure."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.decided_on import DecidedOn
from perfgym.run_status import BUILD_WORK, CLOCK_CHEAT_FLAGS, Status
from perfgym.timing.result import Timing, TimingStatus

__all__ = ["DecidedOn", "Stage", "TestResult", "Timing", "TimingStatus", "Verdict"]


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

    @property
    def timed_out(self) -> bool:
        """The run hit its time limit (rewards count such a workload at their cap)."""
        return self.status is Status.TIMEOUT


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
    same_source: list[str] = Field(
        default_factory=list,
        description="The roles ('baseline', 'reference') whose normalised source equals the "
        "candidate's (`perfgym.judge.same_source`): a tie with them by construction.",
    )
    decided_on: DecidedOn = Field(
        DecidedOn.VISIBLE,
        description="The inputs its workload checks and timings were decided on: 'hidden' "
        "(drawn fresh for this judge call; the author never saw them) or 'visible' (the "
        "task's declared workloads).",
    )
    hidden_workloads: int = Field(0, ge=0, description="How many hidden workloads it ran on.")
    why_visible: str = Field(
        "", description="Hidden workloads were asked for but the task has none: why."
    )
    harness_end_mark: str = Field(
        "",
        description="A harness task's candidate: how its verdict line was proven the harness's "
        "own (`perfgym.judge.trailer`): the wrapper that wrote the run's end mark "
        "('c-wrap-main', 'python-runpy', 'java-main', 'go-main-renamed'), or 'none: WHY' when "
        "its recipe could not be wrapped (the line is then believed as read); '' otherwise.",
    )
    harness_answer: str = Field(
        "",
        description="A harness task's candidate whose line said ok: whether its answer was "
        "also checked outside the program (`perfgym.judge.harness_answer`): 'checked: FIELDS' "
        "(equal to the reference's, where the reference's and the baseline's lines agree) or "
        "'not checked: WHY'; '' otherwise.",
    )
    config: dict[str, Any] = Field(default_factory=dict, description="Judge config used.")
    machine: str = ""
    meta: dict[str, Any] = Field(
        default_factory=dict,
        description="Fields of the candidate's input line that perfgym does not read, kept as "
        "given (e.g. prompt, finish_reason).",
    )

    @property
    def correct(self) -> bool:
        return self.stage is Stage.OK

    @property
    def hid_time(self) -> list[str]:
        """Why the candidate's timing is its own doing: the sandbox's accounting flags on its
        timing (`Timing.hid_time`), the harness cross-check's (`CLOCK_CHEAT_FLAGS`) and work
        done in its build (`BUILD_WORK`). Rewards
        give such a correct program the lowest speed credit, never None."""
        own = self.candidate.hid_time if self.candidate is not None else []
        cheats = (*CLOCK_CHEAT_FLAGS, BUILD_WORK)
        return own + [f for f in self.flags if f in cheats and f not in own]
