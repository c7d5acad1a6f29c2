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
    """The tasks in (or not in, '-L') the `language`s, then a seeded stratified sample."""
    from perfgym.audit.sample import stratified_sample

    langs = [x.strip() for arg in language for x in arg.split(",") if x.strip()]
    known = {t.language.value for t in tasks}
    for lang in langs:
        if lang.lstrip("-") not in known:
            fail(f"--language {lang}: no task in it (languages here: {', '.join(sorted(known))})")
    keep = {x for x in langs if not x.startswith("-")}
    drop = {x[1:] for x in langs if x.startswith("-")}
    tasks = [t for t in tasks if (not keep or t.language.value in keep)
             and t.language.value not in drop]  # fmt: skip
    if sample is not None:
        if sample < 1:
            fail(f"--sample must be at least 1, got {sample}")
        tasks = stratified_sample(tasks, sample, seed)
    return tasks
