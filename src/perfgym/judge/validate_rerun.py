"""`RerunPolicy`: a validation row whose baseline-vs-reference comparison is undecided (within
noise) is validated again, from scratch, at twice the repeats (up to `max_repeats`), where that
is cheap: the row's own runs' core-seconds times the repeat factor stay under `budget_s`.

A rerun is a new session: its row replaces the first one whole (samples from two sessions are
never pooled, which would let the first session's drift decide the second's test), and records
that it is a rerun in `Rerun`: the repeats of the first session and of the one kept, what the
first one said, and what the reruns cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.verdict import Stage

if TYPE_CHECKING:
    from perfgym.judge.validate import TaskValidation
    from perfgym.tasks.task import Task


class RerunPolicy(BaseModel):
    """When an undecided row is validated again, and at how many repeats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_repeats: int = Field(20, ge=1, description="Most measured runs per workload of a rerun.")
    budget_s: float = Field(
        60.0,
        ge=0,
        description="Most a rerun may cost, estimated as the row's runs' core-seconds times "
        "(the rerun's repeats / the first session's); 0: no rerun.",
    )


class Rerun(BaseModel):
    """How a row came to be a rerun's: the first session's repeats and call, the reruns' repeats
    (each twice the one before) and their wall time, and whether the kept one decided."""

    model_config = ConfigDict(extra="forbid")

    first_repeats: int
    first: str = Field(description="What the first session said (its problems).")
    repeats: list[int] = Field(description="Each rerun's repeats; the last one's row is kept.")
    wall_s: float = Field(0.0, description="Wall time of the reruns (their batch's, on Ray).")
    decided: bool = Field(description="The kept rerun found one of the two significantly faster.")

    @property
    def line(self) -> str:
        """'decided on rerun at 10 repeats (5 undecided)', 'undecided after reruns at 10, 20'."""
        at = ", ".join(map(str, self.repeats))
        if self.decided:
            return (
                f"decided on rerun at {self.repeats[-1]} repeats ({self.first_repeats} undecided)"
            )
        return f"undecided after rerun(s) at {at} repeats ({self.wall_s:.0f} s)"


def undecided(row: TaskValidation) -> bool:
    """Both solutions passed and were timed, and neither was found significantly faster."""
    sols = row.solutions
    if row.skipped or len(sols) < 2 or row.comparison is None:
        return False
    if sols[0].stage is not Stage.OK or sols[1].stage is not Stage.OK:
        return False
    return row.comparison.faster not in ("a", "b")


def cost_s(row: TaskValidation) -> float:
    """The row's session's core-seconds (its runs': tests and measured rounds)."""
    return sum(c.run_s for c in row.solutions)


def next_repeats(row: TaskValidation, now: int, policy: RerunPolicy) -> int | None:
    """The repeats of the row's next rerun, or None: decided, at the most repeats already, or
    too dear (its first session's cost times the repeat factor over the budget)."""
    if not undecided(row):
        return None
    more = min(2 * now, policy.max_repeats)
    if more <= now:
        return None
    return more if cost_s(row) * more / max(now, 1) <= policy.budget_s else None


@contextmanager
def at_repeats(backend: Any, repeats: int) -> Iterator[None]:
    """`backend` (one with a `config`: the local `Judge`, `RayJudge`) judging at `repeats`."""
    saved = backend.config
    backend.config = saved.model_copy(update={"repeats": repeats})
    try:
        yield
    finally:
        backend.config = saved


def rerun_undecided(
    backend: Any,
    tasks: Sequence[Task],
    rows: list[TaskValidation],
    policy: RerunPolicy,
    judge_rows: Callable[[Sequence[Task]], list[TaskValidation]],
) -> list[TaskValidation]:
    """`rows` with each undecided one validated again (`judge_rows` on `backend` at doubled
    repeats, the tasks of one repeat count in one call) while it stays undecided and cheap."""
    config = getattr(backend, "config", None)
    if config is None or policy.budget_s <= 0:
        return rows  # a backend judging under its own configuration cannot be asked for more
    first = config.repeats
    rows = list(rows)
    now = {i: first for i in range(len(rows))}
    notes: dict[int, Rerun] = {}
    while True:
        want: dict[int, list[int]] = {}
        for i, row in enumerate(rows):
            more = next_repeats(row, now[i], policy)
            if more is not None:
                want.setdefault(more, []).append(i)
        if not want:
            break
        for repeats, idx in sorted(want.items()):
            start = time.monotonic()
            with at_repeats(backend, repeats):
                again = judge_rows([tasks[i] for i in idx])
            took = time.monotonic() - start
            for i, row in zip(idx, again, strict=True):
                note = notes.get(i) or Rerun(first_repeats=first, first="; ".join(
                    rows[i].problems), repeats=[], decided=False)  # fmt: skip
                note.repeats.append(repeats)
                note.wall_s += took
                note.decided = row.comparison is not None and row.comparison.faster in ("a", "b")
                notes[i], now[i] = note, repeats
                row.rerun, row.repeats = note, repeats
                rows[i] = row
    return rows
