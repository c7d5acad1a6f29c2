"""What `perfgym eval` shows: its progress while judging, then the summary table or JSON."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from rich.markup import escape

from perfgym.cli.output import console, err_console, print_json
from perfgym.evaluation.run import EvalWatcher

if TYPE_CHECKING:
    from rich.table import Table

    from perfgym.evaluation.run import EvalResult
    from perfgym.judge.candidate_agreement import CandidateAgreement
    from perfgym.metrics.summary import ModelSummary


class Shown(NamedTuple):
    """How much the command prints: `--json`, `-v`, `-q`."""

    as_json: bool = False
    verbose: bool = False
    quiet: bool = False


class ConsoleWatch(EvalWatcher):
    """`run_eval` on the terminal: notes on stderr, a progress bar, SIGTERM as Ctrl-C."""

    def __init__(self, shown: Shown) -> None:
        self.shown = shown

    def note(self, line: str) -> None:
        err_console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True)

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        from perfgym.cli.interrupted import stop_on_sigterm

        restore = stop_on_sigterm()
        try:
            yield
        finally:
            restore()

    @contextlib.contextmanager
    def judging(self, label: str, total: int, done: int) -> Iterator[Callable[[int], None]]:
        from rich.progress import Progress

        with Progress(console=err_console, disable=self.shown.as_json or self.shown.quiet) as bar:
            job = bar.add_task(label, total=total, completed=done)
            yield lambda n: bar.update(job, completed=n)


def summary_table(rows: list[ModelSummary], title: str) -> Table:
    """The compact console summary (fits 100 columns for the usual one to three models): one
    column per model, one row per number: tasks, samples, pass@k and the significant-decision
    speed rates, each a fraction of tasks with its 95 % bootstrap CI. Stage counts, CRR and
    the strict-rule columns are in the JSON and the HTML report."""
    from perfgym.cli.tables import compact_table

    timed = any(r.timed for r in rows)
    passes = sorted({k for r in rows for k in r.metrics if k.startswith("pass@")},
                    key=lambda k: int(k.split("@")[1]))  # fmt: skip
    passes = passes[:1] + passes[-1:] if len(passes) > 1 else passes  # pass@1 and the largest k
    t = compact_table(title)
    t.add_column("")
    for r in rows:
        t.add_column(r.model, justify="right", overflow="fold")
    t.add_row("tasks", *(str(r.n) for r in rows))
    if any(r.samples != r.n for r in rows):
        t.add_row("samples", *(str(r.samples) for r in rows))
    for name in passes:
        t.add_row(name, *(r.cell(name) for r in rows))
    for name in ("fbr", "rbr", "cgre") if timed else ():
        t.add_row(name.upper(), *(r.cell(name) for r in rows))
    if not timed:
        t.add_row("speed", *("not timed" for _ in rows))
    for r in rows:
        if r.note and r.timed:
            t.caption = f"{r.model}: {r.note}"
    return t


def warn_no_report(problem: str | None) -> None:
    """The warning for a report that could not be written (the verdicts are)."""
    if problem is not None:
        err_console.print(f"[yellow]no report:[/] {escape(problem)}")


def print_result(
    result: EvalResult, shown: Shown, agreed: CandidateAgreement | None = None
) -> None:
    """`perfgym eval`'s output: the missing tasks' warning, then the JSON summary (`--json`)
    or the table, the failure reasons and where the results and the report are."""
    from perfgym.cli.summary import failure_reasons, print_failures, print_missing

    missing = result.missing_counts()
    print_missing(missing, result.n_tasks, result.allow_missing)
    warn_no_report(result.report_problem)
    counted = result.counted
    if shown.as_json:
        print_json({"suite": result.suite, "results": str(result.results),
                    "skipped_lines": result.skipped_lines, "missing": missing,
                    "allow_missing": result.allow_missing, "reused": result.reused,
                    "resumed_from": str(result.resumed_from or "") or None,
                    "report": str(result.report) if result.report else None,
                    "elapsed_s": time.monotonic() - result.started, **result.recorded,
                    "failures": failure_reasons(counted),
                    "published_agreement": None if agreed is None else agreed.model_dump(
                        mode="json"),
                    "models": [r.model_dump(mode="json") for r in result.summaries]})  # fmt: skip
        return
    if not shown.quiet:
        console.print(summary_table(result.summaries, f"perfgym eval {result.suite}"))
        print_failures(counted, verbose=shown.verbose)
    if agreed is not None:
        from perfgym.cli.candidates_agreement import print_agreement

        print_agreement(agreed)
    n = len(result.verdicts)
    unanswered = (f" + {len(result.missing)} missing (NX)"
                  if result.missing and not result.allow_missing else "")  # fmt: skip
    reused_note = f", reused {result.reused} of {n}" if result.reused else ""
    console.print(f"results: {result.results} ({n} verdicts{unanswered}{reused_note}, "
                  f"{time.monotonic() - result.started:.0f} s)")  # fmt: skip
    if result.report is not None:
        console.print(f"report: {result.report} (per-task stages, failure reasons and speedups)")
