"""`perfgym audit perfgym-repos|TASK_FOLDER`: the repository probes on repository tasks, each
patch through the agent's patch evaluation, results in the same file, store and table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfgym.cli.output import err_console, fail

if TYPE_CHECKING:
    from perfgym.audit.results import SuiteAudit, TaskAudit
    from perfgym.repos.task import RepoTask

BUILTIN = "perfgym-repos"


def is_repo_suite(spec: str) -> bool:
    """The built-in repository suite, a repository task folder or a folder of them."""
    from perfgym.repos.loading import holds_repo_task

    if spec == BUILTIN:
        return True
    path = Path(spec)
    if not path.is_dir():
        return False
    return holds_repo_task(path) or any(d.is_dir() and holds_repo_task(d) for d in path.iterdir())


def load_repo_tasks(spec: str, ids: list[str], limit: int | None) -> tuple[str, list[RepoTask]]:
    """(the suite's name, its selected tasks); bad input is one line."""
    from perfgym.errors import PerfgymError
    from perfgym.repos.loading import load_repo_suite

    try:
        tasks = load_repo_suite(spec)
    except PerfgymError as exc:
        fail(str(exc))
    name = BUILTIN if spec == BUILTIN else Path(spec).name
    if ids:
        known = {t.id: t for t in tasks}
        missing = [i for i in ids if i not in known]
        if missing:
            fail(f"unknown task id(s) in {name}: {', '.join(missing)}")
        tasks = [known[i] for i in ids]
    if limit is not None:
        if limit < 1:
            fail(f"--limit must be at least 1, got {limit}")
        tasks = tasks[:limit]
    return name, tasks


def run_repo_audit(suite: str, tasks: list[RepoTask], probe_names: list[str], out: Path, *,
                   repeats: int, resume: bool, store: Path | None, quiet: bool) -> SuiteAudit:  # fmt: skip
    """Each task checked (built, tested, run once), then every probe's patches evaluated;
    written to `out` and the store as each task finishes, reused by a rerun."""
    from rich.progress import Progress

    from perfgym.audit.repo_audit import audit_repo_task, select_repo_probes
    from perfgym.audit.results import SuiteAudit
    from perfgym.audit.resume import AuditFile
    from perfgym.audit.summary import summarise
    from perfgym.cli.audit_cmd import stored_audit
    from perfgym.cli.interrupted import stop_interrupted, stop_on_sigterm
    from perfgym.errors import PerfgymError
    from perfgym.machine import fingerprint
    from perfgym.repos.checks import check_task

    try:
        chosen = select_repo_probes(probe_names)
    except PerfgymError as exc:
        fail(str(exc))
    names = [p.name for p in chosen]
    machine = fingerprint()
    header: dict[str, Any] = {"suite": suite, "probes": names, "repeats": repeats,
                              "kind": "repository", "machine": machine}  # fmt: skip
    try:
        results = AuditFile(out, header, resume=resume)
        kept = stored_audit(store, header, resume, results)
    except PerfgymError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write results {out}: {exc.strerror or exc}")
    t0 = time.monotonic()
    reused = sum(t.id in results.done for t in tasks)
    restore = stop_on_sigterm()
    try:
        with Progress(console=err_console, disable=quiet) as bar:
            job = bar.add_task(f"auditing {len(tasks)} repository tasks", total=len(tasks))
            bar.update(job, advance=reused)
            for task in tasks:
                if task.id in results.done:
                    continue
                checked = check_task(task)
                try:
                    audit = audit_repo_task(checked, chosen, suite=suite, rounds=repeats)
                finally:
                    checked.remove()
                results.add(audit)
                results.done[task.id] = audit
                if kept is not None:
                    kept.put(audit)
                bar.update(job, advance=1)
    except KeyboardInterrupt as exc:
        results.close()
        stop_interrupted("task audits", len(results.done), len(tasks), str(out), exc)
    except PerfgymError as exc:
        results.close()
        fail(str(exc))
    finally:
        restore()
        if kept is not None:
            kept.close()
    results.close()
    audits: list[TaskAudit] = [results.done[t.id] for t in tasks]
    return SuiteAudit(suite=suite, probes=names, tasks=audits, summary=summarise(audits, names),
                      config=header, machine=machine, wall_s=time.monotonic() - t0,
                      reused=reused)  # fmt: skip
