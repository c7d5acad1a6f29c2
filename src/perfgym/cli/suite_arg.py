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


SHOWN_PER_CAUSE = 3


def report_skipped(suite: Suite) -> None:
    """A line per task that did not load (at most `SHOWN_PER_CAUSE` of one cause, then how many
    more), then the counts per language and reason."""
    skipped = suite.metadata.get("skipped") or []
    if not skipped:
        return
    for line in skipped_lines(skipped):
        err_console.print(line)
    loaded = Counter(t.language.value for t in suite.tasks)
    err_console.print(load_summary(loaded, skipped))


def skipped_lines(skipped: list[dict[str, str]]) -> list[str]:
    """Each skipped task's line, in order, until its cause (kind, reason and the external
    library or file named) has been shown `SHOWN_PER_CAUSE` times; then one line per cause with
    the number of tasks left out."""
    shown: Counter[tuple[str, str]] = Counter()
    lines = []
    for e in skipped:
        seen = (e["kind"], _cause(e["reason"]))
        shown[seen] += 1
        if shown[seen] <= SHOWN_PER_CAUSE:
            lines.append(f"[yellow]{e['kind']}[/] {escape(e['reason'])}")
    for (kind, why), n in shown.items():
        if n > SHOWN_PER_CAUSE:
            more = n - SHOWN_PER_CAUSE
            lines.append(f"[yellow]{kind}[/] ... and {more} more task(s): {escape(why)}")
    return lines


def _cause(reason: str) -> str:
    """The part of a reason shared by every task it stops: the text after the task's name."""
    _, sep, rest = reason.partition("': ")
    return rest if sep else _reason_kind(reason)


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
