"""Choosing the tasks a command runs: by language (`--language`, '-cuda' leaves one out) and a
seeded sample stratified by language (`--sample N --seed S`, `perfgym.audit.sample`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from perfgym.cli.output import fail

if TYPE_CHECKING:
    from perfgym.tasks.task import Task


def sample_option() -> Any:
    return typer.Option(
        None, "--sample", help="A seeded sample of N tasks, stratified by language."
    )


def language_option() -> Any:
    return typer.Option(
        [], "--language", help="Only tasks in these languages (repeatable; '-cuda' excludes one)."
    )


def chosen_tasks(tasks: list[Task], language: list[str], sample: int | None,
                 seed: int) -> list[Task]:  # fmt: skip
    """The tasks in (or not in, '-L') the `language`s, then a seeded stratified sample; bad
    input is one line and exit 2."""
    from perfgym.audit.sample import choose_tasks
    from perfgym.errors import ConfigError

    try:
        return choose_tasks(tasks, language, sample, seed)
    except ConfigError as exc:
        fail(str(exc))
