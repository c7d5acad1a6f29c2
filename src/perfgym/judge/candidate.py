"""`Candidate`: one thing for the judge to judge."""

from __future__ import annotations

from dataclasses import dataclass

from perfgym.tasks.task import Task


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
