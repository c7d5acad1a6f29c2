"""`perfgym validate SUITE`: do every task's solutions build, pass, and differ in speed?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from perfgym.cli import app
from perfgym.cli.options import external_option, time_limit_of, time_limit_option, with_time_limit
from perfgym.cli.output import check_writable, console, err_console, print_json

if TYPE_CHECKING:  # the judge loads when the command runs: --help stays fast
    from rich.table import Table

    from perfgym.judge import Judge
    from perfgym.judge.validate import TaskValidation
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Task


def validation_table(rows: list[TaskValidation], title: str) -> Table:
    from rich.table import Table

    t = Table(title=title)
    for col in ("task", "lang", "family", "split", "solutions", "baseline s", "reference s",
                "speedup", "p", "published", "result"):  # fmt: skip
        t.add_column(col)
    for r in rows:
        base = r.solutions[0].estimate_s if r.solutions else None
        ref = r.solutions[1].estimate_s if len(r.solutions) > 1 else None
        sols = " ".join(f"{c.label}:{c.detail if c.detail == 'TIMEOUT' else c.stage.value}"
                        for c in r.solutions)  # fmt: skip
        p = r.comparison.p_value if r.comparison else None
        result = "[green]ok[/]" if r.ok else (f"[yellow]skipped: {r.skipped}[/]" if r.skipped
                                              else "[red]" + "; ".join(r.problems) + "[/]")  # fmt: skip
        t.add_row(r.task_id, r.language + _cores(r), r.family, r.split, sols,
                  f"{base:.4f}" if base else "-", f"{ref:.4f}" if ref else "-",
                  f"{r.speedup:.2f}x" if r.speedup else "-", f"{p:.3g}" if p is not None else "-",
                  _published(r), result)  # fmt: skip
    return t


def _published(row: TaskValidation) -> str:
    """'4.10x agree': the published Tb/Tr and this run against it ('-' when none)."""
    if row.published_speedup is None:
        return "-"
    call = f" {row.direction.value}" if row.direction is not None else ""
    return f"{row.published_speedup:.2f}x{call}"


def _cores(row: TaskValidation) -> str:
    """' (2 cores)' beside a multi-core task's language, ' (1 of 4 cores)' where capped."""
    if row.cores_wanted <= 1:
        return ""
    if row.cores is not None and row.cores < row.cores_wanted:
        return f" ({row.cores} of {row.cores_wanted} cores: fewer than it wants)"
    return f" ({row.cores_wanted} cores)"


def validate_one(judge: Judge, task: Task, min_speedup: float) -> TaskValidation:
    """One task's row; a task that cannot be judged is a row saying why, never the end."""
    from perfgym.judge.validate import TaskValidation, validate_task

    try:
        return validate_task(judge, task, min_speedup)
    except Exception as exc:  # noqa: BLE001 - one task's failure must not lose the others' rows
        return TaskValidation(task_id=task.id, language=task.language.value, family=task.family,
                              split=task.split.value, solutions=[],
                              problems=[f"could not be judged: {exc}"])  # fmt: skip


@app.command("validate")
def validate(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    repeats: int = typer.Option(5, "--repeats", help="Measured runs per workload."),
    min_speedup: float = typer.Option(1.0, "--min-speedup", help="Required baseline/reference."),
    time_limit: str | None = time_limit_option(),
    external: Path | None = external_option(),
    out: Path | None = typer.Option(
        None, "--out", help="Also write each task's row as JSONL, as soon as it is done."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check that every task's baseline, reference and pool build and pass their own tests, and
    that the reference is faster than the baseline with confidence."""
    from rich.progress import Progress

    from perfgym.cli.interrupted import exit_code, said, stop_on_sigterm
    from perfgym.cli.suite_arg import load_or_fail
    from perfgym.judge import Judge, JudgeConfig

    seconds = time_limit_of(time_limit)
    s, tasks = load_or_fail(suite, task, external)
    tasks = with_time_limit(tasks, seconds)
    if out is not None:
        check_writable(out, "validation results")
    config = JudgeConfig(repeats=repeats, **({"time_limit_s": seconds} if seconds else {}))
    rows: list[TaskValidation] = []
    restore = stop_on_sigterm()
    try:
        with Judge(config) as judge, Progress(console=console, transient=True,
                                              disable=as_json) as bar:  # fmt: skip
            job = bar.add_task(f"validating {s.name}", total=len(tasks))
            for t in tasks:
                rows.append(validate_one(judge, t, min_speedup))
                if out is not None:
                    with out.open("a", encoding="utf-8") as f:
                        f.write(
                            json.dumps(rows[-1].model_dump(mode="json") | {"ok": rows[-1].ok})
                            + "\n"
                        )
                bar.update(job, completed=len(rows))
    except KeyboardInterrupt as exc:
        kept = f"; each finished row is in {out}" if out is not None else ""
        err_console.print(f"{said(exc)} after {len(rows)} of {len(tasks)} tasks{kept}",
                          soft_wrap=True)  # fmt: skip
        _print(s, rows, as_json)
        raise typer.Exit(exit_code(exc)) from None
    finally:
        restore()
    raise typer.Exit(_print(s, rows, as_json))


def _print(suite: Suite, rows: list[TaskValidation], as_json: bool) -> int:
    """Print what was finished; the exit code (1 when a task failed)."""
    from perfgym.judge.agreement import agreement, agreement_line

    name = suite.name
    bad = [r for r in rows if not r.ok and not r.skipped]
    agreed = agreement(rows) if any(r.direction is not None for r in rows) else None
    if as_json:
        print_json({"suite": name, "tasks": [r.model_dump(mode="json") | {"ok": r.ok} for r in rows],
                    "failed": [r.task_id for r in bad], "agreement": agreed,
                    "not_loaded": suite.metadata.get("skipped", [])})  # fmt: skip
    else:
        console.print(validation_table(rows, f"perfgym validate {name}"))
        skipped = sum(1 for r in rows if r.skipped)
        console.print(f"{len(rows) - len(bad) - skipped} ok, {len(bad)} failed, {skipped} skipped")
        if agreed is not None:
            console.print(agreement_line(agreed), soft_wrap=True)
    return 1 if bad else 0
