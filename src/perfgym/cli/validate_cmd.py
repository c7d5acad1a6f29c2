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
    """The compact console table (fits 100 columns): per task its solutions' stages, the
    baseline and reference times, the speedup, the published speedup and ok / failed / skipped; why a task
    failed or was skipped is in `problem_lines`, printed under it; family, split and the rest are
    in `--json` and `--out`."""
    from perfgym.cli.tables import compact_table

    t = compact_table(title)
    t.add_column("task", overflow="fold", max_width=20)
    t.add_column("lang", overflow="fold", max_width=12)
    t.add_column("solutions", overflow="fold", max_width=16)
    for col in ("base s", "ref s", "speedup"):  # the p-value is in --json
        t.add_column(col, justify="right")
    t.add_column("published", overflow="fold", max_width=9)
    t.add_column("result")
    for r in rows:
        base = r.solutions[0].estimate_s if r.solutions else None
        ref = r.solutions[1].estimate_s if len(r.solutions) > 1 else None
        stages = [c.detail if c.detail == "TIMEOUT" else c.stage.value for c in r.solutions]
        sols = (
            "/".join(stages)
            if set(stages) <= {"OK"}
            else " ".join(  # a failure names its own
                f"{c.label}:{st}" for c, st in zip(r.solutions, stages, strict=True)
            )
        )
        result = (
            "[green]ok[/]" if r.ok else ("[yellow]skipped[/]" if r.skipped else "[red]failed[/]")
        )
        t.add_row(r.task_id, r.language + _cores(r), sols,
                  f"{base:.4f}" if base else "-", f"{ref:.4f}" if ref else "-",
                  f"{r.speedup:.2f}x" if r.speedup else "-",
                  _published(r), result)  # fmt: skip
    return t


def problem_lines(rows: list[TaskValidation]) -> list[str]:
    """One line per failed or skipped task: why (wrapped at the console's width)."""
    from rich.markup import escape

    return [f"  {escape(r.task_id)}: " + escape(r.skipped if r.skipped else "; ".join(r.problems))
            for r in rows if not r.ok]  # fmt: skip


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
        for line in problem_lines(rows):
            console.print(line, highlight=False)
        skipped = sum(1 for r in rows if r.skipped)
        console.print(f"{len(rows) - len(bad) - skipped} ok, {len(bad)} failed, {skipped} skipped")
        if agreed is not None:
            console.print(agreement_line(agreed), soft_wrap=True)
    return 1 if bad else 0
