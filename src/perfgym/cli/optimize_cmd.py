"""`perfgym optimize SUITE|TASK --model M`: improve programs on measured feedback (Afterburner's
IOF and its searches), every step kept in the store, curves in the report."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from perfgym.cli import app
from perfgym.cli import model_options as mo
from perfgym.cli.options import (
    SPLITS,
    legacy_out_option,
    out_dir_option,
    resolve_out_dir,
    select_tasks,
)
from perfgym.cli.output import check_writable, console, err_console, fail, one_line, print_json

if TYPE_CHECKING:
    from rich.table import Table

    from perfgym.optimize.curves import IterationRow

OBJECTIVES_SHOWN = ("time", "memory", "integral")
#: The registered strategies, written out for --help (a test keeps them equal to the registry's).
STRATEGIES_SHOWN = ("greedy", "best-of-n", "evolve")


def _tasks(
    spec: str, task: list[str], split: str | None, limit: int | None
) -> tuple[str, list[Any]]:
    """(suite name, tasks): a task directory (holding task.yaml) or a suite."""
    path = Path(spec)
    if path.is_dir() and (path / "task.yaml").is_file():
        from perfgym.errors import PerfgymError
        from perfgym.tasks.native import load_task_dir

        try:
            one = load_task_dir(path)
        except PerfgymError as exc:
            fail(one_line(exc))
        return path.parent.name or "tasks", [one]
    from perfgym.cli.suite_arg import load_or_fail

    s, tasks = load_or_fail(spec, task)
    return s.name, select_tasks(tasks, split, limit, s.name)


def rows_table(rows: list[IterationRow], title: str) -> Table:
    """The compact per-iteration table (fits 100 columns): rates as fractions of tasks, as the
    JSON and the report print them; Beyond-T/M/I only where computed (tasks with pools)."""
    from perfgym.cli.tables import compact_table

    beyond = [k for k in "TMI" if any(r.beyond.get(k) is not None for r in rows)]
    t = compact_table(title)
    for col in ("iter", "pass@1", "FBR", "RBR", *(f"Beyond-{k}" for k in beyond),
                "median ×", "props ok", "accepted"):  # fmt: skip
        t.add_column(col, justify="right")
    t.caption = "props ok: share of the round's proposals that were correct"

    def frac(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    for r in rows:
        t.add_row(str(r.iteration), frac(r.pass_at_1), frac(r.fbr), frac(r.rbr),
                  *(frac(r.beyond.get(k)) for k in beyond),
                  "–" if r.median_speedup is None else f"{r.median_speedup:.3f}",
                  frac(r.proposals_ok), str(r.accepted))  # fmt: skip
    return t


@app.command("optimize")
def optimize(
    target: str = typer.Argument(
        ..., help="Suite (a built-in name or a path) or a task directory."
    ),
    iterations: int = typer.Option(8, "--iterations", help="Rounds of proposals per task."),
    objective: str = typer.Option("time", "--objective", help=f"{' | '.join(OBJECTIVES_SHOWN)}."),
    strategy: str = typer.Option("greedy", "--strategy", help=f"{' | '.join(STRATEGIES_SHOWN)}."),
    n: int = typer.Option(4, "--n", help="best-of-n / evolve: proposals per round."),
    start: str = typer.Option("baseline", "--start", help="baseline | generate."),
    patience: int | None = typer.Option(
        None, "--patience", help="Stop a task after K rounds without a gain."
    ),
    confirm: int = typer.Option(
        3,
        "--confirm",
        help="Fresh draws of the hidden inputs an accepted proposal must also "
        "pass (0: the round's own draw only).",
    ),
    final_check: int = typer.Option(
        8,
        "--final-check",
        help="Fresh draws of the hidden inputs a task's final best must pass, else the best "
        "before it is checked (0: none).",
    ),
    budget_tokens: int | None = typer.Option(
        None, "--budget-tokens", help="Token budget of the run."
    ),
    budget_usd: float | None = typer.Option(None, "--budget-usd", help="Dollar budget of the run."),
    budget_wall: float | None = typer.Option(None, "--budget-wall", help="Wall-time budget (s)."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    split: str | None = typer.Option(
        None, "--split", help=f"Only this split ({', '.join(SPLITS)})."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N tasks."),
    repeats: int = typer.Option(
        5, "--repeats", help="Measured rounds per workload (>= 3: paired test)."
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of an accepted step."),
    hidden: bool = typer.Option(
        True,
        "--hidden/--no-hidden",
        help="Decide correctness and speed on hidden workloads drawn fresh from each task's "
        "generator with a secret seed of the run (the model is shown visible inputs only). "
        "--no-hidden: on the declared workloads, which a model may learn.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of evolve's draws."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run with these settings."),
    store: Path = typer.Option(
        Path("results/perfgym.sqlite"), "--store", help="History store (SQLite)."
    ),
    out_dir: Path | None = out_dir_option("default results/optimize/RUN"),
    legacy_out: Path | None = legacy_out_option(),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write the HTML report."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable summary on stdout."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar and no table."),
    model: str | None = mo.model_option(),
    model_config: Path | None = mo.model_config_option(),
    base_url: str | None = mo.base_url_option(),
    api_key_env: str | None = mo.api_key_env_option(),
    temperature: float | None = mo.temperature_option(),
    top_p: float | None = mo.top_p_option(),
    max_tokens: int | None = mo.max_tokens_option(),
    model_seed: int | None = mo.model_seed_option(),
    concurrency: int | None = mo.concurrency_option(),
    timeout: float | None = mo.timeout_option(),
    max_retries: int | None = mo.max_retries_option(),
    stream: bool | None = mo.stream_option(),
    no_json: bool = mo.no_json_option(),
    allow_empty: bool = mo.allow_empty_option(),
) -> None:
    """Revise programs with a model on measured feedback; keep a proposal only when it is
    significantly better than the best so far."""
    from pydantic import ValidationError

    from perfgym.optimize.config import OptimizeConfig

    flags = mo.ModelFlags(model, model_config, base_url, api_key_env, temperature, top_p,
                          max_tokens, model_seed, concurrency, timeout, max_retries, stream,
                          no_json, allow_empty)  # fmt: skip
    if not flags.given:
        fail("--model is required (a model name the server serves, or 'scripted')")
    out = resolve_out_dir(out_dir, legacy_out, "optimize")
    if objective not in OBJECTIVES_SHOWN:
        fail(f"unknown --objective {objective!r}; one of {', '.join(OBJECTIVES_SHOWN)}")
    from perfgym.registry import Kind, names

    if strategy not in names(Kind.STRATEGIES):
        fail(f"unknown --strategy {strategy!r}; one of {', '.join(names(Kind.STRATEGIES))}")
    if repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    try:
        config = OptimizeConfig(iterations=iterations, objective=objective, strategy=strategy,  # type: ignore[arg-type]
                                n=n, start=start, patience=patience, max_tokens=budget_tokens,  # type: ignore[arg-type]
                                max_usd=budget_usd, max_wall_s=budget_wall, alpha=alpha,
                                seed=seed, concurrency=concurrency or 8,
                                confirm=confirm, final_check=final_check)  # fmt: skip
    except ValidationError as exc:
        fail(one_line(exc))
    suite, tasks = _tasks(target, task, split, limit)
    check_writable(store, "history store")
    run_optimize(config, suite, tasks, flags, repeats=repeats, hidden=hidden, resume=resume,
                 store=store, out=out, report=not no_report, as_json=as_json, quiet=quiet)  # fmt: skip


def run_optimize(config: Any, suite: str, tasks: list[Any], flags: mo.ModelFlags, *,
                 repeats: int, resume: bool, store: Path, out: Path | None, report: bool,
                 as_json: bool, quiet: bool, hidden: bool = True) -> None:  # fmt: skip
    from rich.progress import Progress

    from perfgym.errors import PerfgymError
    from perfgym.optimize.session import judge_config, run_session
    from perfgym.store.optimize_history import OptimizeHistory

    total = len(tasks) * config.iterations
    history = None
    try:
        history = OptimizeHistory(store)
        memo = store.with_name(store.name + ".scripted.json")
        opened = mo.open_model(flags, tasks, call_log=store, scripted_state=memo)
        with opened as (client, _server), Progress(
            console=err_console, disable=quiet or not err_console.is_terminal, transient=True
        ) as bar:  # fmt: skip
            job = bar.add_task("optimize", total=total)

            def step(task_id: str, done: int, of: int) -> None:
                bar.advance(job)

            result = run_session(config, suite, tasks, client, judge=judge_config(repeats, hidden),
                                 history=history, out=out, resume=resume, report=report,
                                 progress=step)  # fmt: skip
    except KeyboardInterrupt:
        _interrupted(history, store)
    except PerfgymError as exc:
        kept = _kept(history)
        fail(one_line(exc) + kept)
    except sqlite3.Error as exc:
        fail(f"history store {store}: {exc}")
    if not quiet or as_json:
        title = (f"{suite}: {config.strategy}, objective {config.objective}, "
                 f"{len(tasks)} task(s), run {result.run}")  # fmt: skip
        show(result.rows, title, as_json, result.doc)
    if resume and not as_json:
        console.print(f"resumed run {result.run}: replayed {result.replayed_rounds} round(s) "
                      f"({result.replayed_steps} proposal(s)) from {store} without asking or "
                      f"judging again; {result.calls} new model call(s)", highlight=False)  # fmt: skip
    if not as_json:
        console.print(f"best candidates: {result.best_path}; curves: {result.summary_path}"
                      + (f"; report: {result.report_path}" if result.report_path else "")
                      + f"; history: {store} (run {result.run})")  # fmt: skip


def _kept(history: Any) -> str:
    if history is None:
        return ""
    try:
        runs = history._conn.execute("SELECT COUNT(*) FROM optimize_steps").fetchone()[0]
    except sqlite3.Error:
        return ""
    return f" (the history keeps its {runs} step(s); --resume continues)" if runs else ""


def _interrupted(history: Any, store: Path) -> None:
    from perfgym.cli.interrupted import INTERRUPTED

    err_console.print(f"[yellow]interrupted:[/] the history in {store} keeps every finished "
                      "step; run the same command with --resume to continue", soft_wrap=True)  # fmt: skip
    raise typer.Exit(INTERRUPTED)


def show(rows: list[IterationRow], title: str, as_json: bool, doc: dict[str, Any]) -> None:
    if as_json:
        print_json(doc)
    else:
        console.print(rows_table(rows, title))


__all__ = ["optimize"]
