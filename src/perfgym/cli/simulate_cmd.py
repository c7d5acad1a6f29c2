"""`perfgym simulate SUITE --reward NAME`: replay reward environments offline, print diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli.output import console, err_console, fail, print_json

if TYPE_CHECKING:  # scipy and the simulator load when the command runs: --help stays fast
    from rich.table import Table

    from perfgym.simulate import Ladder, Simulation, SimulatorConfig
    from perfgym.tasks.task import Task

#: The simulator's rankings, written out for --help (a test keeps them equal to `RANKINGS`).
RANKINGS_SHOWN = ("spearman", "spearman_smoothed", "diagonal", "steepness", "monotonicity")


def one_line(exc: Exception) -> str:
    """An error message on one line: pydantic's multi-line reports folded, its doc link dropped."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = "; ".join(ln for ln in lines if not ln.startswith("For further information"))
    return escape(text)  # the message is printed as rich markup: keep its [brackets]


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def diagnostics_table(sims: list[Simulation], title: str) -> Table:
    from rich.table import Table

    t = Table(title=title)
    for col in ("#", "reward", "spearman [95% CI]", "ρ smoothed", "AUC", "steepness",
                "variance", "|diag dev|", "diag bias", "monotone", "points"):  # fmt: skip
        t.add_column(col)
    for i, s in enumerate(sims, 1):
        d = s.diagnostics
        ci = f" [{d.spearman_ci[0]:.3f}, {d.spearman_ci[1]:.3f}]" if d.spearman_ci else ""
        t.add_row(str(i), s.title, _num(d.spearman) + ci, _num(d.spearman_smoothed),
                  _num(d.auc), _num(d.steepness, ".2f"), _num(d.variance, ".4f"),
                  _num(d.diagonal_deviation), _num(d.diagonal_bias, "+.3f"),
                  _num(d.monotonicity, "+.2f"), str(d.n_points))  # fmt: skip
    return t


def staircase_table(sims: list[Simulation]) -> Table:
    from rich.table import Table

    labels = [s.label for s in sims[0].staircase]
    t = Table(title="mean reward per rung (raw reward units)")
    t.add_column("reward")
    for label in labels:
        t.add_column(label)
    for s in sims:
        by = {st.label: st.mean_value for st in s.staircase}
        t.add_row(s.title, *(_num(by.get(label)) for label in labels))
    return t


