"""Checks shared by the commands' options: conflicting options and the task selection."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from perfgym.cli.output import fail

if TYPE_CHECKING:
    from perfgym.tasks.task import Task

#: `Split`'s values, written out so that `--help` imports no data model (a test keeps them equal).
SPLITS: tuple[str, ...] = ("train", "val", "test")


def external_option() -> Any:
    """`--external`: PerfCodeBench's external/ library folder (the same option on every command
    that loads a suite)."""
    import typer

    return typer.Option(
        None,
        "--external",
        help="PerfCodeBench's external/ library folder "
        "(default: $PERFGYM_PCB_EXTERNAL, else <root>/external).",
    )


def refuse_conflicts(given: dict[str, bool], pairs: Sequence[tuple[str, str, str]]) -> None:
    """Exit 2 with one line for the first pair of options given together that cannot be:
    `pairs` holds (option, other option, why); `given` says which options were given."""
    for a, b, why in pairs:
        if given.get(a) and given.get(b):
            fail(f"{a} cannot be combined with {b}: {why}")


def refuse_orphans(given: dict[str, bool], needs: Sequence[tuple[str, str]]) -> None:
    """Exit 2 with one line for an option given without the option it only modifies:
    `needs` holds (option, what it needs, stated as the user would fix it)."""
    for option, need in needs:
        if given.get(option) and not given.get(need):
            fail(f"{option} has no effect without {need}")


def select_tasks(tasks: list[Task], split: str | None, limit: int | None, suite: str) -> list[Task]:
    """The tasks of `split` (all when None), then the first `limit` of them (all when None)."""
    if split is not None:
        if split not in SPLITS:
            fail(f"unknown --split {split!r}; one of {', '.join(SPLITS)}")
        tasks = [t for t in tasks if t.split.value == split]
        if not tasks:
            fail(f"no task of {suite} is in split {split!r}")
    if limit is not None:
        if limit < 1:
            fail(f"--limit must be at least 1, got {limit}")
        tasks = tasks[:limit]
    return tasks
