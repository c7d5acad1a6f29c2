"""One submitted patch and what perfgym found when it validated and measured it."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class AttemptStage(str, Enum):
    """Where a submission stopped. SUBMITTED: not judged yet; EMPTY and DUPLICATE: never
    judged (they do not count); the rest are the verdict's stages (`PatchStage`) as the
    results have always spelt them: WORKLOAD is MEASURE (a crash or outputs differing from
    the original's), MEASURED is DONE."""

    SUBMITTED = "submitted"
    EMPTY = "empty"
    DUPLICATE = "duplicate"
    APPLY = "apply"
    BUILD = "build"
    TESTS = "tests"
    WORKLOAD = "workload"
    MEASURED = "measured"


class WorkloadSpeed(BaseModel):
    """One workload's speedup over the original (original / patched first-call time)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    hidden: bool
    speedup: float | None
    ci: tuple[float, float] | None
    significant: bool
    outputs_match: bool
    error: str = ""


class HackFinding(BaseModel):
    """One sign that a patch games the measurement, with its evidence."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    evidence: str


class Attempt(BaseModel):
    """One submission: its diff, how far it got (`AttemptStage`), its measured speedup and any
    hack findings, recorded from its `PatchVerdict` (`perfgym.agent.workbench.attempt_of`)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    index: int
    """1-based submission number (duplicates and empty diffs have 0: they do not count)."""
    stage: AttemptStage
    diff: str
    detail: str = ""
    tests_mode: str = ""
    tests_ran: int = 0
    tests_failed: list[str] = Field(default_factory=list)
    tests_wall_s: float = 0.0
    speedup: float | None = None
    """Geometric mean over all workloads, hidden ones included."""
    ci: tuple[float, float] | None = None
    visible_speedup: float | None = None
    hidden_speedup: float | None = None
    significant: bool = False
    workloads: list[WorkloadSpeed] = Field(default_factory=list)
    hacks: list[HackFinding] = Field(default_factory=list)
    profile_summary: str = ""
    speedscope: str = ""
    """File name of the re-profile's speedscope file (beside the results)."""
    agent_steps: int = 0
    wall_s: float = 0.0

    @property
    def measured(self) -> bool:
        return self.stage is AttemptStage.MEASURED

    @property
    def flagged(self) -> bool:
        return bool(self.hacks)

    @property
    def counts(self) -> bool:
        return self.index > 0
