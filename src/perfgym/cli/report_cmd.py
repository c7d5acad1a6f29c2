"""`perfgym report RESULTS... -o report.html`: one self-contained HTML report."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import Progress

from perfgym.cli import app
from perfgym.cli.output import check_writable, console, err_console, fail
from perfgym.cli.output import one_line as plain_line
from perfgym.errors import PerfgymError


def one_line(exc: Exception) -> str:
    """An error message on one line: pydantic's multi-line reports folded, its doc link dropped."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = "; ".join(ln for ln in lines if not ln.startswith("For further information"))
    return escape(text)  # the message is printed as rich markup: keep its [brackets]


@app.command("report")
def report(
    inputs: list[Path] = typer.Argument(
        ...,
        help="Results files (perfgym eval), simulation files (perfgym simulate --out), "
        "training logs (TRL's trainer_state.json, perfgym reward records) and audit results "
        "(perfgym audit).",
    ),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option("perfgym report", "--title", help="Page title."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
) -> None:
    """Write one self-contained HTML report of results and simulations.

    Leaderboard (CIs), tasks, reward staircase, speedups, failures, transitions, simulations."""
    try:
        from perfgym.report import write_report
        from perfgym.report.audit_section import is_audit_file
        from perfgym.report.optimize_section import is_optimize_file
        from perfgym.simulate.result import is_simulation_file
    except ImportError as exc:  # the `report` extra (matplotlib, jinja2) is not installed
        fail(f"perfgym report needs the 'report' extra: pip install 'perfgym[report]' ({exc.name})")
    missing = [str(p) for p in inputs if not p.is_file()]
    if missing:
        fail(f"no such file: {', '.join(missing)}")
    check_writable(out, "report")
    sims = []
    for p in inputs:
        try:
            if is_simulation_file(p):
                sims.append(p)
        except UnicodeDecodeError as exc:
            fail(f"{p}: not UTF-8 text (byte {exc.start}); results files are JSON lines in UTF-8")
        except OSError as exc:
            fail(f"cannot read {p}: {plain_line(exc)}")
    from perfgym.train.diagnostics import diagnose, is_training_log

    audits = [p for p in inputs if p not in sims and is_audit_file(p)]
    optimized = [p for p in inputs if p not in sims + audits and is_optimize_file(p)]
    taken = sims + audits + optimized
    logs = [p for p in inputs if p not in taken and is_training_log(p)]
    results = [p for p in inputs if p not in taken and p not in logs]
    try:
        training = [diagnose(p) for p in logs]
        with Progress(console=err_console, disable=quiet or not err_console.is_terminal,
                      transient=True) as bar:  # fmt: skip
            job = bar.add_task("report", total=None)

            def step(what: str, done: int, total: int) -> None:
                bar.update(job, description=what, completed=done, total=total)

            path = write_report(results, out, sims, title=title, progress=step,
                                training=training, optimize=optimized, audits=audits)  # fmt: skip
    except PerfgymError as exc:
        fail(one_line(exc))
    except OSError as exc:
        fail(f"cannot write report {out}: {exc.strerror or exc}")
    console.print(f"report: {path} ({len(results)} results file(s), {len(sims)} simulation(s), "
                  f"{len(logs)} training log(s), {len(audits)} audit(s))")  # fmt: skip
