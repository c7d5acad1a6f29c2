"""`perfgym validate SUITE`: do every task's solutions build, pass, and differ in speed?"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from perfgym.cli import app
from perfgym.cli.output import console, print_json

if TYPE_CHECKING:  # the judge loads when the command runs: --help stays fast
    from rich.table import Table

    from perfgym.judge.validate import TaskValidation


def validation_table(rows: list[TaskValidation], title: str) -> Table:
    from rich.table import Table

    t = Table(title=title)
    for col in ("task", "lang", "family", "split", "solutions", "baseline s", "reference s",
                "speedup", "p", "result"):  # fmt: skip
        t.add_column(col)
    for r in rows:
        base = r.solutions[0].estimate_s if r.solutions else None
        ref = r.solutions[1].estimate_s if len(r.solutions) > 1 else None
        sols = " ".join(f"{c.label}:{c.stage.value}" for c in r.solutions)
        p = r.comparison.p_value if r.comparison else None
        result = "[green]ok[/]" if r.ok else (f"[yellow]skipped: {r.skipped}[/]" if r.skipped
                                              else "[red]" + "; ".join(r.problems) + "[/]")  # fmt: skip
        t.add_row(r.task_id, r.language, r.family, r.split, sols,
                  f"{base:.4f}" if base else "-", f"{ref:.4f}" if ref else "-",
                  f"{r.speedup:.2f}x" if r.speedup else "-", f"{p:.3g}" if p is not None else "-",
                  result)  # fmt: skip
    return t


@app.command("validate")
def validate(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    repeats: int = typer.Option(5, "--repeats", help="Measured runs per workload."),
    min_speedup: float = typer.Option(1.0, "--min-speedup", help="Required baseline/reference."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check that a suite's solutions pass and that its references are faster.

    Baseline, reference and pool build and pass; the reference beats the baseline, with confidence."""
    from rich.progress import Progress

    from perfgym.cli.suite_arg import load_or_fail
    from perfgym.judge import Judge, JudgeConfig
    from perfgym.judge.validate import validate_suite

    s, tasks = load_or_fail(suite, task)
    config = JudgeConfig(repeats=repeats)
    with Judge(config) as judge, Progress(console=console, transient=True, disable=as_json) as bar:
        job = bar.add_task(f"validating {s.name}", total=len(tasks))
        rows = validate_suite(judge, tasks, min_speedup,
                              progress=lambda done, total: bar.update(job, completed=done))  # fmt: skip
    bad = [r for r in rows if not r.ok and not r.skipped]
    if as_json:
        print_json({"suite": s.name, "tasks": [r.model_dump(mode="json") | {"ok": r.ok} for r in rows],
                    "failed": [r.task_id for r in bad]})  # fmt: skip
    else:
        console.print(validation_table(rows, f"perfgym validate {s.name}"))
        skipped = sum(1 for r in rows if r.skipped)
        console.print(f"{len(rows) - len(bad) - skipped} ok, {len(bad)} failed, {skipped} skipped")
    raise typer.Exit(1 if bad else 0)
