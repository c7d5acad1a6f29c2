"""`perfgym validate SUITE`: do every task's solutions build, pass, and differ in speed?"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli.options import external_option, time_limit_of, time_limit_option, with_time_limit
from perfgym.cli.output import check_writable, console, err_console, fail, print_json
from perfgym.cli.selection import chosen_tasks, language_option, sample_option

if TYPE_CHECKING:  # the judge loads when the command runs: --help stays fast
    from rich.table import Table

    from perfgym.cli.validate_run import ValidateRun
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


def rerun_lines(rows: list[TaskValidation]) -> list[str]:
    """One line per task validated again because its first session was undecided."""
    return [f"  {escape(r.task_id)}: {r.rerun.line}" for r in rows if r.rerun is not None]


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


#: Where `perfgym validate` judges (`perfgym.judge.backend.get_backend`): the service judges under
#: its own configuration, which measures baselines beside every candidate, so it is not offered.
VALIDATE_BACKENDS = ("local", "ray")


#: Reruns of undecided tasks by default go up to this many repeats.
DEFAULT_MAX_REPEATS = 20
#: The fewest repeats whose rank test can reach p < 0.05 (JudgeConfig.repeats): a validation
#: with fewer is a quick one, never rerun by default (it could not decide at any difference).
MIN_DECIDING_REPEATS = 5


@app.command("validate")
def validate(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    language: list[str] = language_option(),
    sample: int | None = sample_option(),
    seed: int = typer.Option(0, "--seed", help="Seed of --sample's draw."),
    repeats: int = typer.Option(5, "--repeats", help="Measured runs per workload."),
    max_repeats: int | None = typer.Option(
        None,
        "--max-repeats",
        help="An undecided task is validated again at twice the repeats, up to this many (see "
        f"--rerun-budget-s). Default: {DEFAULT_MAX_REPEATS} when --repeats is at least "
        f"{MIN_DECIDING_REPEATS}; below that, no rerun unless this is given.",
    ),
    rerun_budget_s: float = typer.Option(
        60.0,
        "--rerun-budget-s",
        help="Rerun an undecided task only while its runs' "
        "core-seconds times the repeat factor stay under this; 0: never rerun.",
    ),
    min_speedup: float = typer.Option(1.0, "--min-speedup", help="Required baseline/reference."),
    time_limit: str | None = time_limit_option(),
    external: Path | None = external_option(),
    out: Path | None = typer.Option(
        None, "--out", help="Also write each task's row as JSONL, as soon as it is done."
    ),
    resume: bool | None = typer.Option(
        None,
        "--resume/--no-resume",
        help="--out exists: reuse its finished rows (same judge configuration), or start over.",
    ),  # fmt: skip
    backend: str = typer.Option(
        "local", "--backend", help=f"Judge on: {', '.join(VALIDATE_BACKENDS)}."
    ),
    address: str | None = typer.Option(
        None, "--address", help="Ray address (--backend ray; default: a cluster of its own)."
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No per-task table."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check that every task's baseline, reference and pool build and pass their own tests, and
    that the reference is faster than the baseline with confidence; summarise per language,
    against the published orderings, and the run's wall time against its floor."""
    from perfgym.cli.suite_arg import load_or_fail
    from perfgym.cli.validate_run import ValidateRun

    if backend not in VALIDATE_BACKENDS:
        fail(f"--backend {backend}: validate judges on {' or '.join(VALIDATE_BACKENDS)}")
    if address is not None and backend != "ray":
        fail("--address needs --backend ray")
    if resume is not None and out is None:
        fail("--resume/--no-resume need --out FILE.jsonl (the rows to reuse)")
    if repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    if rerun_budget_s < 0:
        fail(f"--rerun-budget-s must be at least 0, got {rerun_budget_s:g}")
    from perfgym.judge.validate_rerun import RerunPolicy

    if max_repeats is None and repeats < MIN_DECIDING_REPEATS:
        # a quick run that cannot decide by construction: rerunning it is the user's choice
        rerun = RerunPolicy(max_repeats=repeats, budget_s=0.0)
    else:
        limit = DEFAULT_MAX_REPEATS if max_repeats is None else max_repeats
        rerun = RerunPolicy(max_repeats=max(limit, repeats), budget_s=rerun_budget_s)
    seconds = time_limit_of(time_limit)
    s, tasks = load_or_fail(suite, task, external)
    tasks, drawn = _select(tasks, language, sample, seed)
    if not tasks:
        fail(f"no task selected in {s.name}")
    tasks = with_time_limit(tasks, seconds)
    if out is not None:
        if resume is None and out.exists() and out.stat().st_size:
            fail(f"{out} exists: --resume reuses its finished rows, --no-resume starts it over")
        check_writable(out, "validation results")
    run = ValidateRun(s, tasks, repeats=repeats, min_speedup=min_speedup, time_limit_s=seconds,
                      rerun=rerun, out=out, resume=bool(resume), backend=backend, address=address,
                      drawn=drawn, quiet=quiet or as_json)  # fmt: skip
    rows = run.run(lambda rows, exc: _print(s, rows, run, as_json, quiet, exc))
    raise typer.Exit(_print(s, rows, run, as_json, quiet))


