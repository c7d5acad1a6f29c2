"""Agreement of a validation with the published ordering of a task's baseline and reference.

A task with published durations (PerfCodeBench's eval_result.json: `Solution.stored`) has a
published ratio Tb/Tr. The validation agrees when its comparison finds the same solution
significantly faster, disagrees when it finds the other one, and is undecided otherwise (not
significant, or a solution not timed). The statistics are given twice: over every task, and
over the tasks that held every core they want, since a multi-core task given fewer cores than
it wants on this machine (`TaskValidation.cores < cores_wanted`) is not the task as published.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfgym.judge.validate import TaskValidation
    from perfgym.tasks.task import Task


class Direction(str, Enum):
    """The validation against the published ordering."""

    AGREE = "agree"
    DISAGREE = "disagree"
    UNDECIDED = "undecided"


def published_speedup(task: Task) -> float | None:
    """Tb/Tr from the task's stored (published) medians; None when either is not usable."""
    from perfgym.tasks.task import StoredStatus

    ref = task.references[0] if task.references else None
    times = []
    for sol in (task.baseline, ref):
        s = sol.stored if sol is not None else None
        if s is None or s.status != StoredStatus.OK or s.all_ok is False or not s.median_s:
            return None
        times.append(s.median_s)
    return times[0] / times[1]


def direction(published: float | None, faster: str | None) -> Direction | None:
    """`faster`: the comparison's reference-vs-baseline call ('a' = reference), None if untimed.

    None when there is no published ordering (no ratio, or exactly 1).
    """
    if published is None or published == 1.0:
        return None
    if faster not in ("a", "b"):
        return Direction.UNDECIDED
    return Direction.AGREE if (faster == "a") == (published > 1.0) else Direction.DISAGREE


def capped(row: TaskValidation) -> bool:
    """The task's runs held fewer cores than it wants."""
    return row.cores is not None and row.cores < row.cores_wanted


def agreement(rows: Sequence[TaskValidation]) -> dict[str, Any]:
    """Counts over every task with a published ordering, and over those not core-capped."""

    def counts(rs: Sequence[TaskValidation]) -> dict[str, int]:
        c = Counter(r.direction.value for r in rs if r.direction is not None)
        return {d.value: c.get(d.value, 0) for d in Direction}

    short = [r.task_id for r in rows if r.direction is not None and capped(r)]
    return {
        "all": counts(rows),
        "all_cores": counts([r for r in rows if not capped(r)]),
        "fewer_cores": short,
    }


def agreement_line(summary: dict[str, Any]) -> str:
    """One line: 'published ordering: agree 3, disagree 0, undecided 1; with every core ...'."""

    def part(c: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in c.items())

    line = f"published ordering: {part(summary['all'])}"
    if summary["fewer_cores"]:
        n = len(summary["fewer_cores"])
        line += f"; without the {n} task(s) given fewer cores than they want: "
        line += part(summary["all_cores"])
    return line


#: A published ordering this clear (Tb/Tr at least this, or at most its inverse) is the one a
#: validation must reproduce: the issue's target is no disagreement and 90 % decided there.
CLEAR_RATIO = 1.5


def clear(row: TaskValidation, threshold: float = CLEAR_RATIO) -> bool:
    """The published ratio orders the two clearly, either way (Tb/Tr >= 1.5 or <= 1/1.5)."""
    r = row.published_speedup
    return r is not None and r > 0 and max(r, 1 / r) >= threshold


def call_of(row: TaskValidation) -> tuple[Direction, str]:
    """The row against the published ordering, and for an undecided row why: 'no published
    ratio', 'skipped: ...', 'baseline failed', 'reference failed', 'both failed', 'not timed',
    'within noise', 'cores capped' (within noise on fewer cores than the task wants)."""
    if row.direction in (Direction.AGREE, Direction.DISAGREE):
        return row.direction, ""
    if row.skipped:
        return Direction.UNDECIDED, "skipped: " + _short(row.skipped)
    if not row.solutions:
        return Direction.UNDECIDED, "could not be judged"
    if row.direction is None:
        return Direction.UNDECIDED, "no published ratio"
    stages = [c.stage.value for c in row.solutions[:2]]
    failed = [name for name, st in zip(("baseline", "reference"), stages, strict=False)
              if st != "OK"]  # fmt: skip
    if len(failed) == 2:
        return Direction.UNDECIDED, "both failed"
    if failed:
        return Direction.UNDECIDED, f"{failed[0]} failed"
    if row.comparison is None:
        return Direction.UNDECIDED, "not timed"
    return Direction.UNDECIDED, "cores capped" if capped(row) else "within noise"


def _short(why: str) -> str:
    """A skip reason as a category ('needs a GPU'), not its full text."""
    return "needs a GPU" if "GPU" in why else why.split(":")[0][:40]
