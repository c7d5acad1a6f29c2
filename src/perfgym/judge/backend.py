"""`JudgeBackend`: the judging interface the local judge, its HTTP client and Ray all offer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.verdict import Verdict


@runtime_checkable
class JudgeBackend(Protocol):
    """What the local `Judge`, `ServiceClient`, `RayJudge` and `RecordingJudge` all offer."""

    def judge_many(
        self, candidates: Sequence[Candidate], progress: Progress | None = None
    ) -> list[Verdict]:
        """One verdict per candidate, in order."""
        ...

    def close(self) -> None:
        """Release workers, connections and clusters this backend started."""
        ...
