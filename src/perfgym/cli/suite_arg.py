"""Loading the SUITE argument of CLI commands, with clear errors and the skipped tasks listed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.markup import escape

from perfgym.cli.output import err_console, fail
from perfgym.errors import PerfgymError
from perfgym.evaluation.config import EvalFailed
from perfgym.evaluation.inputs import pick_tasks
from perfgym.tasks.suite import Suite, load_suite
from perfgym.tasks.task import Task


def load_or_fail(
    spec: str, task_ids: list[str] | None = None, external: Path | None = None
) -> tuple[Suite, list[Task]]:
    """The suite and its selected tasks; a task that did not load is one line on stderr.

    With `task_ids`, a PerfCodeBench suite parses only those task directories.
    """
    try:
        suite = load_suite(spec, external=external, tasks=task_ids or None)
    except PerfgymError as exc:
        fail(str(exc))
    report_skipped(suite)
    try:
        tasks = pick_tasks(suite, task_ids)
    except EvalFailed as exc:
        fail(str(exc))
    return suite, tasks


def report_skipped(suite: Suite) -> None:
    """One line per task that did not load, then the counts per language and reason."""
    skipped = suite.metadata.get("skipped") or []
    if not skipped:
        return
    for e in skipped:
        err_console.print(f"[yellow]{e['kind']}[/] {escape(e['reason'])}")
    loaded = Counter(t.language.value for t in suite.tasks)
    err_console.print(load_summary(loaded, skipped))


def load_summary(loaded: Counter[str], skipped: list[dict[str, str]]) -> str:
    """'loaded N: c 3, cpp 2; unsupported M (cpp 2: external library); failed K (...)'."""
    parts = [f"loaded {sum(loaded.values())} ({_counts(loaded)})"]
    for kind in ("unsupported", "failed"):
        rows = [e for e in skipped if e["kind"] == kind]
        if rows:
            why = Counter(f"{e['language']}: {_reason_kind(e['reason'])}" for e in rows)
            parts.append(f"{kind} {len(rows)} ({_counts(why)})")
    return "; ".join(parts)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items())) or "none"


def _reason_kind(reason: str) -> str:
    """A reason without its task and paths, so that like reasons count together."""
    for marker in ("needs external file", "needs external include directory", "needs header",
                   "malformed", "invalid JSON", "unknown status", "missing", "unknown field"):  # fmt: skip
        if marker in reason:
            return marker
    return "other"
