"""Loading the SUITE argument of CLI commands, with clear errors."""

from __future__ import annotations

from perfgym.cli.output import fail
from perfgym.errors import PerfgymError
from perfgym.tasks.suite import Suite, load_suite
from perfgym.tasks.task import Task


def load_or_fail(spec: str, task_ids: list[str] | None = None) -> tuple[Suite, list[Task]]:
    try:
        suite = load_suite(spec)
    except PerfgymError as exc:
        fail(str(exc))
    tasks = list(suite.tasks)
    if task_ids:
        known = {t.id: t for t in tasks}
        missing = [t for t in task_ids if t not in known]
        if missing:
            fail(f"unknown task id(s) in {suite.name}: {', '.join(missing)}")
        tasks = [known[t] for t in task_ids]
    return suite, tasks
