"""Validation against the published ordering: agree / disagree / undecided, and the statistics
with and without the tasks that held fewer cores than they want."""

from __future__ import annotations

import pytest

from perfgym.judge.agreement import Direction, agreement, agreement_line, direction
from perfgym.judge.validate import TaskValidation


@pytest.mark.parametrize(
    ("published", "faster", "want"),
    [(4.0, "a", Direction.AGREE), (4.0, "b", Direction.DISAGREE),
     (0.5, "b", Direction.AGREE), (0.5, "a", Direction.DISAGREE),
     (4.0, "neither", Direction.UNDECIDED), (4.0, None, Direction.UNDECIDED),
     (1.0, "a", None), (None, "a", None)],
)  # fmt: skip
def test_direction(published: float | None, faster: str | None, want: Direction | None) -> None:
    assert direction(published, faster) is want


def _row(task_id: str, d: Direction | None, cores: int | None, wanted: int) -> TaskValidation:
    return TaskValidation(task_id=task_id, language="cpp", family=task_id, split="test",
                          solutions=[], direction=d, cores=cores, cores_wanted=wanted)  # fmt: skip


def test_capped_tasks_are_counted_apart() -> None:
    """A 4-core task run on 2 cores that disagrees cannot hide in the total: the statistics
    without it are given beside, and it is named."""
    rows = [_row("a", Direction.AGREE, 1, 1), _row("b", Direction.DISAGREE, 2, 4),
            _row("c", Direction.UNDECIDED, 4, 4), _row("d", None, 1, 4)]  # fmt: skip
    s = agreement(rows)
    assert s["all"] == {"agree": 1, "disagree": 1, "undecided": 1}
    assert s["all_cores"] == {"agree": 1, "disagree": 0, "undecided": 1}
    assert s["fewer_cores"] == ["b"]  # d has no published ordering
    assert agreement_line(s) == (
        "published ordering: agree 1, disagree 1, undecided 1; without the 1 task(s) given "
        "fewer cores than they want: agree 1, disagree 0, undecided 1"
    )


def test_without_capped_tasks_one_figure() -> None:
    s = agreement([_row("a", Direction.AGREE, 1, 1)])
    assert s["fewer_cores"] == [] and agreement_line(s) == (
        "published ordering: agree 1, disagree 0, undecided 0"
    )