def _config(failures: str, signal: str, bins: int, window: int) -> SimulatorConfig:
    from pydantic import ValidationError

    from perfgym.errors import ConfigError
    from perfgym.judge.verdict import Stage
    from perfgym.simulate import SimulatorConfig

    names = [f.strip().upper() for f in failures.split(",") if f.strip()]
    try:
        stages = [Stage(n) for n in names]
        return SimulatorConfig(failures=stages, signal=signal,  # type: ignore[arg-type]
                               bins=bins, smooth_window=window)  # fmt: skip
    except ValueError as exc:  # an unknown stage name, or a ValidationError
        first = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else (
            "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))  # fmt: skip
        raise ConfigError(f"invalid simulator settings: {first}") from None


@app.command("simulate")
def simulate_(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    reward: list[str] = typer.Option(..., "--reward", help="Reward name (repeatable)."),
    param: list[str] = typer.Option([], "--param", help="Reward parameter key=value."),
    sweep_spec: list[str] = typer.Option([], "--sweep", help="Grid key=v1,v2,... (repeatable)."),
    results: Path | None = typer.Option(
        None, "--results", help="Results of the suite's own solutions (default: measure now)."
    ),  # fmt: skip
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    signal: str = typer.Option("reward", "--signal", help="reward | pass."),
    failures: str = typer.Option("NX,NC,NR,WO", "--failures", help="Synthetic failing rungs."),
    bins: int = typer.Option(10, "--bins", help="Quality bins of the activation curve."),
    window: int = typer.Option(3, "--window", help="Bins in the smoothing moving average."),
    rank_by: str = typer.Option("spearman", "--rank-by", help=", ".join(RANKINGS_SHOWN)),
    repeats: int = typer.Option(3, "--repeats", help="Measured runs per workload (fresh runs)."),
    save_results: Path | None = typer.Option(
        None, "--save-results", help="Keep a fresh measurement as a results file."
    ),  # fmt: skip
    out: Path | None = typer.Option(None, "--out", help="Write the simulations as JSON."),
    plot: Path | None = typer.Option(None, "--plot", help="Plot the activation curves (PNG)."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """Replay reward environments on the suite's solutions ordered by quality (DMC-Optim §E)."""
    from rich.progress import Progress

    from perfgym.cli.suite_arg import load_or_fail
    from perfgym.errors import ConfigError, PerfgymError
    from perfgym.simulate import (
        RANKINGS,
        ladder_from_results,
        parse_params,
        parse_sweep,
        sweep,
        write_simulations,
    )

    s, tasks = load_or_fail(suite, task)
    quiet = as_json or not err_console.is_terminal
    try:
        config = _config(failures, signal, bins, window)
        params, grid_spec = parse_params(param), parse_sweep(sweep_spec)
        if rank_by not in RANKINGS:
            raise ConfigError(f"unknown --rank-by {rank_by!r}; one of {', '.join(RANKINGS)}")
        if results is not None:
            ladder = ladder_from_results(tasks, results, config, suite=s.name)
        else:
            ladder = _measure(s.name, tasks, config, repeats, save_results, quiet)
        with Progress(console=err_console, transient=True, disable=quiet) as bar:
            job = bar.add_task("simulating", total=None)
            sims = sweep(ladder, reward, params, grid_spec, rank_by=rank_by,
                         progress=lambda d, n: bar.update(job, completed=d, total=n))  # fmt: skip
        if out is not None:
            write_simulations(out, sims, rank_by=rank_by, suite=s.name)
        if plot is not None:
            from perfgym.simulate.plot import plot_simulations

            plot_simulations(sims, plot, title=f"perfgym simulate {s.name}")
    except PerfgymError as exc:
        fail(one_line(exc))
    if as_json:
        print_json({"suite": s.name, "source": ladder.source, "rank_by": rank_by,
                    "notes": ladder.notes,
                    "simulations": [sim.model_dump(mode="json", exclude={"points"})
                                    for sim in sims]})  # fmt: skip
        return
    console.print(diagnostics_table(sims, f"perfgym simulate {s.name} (ranked by {rank_by})"))
    console.print(staircase_table(sims))
    if ladder.notes:
        shown = escape("; ".join(ladder.notes[:5]))
        console.print(f"[yellow]{len(ladder.notes)} note(s)[/]: {shown}")
    console.print(
        f"{len(ladder.task_ids())} task(s), {len(ladder.rungs)} rungs, durations from "
        + escape(ladder.source)
        + (f"; simulations: {out}" if out else "")
        + (f"; plot: {plot}" if plot else "")
    )


def _measure(
    suite: str,
    tasks: list[Task],
    config: SimulatorConfig,
    repeats: int,
    save_results: Path | None,
    quiet: bool,
) -> Ladder:
    """Judge the suite's own solutions now (with a progress bar) and build the ladder."""
    from rich.progress import Progress

    from perfgym.judge import JudgeConfig
    from perfgym.simulate import build_ladder, measure_solutions
    from perfgym.store.results_file import write_results

    jc = JudgeConfig(repeats=repeats)
    with Progress(console=err_console, transient=True, disable=quiet) as bar:
        job = bar.add_task(f"measuring the solutions of {len(tasks)} tasks", total=None)
        verdicts = measure_solutions(tasks, suite=suite, judge_config=jc,
                                     progress=lambda d, n: bar.update(job, completed=d, total=n))  # fmt: skip
    if save_results is not None:
        write_results(save_results, verdicts, suite=suite, judge=jc.model_dump(mode="json"))
    return build_ladder(tasks, verdicts, config, suite=suite, source="measured")
