"""What an audit finds: one `ProbeResult` per probe and task, a `TaskAudit` per task, and the
suite's `AuditSummary`."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ProbeKind(str, Enum):  # noqa: UP042 - not StrEnum, which changes str() and format()
    """Gameability: a program that should earn nothing, judged. Measurability: whether the
    task's timings can tell what it claims to tell."""

    GAMEABILITY = "gameability"
    MEASURABILITY = "measurability"


class Outcome(str, Enum):  # noqa: UP042
    """A probe's answer. SCORES / DOES_NOT_SCORE: gameability probes (does the program that
    should earn nothing earn something?); SOUND / WEAK: measurability probes, and gameability
    checks that judge no program (`hidden-draws`); NOT_APPLICABLE:
    the probe cannot be run on this task (the detail says why); INFRA_ERROR: perfgym could not
    run it (never a finding about the task)."""

    SCORES = "scores"
    DOES_NOT_SCORE = "does not score"
    SOUND = "sound"
    WEAK = "weak"
    NOT_APPLICABLE = "not applicable"
    INFRA_ERROR = "infra error"


class Severity(str, Enum):  # noqa: UP042
    """How much a finding matters, in order; `--fail-on` gates on it."""

    NONE = "none"
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


class ProbeResult(BaseModel):
    """One probe on one task."""

    model_config = ConfigDict(extra="forbid")

    probe: str
    kind: ProbeKind
    outcome: Outcome
    severity: Severity
    detail: str = Field("", description="What was found, or why the probe does not apply.")
    stage: str | None = Field(None, description="Gameability: the probe program's verdict stage.")
    faster: bool | None = Field(
        None, description="Gameability: judged significantly faster than the baseline."
    )
    decided_on: str | None = Field(None, description="'hidden' or 'visible' inputs.")
    rewards: dict[str, float | None] = Field(
        default_factory=dict,
        description="Gameability: the program's value under each registered reward (None: "
        "that reward cannot score it here).",
    )
    value: float | None = Field(
        None, description="Measurability: the figure (headroom ratio, detectable ratio, ...)."
    )
    figures: dict[str, Any] = Field(default_factory=dict, description="Supporting figures.")

    @field_validator("detail")
    @classmethod
    def _writable(cls, text: str) -> str:
        """A detail quoting a program's bytes (lone surrogates) as escapes: JSON holds it."""
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


class TaskAudit(BaseModel):
    """Every probe's result on one task."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    task_key: str = Field(
        "",
        description="The audited task's id and content hash (`perfgym.audit.content.content_key`): "
        "a resumed audit reuses this result only for the same task content.",
    )
    suite: str = ""
    language: str
    kind: str
    results: list[ProbeResult] = Field(default_factory=list)
    elapsed_s: float = 0.0
    candidates: int = Field(0, description="Programs judged for this task (one batch).")
    error: str | None = Field(
        None,
        description="Why part of this task's audit could not run (a task the judge refuses, "
        "an exception in a probe): `--fail-on` fails on it, and a rerun audits the task again.",
    )

    def worst(self) -> Severity:
        return max((r.severity for r in self.results), key=lambda s: s.rank,
                   default=Severity.NONE)  # fmt: skip

    def result(self, probe: str) -> ProbeResult | None:
        return next((r for r in self.results if r.probe == probe), None)


class AuditSummary(BaseModel):
    """The suite's headline shares (of the tasks where the probe applied)."""

    model_config = ConfigDict(extra="forbid")

    tasks: int
    lines: list[str] = Field(default_factory=list, description="Headline sentences.")
    shares: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Probe -> {'flagged': n, 'applicable': m, 'not_applicable': k, 'errors': e}.",
    )
    severities: dict[str, int] = Field(default_factory=dict, description="Worst per task.")


class SuiteAudit(BaseModel):
    """An audit of a suite: the tasks' results, the summary and how it was made."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    probes: list[str]
    tasks: list[TaskAudit]
    summary: AuditSummary
    config: dict[str, Any] = Field(default_factory=dict)
    machine: str = ""
    wall_s: float = 0.0
    reused: int = Field(0, description="Tasks whose results came from an interrupted run.")
