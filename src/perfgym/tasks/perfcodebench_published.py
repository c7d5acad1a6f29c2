"""PerfCodeBench's published results, read as they are: each model's own `eval_result.json`.

`read_published(executable_tasks)` reads every task's `candidate/<model>/` directories without
building or checking anything else a run would need (an absent `external/` library does not
matter here). A task whose instance.json or any eval_result.json is malformed is skipped and
listed, so that every model is scored over the same tasks. Turning the records into verdicts
and the RLPF table is `perfgym.cli.published_cmd`'s job (tasks sit below the judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks.eval_results import PublishedCandidate, read_candidates
from perfgym.tasks.perfcodebench import language_guess, read_instance


class PublishedTask(BaseModel):
    """One task's published candidates, by model directory name."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    language: str
    candidates: dict[str, PublishedCandidate] = Field(default_factory=dict)


class PublishedResults(BaseModel):
    """Every readable task with published results, the models seen, and what was skipped."""

    model_config = ConfigDict(extra="forbid")

    root: Path
    tasks: list[PublishedTask]
    models: list[str]
    skipped: list[dict[str, str]] = Field(
        default_factory=list, description="{task, language, kind: 'failed', reason} per task."
    )
    without_results: list[str] = Field(
        default_factory=list, description="Tasks with no candidate directory (not scored)."
    )


def read_published(path: Path, only: Sequence[str] | None = None) -> PublishedResults:
    """The published results under `executable_tasks/` (or the repository root above it)."""
    path = path.resolve()
    if not any((d / "instance.json").is_file() for d in _dirs(path)):
        path = path / "executable_tasks"
    dirs = _dirs(path)
    if not dirs:
        raise ConfigError(f"no PerfCodeBench task directories in {path}")
    if only:
        by_name = {d.name: d for d in dirs}
        absent = [t for t in only if t not in by_name]
        if absent:
            raise ConfigError(f"no task directory {', '.join(map(repr, absent))} in {path}")
        dirs = [by_name[t] for t in dict.fromkeys(only)]
    tasks: list[PublishedTask] = []
    skipped: list[dict[str, str]] = []
    bare: list[str] = []
    for d in dirs:
        language = language_guess(d)
        try:
            instance = read_instance(d)
            found = read_candidates(d, instance.task_id, instance.solution_filename)
        except TaskFormatError as exc:
            skipped.append({"task": d.name, "language": language, "kind": "failed",
                            "reason": str(exc)})  # fmt: skip
            continue
        if not found:
            bare.append(d.name)
            continue
        tasks.append(PublishedTask(task_id=instance.task_id, language=language,
                                   candidates={c.model: c for c in found}))  # fmt: skip
    models = sorted({m for t in tasks for m in t.candidates})
    return PublishedResults(root=path, tasks=tasks, models=models, skipped=skipped,
                            without_results=bare)  # fmt: skip


def _dirs(path: Path) -> list[Path]:
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
