"""Tasks a model left unanswered: NX verdicts (detail MISSING), so skipping a task never pays."""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Stage, Verdict
from perfgym.tasks.task import Task

MISSING = "MISSING"
MISSING_REASON = "missing: the candidates file has no candidate for this task"


def models_of(candidates: Sequence[Candidate]) -> list[str]:
    """The models in the order they first appear."""
    return list(dict.fromkeys(c.model for c in candidates))


def missing_verdicts(
    tasks: Sequence[Task], candidates: Sequence[Candidate], suite: str
) -> list[Verdict]:
    """One NX verdict for every (task, model) in the evaluated set with no candidate, as
    PerfCodeBench counts a missing answer as a failure; nothing is executed."""
    answered = {(c.task.id, c.model) for c in candidates}
    return [
        Verdict(task_id=t.id, suite=suite, model=model, sample=0, stage=Stage.NX,
                detail=MISSING, reason=MISSING_REASON, language=t.language.value)
        for model in models_of(candidates)
        for t in tasks
        if (t.id, model) not in answered
    ]  # fmt: skip


def missing_counts(missing: Sequence[Verdict]) -> dict[str, int]:
    """Model -> how many tasks it left unanswered."""
    out: dict[str, int] = {}
    for v in missing:
        out[v.model] = out.get(v.model, 0) + 1
    return out
