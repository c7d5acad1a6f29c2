"""The `{task_dir}`, `{variant_dir}`, `{build_dir}`, `{root}` placeholders of harness recipes.

PerfCodeBench writes build and run argv with these placeholders and expands them with Python's
`str.format` (so `{{` and `}}` stand for literal braces). Loaders call `check_placeholders` so
that a typo fails at load time, naming the task and field; the judge calls
`expand_placeholders` when it builds and runs a variant.

  task_dir     the task's directory (`executable_tasks/<task_id>`)
  variant_dir  the directory holding the variant's solution file: baseline/, reference/, or
               wherever the judge wrote the candidate
  build_dir    a fresh directory for this variant's build outputs
  root         the benchmark repository root (the parent of `executable_tasks/`); PerfCodeBench's
               own runner also expands it and runs every command from there
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from pathlib import Path

from perfgym.errors import TaskFormatError

PLACEHOLDERS = ("task_dir", "variant_dir", "build_dir", "root")

_FORMATTER = string.Formatter()


def placeholders_in(text: str) -> list[str]:
    """The placeholder names used in `text`; ValueError when its braces are malformed."""
    names = []
    for _literal, field, spec, conversion in _FORMATTER.parse(text):
        if field is None:
            continue
        if spec or conversion:
            raise ValueError(f"placeholder {{{field}}} may not carry a format spec or conversion")
        names.append(field)
    return names


def check_placeholders(texts: Iterable[str], *, task: str, field: str) -> None:
    """TaskFormatError unless every `{name}` in `texts` is a known placeholder."""
    for text in texts:
        problem = _problem(text)
        if problem is not None:
            raise TaskFormatError(f"task {task!r}: {field}: {problem}")


def _problem(text: str) -> str | None:
    try:
        names = placeholders_in(text)
    except ValueError as exc:
        return f"bad placeholder in {text!r}: {exc}"
    for name in names:
        if name not in PLACEHOLDERS:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            return f"unknown placeholder {{{name}}} in {text!r} (known: {known})"
    return None


def expand_placeholders(
    argv: Sequence[str],
    *,
    task_dir: str | Path,
    variant_dir: str | Path,
    build_dir: str | Path,
    root: str | Path | None = None,
) -> list[str]:
    """`argv` with every placeholder replaced; `root` defaults to the task dir's grandparent."""
    values = {
        "task_dir": str(task_dir),
        "variant_dir": str(variant_dir),
        "build_dir": str(build_dir),
        "root": str(root if root is not None else Path(task_dir).parent.parent),
    }
    expanded = []
    for text in argv:
        problem = _problem(text)
        if problem is not None:
            raise TaskFormatError(f"cannot expand argv: {problem}")
        expanded.append(text.format(**values))
    return expanded