def _select(tasks: list[Task], language: list[str], sample: int | None,
            seed: int) -> tuple[list[Task], dict[str, Any] | None]:  # fmt: skip
    """The selected tasks, and with --sample what was drawn from what. The draw's population
    is the tasks this machine can run: without a GPU, CUDA tasks (which only say they were
    skipped) are left out of it, and said so, unless --language names CUDA."""
    from perfgym.toolchains.gpu import gpu_missing_reason

    if sample is None:
        return chosen_tasks(tasks, language, None, seed), None
    pool = chosen_tasks(tasks, language, None, seed)
    left_out = 0
    named = {x.strip().lstrip("-") for arg in language for x in arg.split(",")}
    if "cuda" not in named and (why := gpu_missing_reason()) is not None:
        kept = [t for t in pool if t.language.value != "cuda"]
        left_out, pool = len(pool) - len(kept), kept
        if left_out:
            err_console.print(f"left out of the draw: {left_out} CUDA task(s) ({escape(why)})",
                              soft_wrap=True, highlight=False)  # fmt: skip
    chosen = chosen_tasks(pool, [], sample, seed)
    per = Counter(t.language.value for t in chosen)
    drawn = {"n": sample, "seed": seed, "population": len(pool), "cuda_left_out": left_out,
             "per_language": dict(sorted(per.items())), "task_ids": [t.id for t in chosen]}  # fmt: skip
    return chosen, drawn


def _print(
    suite: Suite,
    rows: list[TaskValidation],
    run: ValidateRun,
    as_json: bool,
    quiet: bool,
    interrupted: BaseException | None = None,
) -> int:
    """Print what was finished; the exit code (1 when a task failed)."""
    from perfgym.cli.validate_summary import print_summary
    from perfgym.judge.agreement import agreement, agreement_line

    name = suite.name
    bad = [r for r in rows if not r.ok and not r.skipped]
    agreed = agreement(rows) if any(r.direction is not None for r in rows) else None
    summary = run.summary(rows)
    if as_json:
        print_json({"suite": name, "tasks": [r.model_dump(mode="json") | {"ok": r.ok} for r in rows],
                    "failed": [r.task_id for r in bad], "agreement": agreed,
                    "summary": summary.model_dump(mode="json"), "sample": run.drawn,
                    "backend": run.backend, "load": run.load(), "results": str(run.out or "")
                    or None, "reused": run.reused, "interrupted": interrupted is not None,
                    "not_loaded": suite.metadata.get("skipped", [])})  # fmt: skip
        return 1 if bad else 0
    if not quiet:
        console.print(validation_table(rows, f"perfgym validate {name}"))
        for line in problem_lines(rows):
            console.print(line, highlight=False)
        for line in rerun_lines(rows):
            console.print(line, highlight=False)
    skipped = sum(1 for r in rows if r.skipped)
    console.print(f"{len(rows) - len(bad) - skipped} ok, {len(bad)} failed, {skipped} skipped")
    if agreed is not None:
        console.print(agreement_line(agreed), soft_wrap=True)
    print_summary(summary, run)
    return 1 if bad else 0
