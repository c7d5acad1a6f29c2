"""Making a mixed batch safe for one `Judge.judge_many` call, and restoring who asked.

The judge keys its per-task memo by task id and its measurements by candidate label
(`candidate-{model}-{sample}`). Items from different jobs may share both, so each task gets a
content-qualified id and each candidate a unique label for the call, and the verdict gets the
caller's names back afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Verdict
from perfgym.tasks.task import Task


@dataclass(frozen=True)
class Origin:
    task_id: str
    model: str
    sample: int
    suite: str = ""


def qualified(task: Task, digest: str) -> Task:
    """The task under an id unique to its content (restored by `restore`)."""
    return task.model_copy(update={"id": f"{task.id}@{digest[:16]}"})


def unique_candidates(task: Task, items: list[tuple[str | None, str | None]]) -> list[Candidate]:
    """Candidates of one (qualified) task, each with a label no other shares."""
    return [
        Candidate(task, completion=completion, source=source, model=f"item{n}", sample=0)
        for n, (completion, source) in enumerate(items)
    ]


def restore(verdict: Verdict, origin: Origin) -> Verdict:
    return verdict.model_copy(
        update={
            "task_id": origin.task_id,
            "model": origin.model,
            "sample": origin.sample,
            "suite": origin.suite or verdict.suite,
        }
    )
