"""`--candidates FILE` for `perfgym eval`: read it, refuse bad lines unless told to skip them."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from perfgym.cli.candidates_file import FileCandidate, read_candidates
from perfgym.cli.candidates_formats import FORMATS, Format
from perfgym.cli.output import err_console, fail
from perfgym.errors import PerfgymError
from perfgym.tasks.suite import Suite
from perfgym.tasks.task import Task


def load_candidates_or_fail(
    path: Path, suite: Suite, tasks: list[Task], fmt: str, skip_bad_lines: bool
) -> tuple[list[FileCandidate], list[str]]:
    """(candidates of the evaluated tasks, problems). A bad line is named on its own line and,
    unless `skip_bad_lines`, stops the run before anything is judged (exit 2)."""
    if fmt not in FORMATS:
        fail(f"unknown --format {fmt!r}; one of {', '.join(FORMATS)}")
    fmt_: Format = fmt  # type: ignore[assignment]
    try:
        cands, problems = read_candidates(path, suite, fmt_)
    except PerfgymError as exc:
        fail(str(exc))
    if problems and not skip_bad_lines:
        if len(problems) == 1:
            fail(f"{path}: {problems[0]}; nothing judged (--skip-bad-lines judges the rest)")
        for p in problems:
            err_console.print(f"{escape(str(path))}: {escape(p)}", highlight=False)
        fail(f"{len(problems)} bad lines in {path}; nothing judged "
             "(fix them, or --skip-bad-lines judges the rest)")  # fmt: skip
    for p in problems:
        err_console.print(f"[yellow]skipped[/] {escape(str(path))}: {escape(p)}", highlight=False)
    wanted = {t.id for t in tasks}
    outside = sum(c.task.id not in wanted for c in cands)
    cands = [c for c in cands if c.task.id in wanted]
    if outside:
        err_console.print(f"note: {outside} candidate(s) of tasks outside the evaluated set "
                          "(--task, --split, --limit) not judged", highlight=False)  # fmt: skip
    if not cands:
        fail(f"no usable candidates in {path} for the {len(tasks)} task(s) evaluated")
    kept = sorted({k for c in cands for k in c.meta})
    if kept:
        shown = ", ".join(kept[:8]) + (", …" if len(kept) > 8 else "")
        err_console.print(f"kept unknown field(s) {escape(shown)} in each verdict's meta",
                          highlight=False)  # fmt: skip
    return cands, problems
