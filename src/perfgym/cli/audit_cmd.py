"""`perfgym audit SUITE`: probe every task for answers it would wrongly reward and timings it
cannot resolve (`perfgym.audit`), with a per-task table, a suite summary and a CI gate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli.options import (
    external_option,
    select_tasks,
    time_limit_of,
    time_limit_option,
    with_time_limit,
)
from perfgym.cli.output import check_writable, console, err_console, fail, print_json

if TYPE_CHECKING:
    from rich.table import Table

    from perfgym.audit.results import Severity, SuiteAudit, TaskAudit

#: Measured rounds per workload in an audit: enough rounds to estimate the spread.
AUDIT_REPEATS = 5
SEVERITIES_SHOWN = ("info", "low", "medium", "high")
#: One character per outcome in the per-task table.
_MARK = {"scores": "SCORES", "does not score": "-", "sound": "ok", "weak": "WEAK",
         "not applicable": "n/a", "infra error": "ERR"}  # fmt: skip


@app.command("audit")
def audit(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N tasks."),
    sample: int | None = typer.Option(
        None, "--sample", help="A seeded sample of N tasks, stratified by language."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of --sample's draw."),
    language: list[str] = typer.Option(
        [], "--language", help="Only tasks in these languages (repeatable; '-cuda' excludes one)."
    ),
    probes: list[str] = typer.Option(
        [],
        "--probes",
        help="Probes to run (comma-separated or repeated; a kind, 'gameability' "
        "or 'measurability', names all of its probes). Default: every probe.",
    ),  # fmt: skip
    fail_on: str | None = typer.Option(
        None,
        "--fail-on",
        help=f"Exit 1 when a finding is at least this severe ({', '.join(SEVERITIES_SHOWN)}).",
    ),  # fmt: skip
    out: Path | None = typer.Option(
        None, "-o", "--output", help="Results JSONL (default results/audit-<suite>.jsonl)."
    ),
    as_json: bool = typer.Option(False, "--json", help="The whole audit as JSON on stdout."),
    repeats: int = typer.Option(
        AUDIT_REPEATS, "--repeats", help="Measured rounds per workload (3 or more for the spread)."
    ),
    mde_repeats: int = typer.Option(
        3,
        "--mde-repeats",
        help="The repeats the detectable change is computed for (eval's default).",
    ),
    hidden: bool = typer.Option(
        True,
        "--hidden/--visible",
        help="Judge the probes on hidden workloads, as training and optimisation decide "
        "(default), or on the declared ones, as `perfgym eval` does by default.",
    ),  # fmt: skip
    resume: bool = typer.Option(
        True, "--resume/--no-resume", help="Reuse the tasks an interrupted run of it finished."
    ),
    store: Path = typer.Option(
        Path("results/perfgym.sqlite"),
        "--store",
        help="Result store (SQLite) the audit is kept in.",
    ),
    no_store: bool = typer.Option(False, "--no-store", help="Do not keep the audit in the store."),
    list_only: bool = typer.Option(False, "--list-probes", help="List the probes and exit."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No per-task table."),
    external: Path | None = external_option(),
    time_limit: str | None = time_limit_option(),
) -> None:
    """Probe each task with programs that should earn nothing and with its own timings."""
    from perfgym.audit.registry import select_probes
    from perfgym.audit.results import Severity
    from perfgym.cli.audit_repos import is_repo_suite
    from perfgym.errors import ConfigError

    repo_suite = is_repo_suite(suite)
    try:
        chosen = [] if repo_suite else select_probes(probes)
    except ConfigError as exc:
        fail(str(exc))
    if list_only and repo_suite:
        from perfgym.audit.repo_audit import REPO_PROBES

        for rp in REPO_PROBES:
            console.print(f"{rp.name:20} {rp.kind.value:14} {escape(rp.doc)}", soft_wrap=True)
        return
    if list_only:
        for p in chosen:
            console.print(f"{p.name:20} {p.kind.value:14} {escape(p.doc)}", soft_wrap=True)
        return
    threshold = None
    if fail_on is not None:
        if fail_on not in SEVERITIES_SHOWN:
            fail(f"--fail-on takes one of {', '.join(SEVERITIES_SHOWN)}, got {fail_on!r}")
        threshold = Severity(fail_on)
    if repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    if mde_repeats < 2:
        fail(f"--mde-repeats must be at least 2, got {mde_repeats}")
    seconds = time_limit_of(time_limit)
    if repo_suite:
        from perfgym.cli.audit_repos import load_repo_tasks, run_repo_audit

        if sample is not None or language:
            fail("--sample and --language select program tasks; a repository suite takes --task")

        name, repo_tasks = load_repo_tasks(suite, task, limit)
        out = out or Path("results") / f"audit-{name}.jsonl"
        check_writable(out, "results file")
        result = run_repo_audit(name, repo_tasks, probes, out, repeats=repeats, resume=resume,
                                store=None if no_store else store, quiet=quiet or as_json)  # fmt: skip
        _show(result, out, as_json=as_json, quiet=quiet, threshold=threshold)
        return
    from perfgym.cli.suite_arg import load_or_fail

    s, tasks = load_or_fail(suite, task, external)
    tasks = _chosen_tasks(tasks, language, sample, seed)
    tasks = with_time_limit(select_tasks(tasks, None, limit, s.name), seconds)
    if not tasks:
        fail(f"no task selected in {s.name}")
    out = out or Path("results") / f"audit-{s.name}.jsonl"
    check_writable(out, "results file")
    if not no_store:
        check_writable(store, "result store")
    result = _run(s.name, tasks, chosen, out, repeats=repeats, mde_repeats=mde_repeats,
                  hidden=hidden, resume=resume, time_limit_s=seconds, quiet=quiet or as_json,
                  store=None if no_store else store)  # fmt: skip
    _show(result, out, as_json=as_json, quiet=quiet, threshold=threshold)


def _show(result: SuiteAudit, out: Path, *, as_json: bool, quiet: bool,
          threshold: Severity | None) -> None:  # fmt: skip
    """The table, the summary and where the results are (or the JSON); exit 1 at the gate."""
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        if not quiet:
            console.print(task_table(result))
        for line in result.summary.lines:
            console.print(escape(line))
        reused = f", {result.reused} reused" if result.reused else ""
        console.print(f"results: {out} ({len(result.tasks)} tasks{reused}, {result.wall_s:.0f} s)")
    if threshold is not None:
        from perfgym.audit.summary import gate

        found = gate(result.tasks, threshold)
        if found:
            err_console.print(f"[bold red]audit failed[/] (--fail-on {threshold.value}): "
                              f"{len(found)} finding(s), e.g. {escape(found[0])}")  # fmt: skip
            raise typer.Exit(1)


def _chosen_tasks(tasks: list, language: list[str], sample: int | None, seed: int) -> list:
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


def _run(suite: str, tasks: list, chosen: list, out: Path, *, repeats: int, mde_repeats: int,
         hidden: bool, resume: bool, time_limit_s: float | None, quiet: bool,
         store: Path | None = None) -> SuiteAudit:  # fmt: skip
    from rich.progress import Progress

    from perfgym.audit.results import SuiteAudit
    from perfgym.audit.resume import AuditFile
    from perfgym.audit.run import audit_tasks
    from perfgym.audit.summary import summarise
    from perfgym.cli.interrupted import stop_interrupted, stop_on_sigterm
    from perfgym.errors import PerfgymError
    from perfgym.judge import Judge, JudgeConfig
    from perfgym.machine import fingerprint

    limit = {"time_limit_s": time_limit_s} if time_limit_s is not None else {}
    config = JudgeConfig(repeats=repeats, hidden_workloads=hidden, **limit)
    names = [p.name for p in chosen]
    machine = fingerprint()
    header = {"suite": suite, "probes": names, "repeats": repeats, "mde_repeats": mde_repeats,
              "hidden": hidden, "machine": machine, "time_limit_s": time_limit_s}  # fmt: skip
    try:
        results = AuditFile(out, header, resume=resume)
        kept = stored_audit(store, header, resume, results)
    except PerfgymError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write results {out}: {exc.strerror or exc}")
    t0 = time.monotonic()
    reused = sum(t.id in results.done for t in tasks)
    audits: list[TaskAudit] = []
    restore = stop_on_sigterm()
    try:
        with Judge(config) as judge, Progress(console=err_console, disable=quiet) as bar:
            job = bar.add_task(f"auditing {len(tasks)} tasks of {suite}", total=len(tasks))
            todo = [t for t in tasks if t.id not in results.done]
            bar.update(job, advance=len(tasks) - len(todo))

            def done(a: TaskAudit) -> None:
                results.add(a)
                if kept is not None:
                    kept.put(a)
                results.done[a.task_id] = a
                bar.update(job, advance=1)

            audit_tasks(judge, todo, chosen, suite=suite, mde_repeats=mde_repeats, done=done)
            audits = [results.done[t.id] for t in tasks]
    except KeyboardInterrupt as exc:
        results.close()
        if kept is not None:
            kept.close()
        stop_interrupted("task audits", len(results.done), len(tasks), str(out), exc)
    except PerfgymError as exc:
        results.close()
        fail(str(exc))
    finally:
        restore()
    results.close()
    if kept is not None:
        kept.close()
    return SuiteAudit(suite=suite, probes=names, tasks=audits, summary=summarise(audits, names),
                      config={**header, "judge": config.model_dump(mode="json")},
                      machine=machine, wall_s=time.monotonic() - t0,
                      reused=reused)  # fmt: skip


class _Kept:
    """One audit run in the store: its finished tasks written as they arrive."""

    def __init__(self, path: Path, header: dict) -> None:
        from perfgym.audit.history import AuditHistory

        self.history = AuditHistory(path)
        self.run = self.history.start(header)

    def put(self, audit: TaskAudit) -> None:
        self.history.put(self.run, audit)

    def close(self) -> None:
        self.history.close()


def stored_audit(store: Path | None, header: dict, resume: bool, results: object) -> _Kept | None:
    """The store's record of this audit (None without a store): with `resume`, its finished
    tasks join the results file's; without, they are forgotten."""
    if store is None:
        return None
    kept = _Kept(store, header)
    if not resume:
        kept.history.forget(kept.run)
        return kept
    for task_id, audit in kept.history.done(kept.run).items():
        if task_id not in results.done:  # type: ignore[attr-defined]
            results.done[task_id] = audit  # type: ignore[attr-defined]
            results.add(audit)  # type: ignore[attr-defined]
    return kept


def task_table(result: SuiteAudit) -> Table:
    """One row per task, one column per probe: its outcome, and the task's worst severity."""
    from rich.table import Table

    table = Table(title=f"perfgym audit {result.suite}")
    table.add_column("task")
    for name in result.probes:
        table.add_column(name)
    table.add_column("worst")
    for a in result.tasks:
        cells = []
        for name in result.probes:
            r = a.result(name)
            cell = "" if r is None else _MARK[r.outcome.value]
            if r is not None and r.value is not None and r.kind.value == "measurability":
                cell += f" {r.value:.3g}"
            cells.append(cell)
        table.add_row(a.task_id, *cells, a.worst().value)
    return table
