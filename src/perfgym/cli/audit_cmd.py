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
from perfgym.cli.selection import chosen_tasks, language_option, sample_option

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
    sample: int | None = sample_option(),
    seed: int = typer.Option(0, "--seed", help="Seed of --sample's draw."),
    language: list[str] = language_option(),
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
    tasks = chosen_tasks(tasks, language, sample, seed)
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


def _run(suite: str, tasks: list, chosen: list, out: Path, *, repeats: int, mde_repeats: int,
         hidden: bool, resume: bool, time_limit_s: float | None, quiet: bool,
         store: Path | None = None) -> SuiteAudit:  # fmt: skip
    from rich.progress import Progress

    from perfgym import __version__
    from perfgym.audit.content import config_digest, content_key
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
              "hidden": hidden, "machine": machine, "time_limit_s": time_limit_s,
              "perfgym": __version__, "judge": config_digest(config)}  # fmt: skip
    keys = {t.id: content_key(t) for t in tasks}
    try:
        results = AuditFile(out, header, resume=resume, keys=keys)
        kept = stored_audit(store, header, resume, results, keys)
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


class _Stored:
    """One audit run in the store: its finished tasks written as they arrive."""

    def __init__(self, path: Path, header: dict) -> None:
        from perfgym.audit.history import AuditHistory

        self.history = AuditHistory(path)
        self.run = self.history.start(header)

    def put(self, audit: TaskAudit) -> None:
        self.history.put(self.run, audit)

    def close(self) -> None:
        self.history.close()


def stored_audit(store: Path | None, header: dict, resume: bool, results: object,
                 keys: dict[str, str] | None = None) -> _Stored | None:  # fmt: skip
    """The store's record of this audit (None without a store): with `resume`, its finished
    tasks on the same task content (`keys`, `perfgym.audit.resume.reusable`) join the results
    file's; without, they are forgotten."""
    from perfgym.audit.resume import reusable

    if store is None:
        return None
    kept = _Stored(store, header)
    if not resume:
        kept.history.forget(kept.run)
        return kept
    for task_id, audit in kept.history.done(kept.run).items():
        if task_id not in results.done and reusable(audit, keys):  # type: ignore[attr-defined]
            results.done[task_id] = audit  # type: ignore[attr-defined]
            results.add(audit)  # type: ignore[attr-defined]
    return kept


def task_table(result: SuiteAudit) -> Table:
    """The compact console table (fits 100 columns): one row per task, its worst severity and
    the probes that found something, by outcome; every probe's cell is in the results JSONL and
    `--json`."""
    from perfgym.cli.tables import compact_table

    table = compact_table(f"perfgym audit {result.suite} ({len(result.probes)} probes)")
    table.add_column("task", overflow="fold", max_width=24)
    table.add_column("worst")
    table.add_column("findings (probe: outcome)", overflow="fold", max_width=60)
    for a in result.tasks:
        found = []
        for name in result.probes:
            r = a.result(name)
            if r is None:
                continue
            mark = _MARK[r.outcome.value]
            if r.value is not None and r.kind.value == "measurability":
                found.append(f"{name} {mark} {r.value:.3g}")
            elif mark not in ("-", "ok", "n/a"):
                found.append(f"{name}: {mark}")
        table.add_row(a.task_id, a.worst().value, ", ".join(found) or "nothing")
    return table
