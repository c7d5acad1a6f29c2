"""`Entry`: one candidate on its way through the judge's stages, and what each stage found."""

from __future__ import annotations

from dataclasses import dataclass, field

from perfgym.judge.candidate import Candidate
from perfgym.judge.runner import Failure
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Stage, TestResult, Timing
from perfgym.sandbox.limits import Limits


@dataclass
class Entry:
    """A candidate and what the stages made of it: its variant (the extracted source, then the
    build), the results of the runs that checked it, the stage it reached (OK: every stage so
    far passed) and its timing once measured."""

    candidate: Candidate
    variant: Variant
    stage: Stage = Stage.OK
    detail: str = ""
    reason: str = ""
    tests: list[TestResult] = field(default_factory=list)
    timing: Timing | None = None
    #: the limits its correctness tests ran under, by test id (the others: the task's)
    limits: dict[str, Limits] = field(default_factory=dict)
    #: the role ('baseline', 'reference') whose measured runs are its own, where it is that
    #: role's program (`perfgym.judge.twins`); '' when it is measured itself
    timed_as: str = ""
    #: a harness task's answer check outside the program (`HarnessAnswer.describe`)
    harness_answer: str = ""

    @classmethod
    def of(cls, candidate: Candidate, variant: Variant) -> Entry:
        """The candidate's entry, its source extracted (`variant`: stopped at NX without one)."""
        entry = cls(candidate, variant)
        entry.took(variant)
        return entry

    @property
    def label(self) -> str:
        return self.variant.label

    @property
    def going(self) -> bool:
        """Whether every stage so far passed (the next one takes it)."""
        return self.stage is Stage.OK

    def took(self, variant: Variant) -> None:
        """Take `variant` (extracted or built) and the stage it stopped at, if it did."""
        self.variant = variant
        if variant.stage is not None:
            self.stage, self.detail, self.reason = variant.stage, variant.detail, variant.reason

    def failed(self, failure: Failure) -> None:
        """Stop at `failure`'s stage, with its detail and reason."""
        self.stage, self.detail, self.reason = failure
