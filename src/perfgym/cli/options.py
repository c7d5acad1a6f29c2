"""Options and checks shared by the commands: conflicting options, the task selection, the
per-run time limit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from perfgym.cli.output import fail

if TYPE_CHECKING:
    from pathlib import Path

    from perfgym.tasks.task import Task

#: `Split`'s values, written out so that `--help` imports no data model (a test keeps them equal).
SPLITS: tuple[str, ...] = ("train", "val", "test")
#: The longest per-run limit `--time-limit` takes (a day; more is a typo, not a benchmark).
MAX_TIME_LIMIT_S = 86400.0


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


def time_limit_option() -> Any:
    """`--time-limit SECONDS`: every task's per-run time limit (the same option on every command
    that judges). Read as text so that any bad value is one line (`time_limit_of`)."""
    import typer

    return typer.Option(
        None,
        "--time-limit",
        metavar="SECONDS",
        help="Per-run time limit, seconds of CPU, for every task; the wall limit is the "
        "judge's backstop (10x) times it (default: the task's own, e.g. PerfCodeBench's "
        "benchmark_timeout_sec, else 10).",
    )


def time_limit_of(text: str | None) -> float | None:
    """`--time-limit`'s value in seconds (None when not given); exit 2 with one line unless it
    is a finite number above 0 and at most `MAX_TIME_LIMIT_S`."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        fail(f"--time-limit must be a number of seconds, got {text!r}")
    if not math.isfinite(value) or not 0 < value <= MAX_TIME_LIMIT_S:
        fail(f"--time-limit must be above 0 and at most {MAX_TIME_LIMIT_S:g} s, got {text}")
    return value


def with_time_limit(tasks: list[Task], seconds: float | None) -> list[Task]:
    """`tasks` with `seconds` as every task's own limit (as given when None)."""
    from perfgym.evaluation.inputs import with_time_limit as limited

    return limited(tasks, seconds)


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
    """The tasks of `split` (all when None), then the first `limit` of them (all when None);
    exit 2 with one line for a bad split or limit."""
    from perfgym.evaluation.config import EvalFailed
    from perfgym.evaluation.inputs import select_tasks as selected

    try:
        return selected(tasks, split, limit, suite)
    except EvalFailed as exc:
        fail(str(exc))


def out_dir_option(default_help: str) -> Any:
    """`--out-dir`: the folder a command writes several files into (`-o` is a file elsewhere)."""
    import typer

    return typer.Option(None, "--out-dir", help=f"Output folder ({default_help}).")


def legacy_out_option() -> Any:
    """The old spelling of `--out-dir` (`-o`/`--out`), kept working with a warning."""
    import typer

    return typer.Option(None, "-o", "--out", hidden=True, help="Deprecated: use --out-dir.")


def resolve_out_dir(out_dir: Path | None, legacy: Path | None, command: str) -> Path | None:
    """`--out-dir`, or the deprecated `-o`/`--out` with a one-line warning (both: an error)."""
    from perfgym.cli.output import err_console

    if legacy is None:
        return out_dir
    if out_dir is not None:
        fail(f"{command}: give --out-dir only (-o/--out is its deprecated spelling)")
    err_console.print(
        f"[yellow]warning:[/] {command}: -o/--out is deprecated here, use --out-dir "
        "(-o names a file in every other command)",
        soft_wrap=True,
        highlight=False,
    )
    return legacy
