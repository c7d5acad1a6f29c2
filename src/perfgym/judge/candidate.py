"""`Candidate`: one thing for the judge to judge, and the callbacks a batch of them reports through.

Light on purpose (no sandbox, no engine): backends, clients and stores import it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perfgym.judge.verdict import Verdict
from perfgym.tasks.task import Task

#: Called with (verdicts done, verdicts due) as a batch is judged.
Progress = Callable[[int, int], None]
#: Handed each task's verdicts as soon as they are ready: (indices into the batch, verdicts).
Finished = Callable[[Sequence[int], Sequence[Verdict]], None]


@dataclass
class Candidate:
    """One thing to judge: raw model text (`completion`) or a ready `source`. `suite`: the name
    of the suite its task came from, stamped on its verdict ('' when unknown)."""

    task: Task
    completion: str | None = None
    source: str | None = None
    model: str = ""
    sample: int = 0
    suite: str = ""
