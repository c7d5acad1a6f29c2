"""PerfCodeBench's published results: `eval_result.json` sections and `candidate/<model>/` sources.

A candidate directory `executable_tasks/<task>/candidate/<model>/` holds a model's solution
file and/or `eval_result.json`, whose `baseline`, `reference` and `candidate` sections record
how each variant fared (`status` ok/error/timeout/missing_candidate, `median_elapsed_ns`,
`all_elapsed_ns`, `runs`, `all_ok`, ...). In a missing_candidate file the runner measured
nothing, and the baseline and reference sections say `unknown`: "not reported", never a result
(`PublishedCandidate.baseline`/`.reference` are then None). When the solution file is absent,
the source is recovered from the result's `model_output_solution_source`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import TaskFormatError
from perfgym.tasks.task import StoredMeasurement, Task

EVAL_RESULT_FILE = "eval_result.json"
#: A section the published runner did not measure (missing_candidate files): not a result.
UNKNOWN = "unknown"
STATUSES = frozenset({"ok", "error", "timeout", "missing_candidate", UNKNOWN})
#: Model alias of a candidate stored directly as `candidate/<solution_filename>` (older layout).
LEGACY_MODEL = "default"


class PublishedCandidate(BaseModel):
    """A published model candidate of a PerfCodeBench task, with its recorded results."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    model: str = Field(description="Directory name under candidate/ ('/' written as '__').")
    model_name: str | None = Field(
        default=None, description="The result's `model` field, when recorded."
    )
    source: str | None = Field(
        default=None, description="Solution text; None when none was produced."
    )
    source_path: Path | None = Field(default=None, description="The solution file, when it exists.")
    variant_dir: Path = Field(description="Value of {variant_dir} for this candidate.")
    summary: str = Field(
        default="", description="The model's own summary (`model_output_summary`)."
    )
    eval_result: Path | None = None
    baseline: StoredMeasurement | None = None
    reference: StoredMeasurement | None = None
    candidate: StoredMeasurement | None = None
    error: str | None = Field(
        default=None, description="The candidate section's error text, if any."
    )


def read_eval_result(path: Path, task_id: str) -> dict[str, Any]:
    """The parsed eval_result.json; TaskFormatError when it is not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"task {task_id!r}: {path}: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise TaskFormatError(f"task {task_id!r}: {path}: expected a JSON object")
    return data


def stored_measurement(section: Any, *, task_id: str, where: str) -> StoredMeasurement:
    """One result section as a `StoredMeasurement` (nanoseconds become seconds)."""
    if not isinstance(section, dict):
        raise TaskFormatError(f"task {task_id!r}: {where}: expected an object")
    status = section.get("status", "ok")
    if status not in STATUSES:
        raise TaskFormatError(
            f"task {task_id!r}: {where}: unknown status {status!r} (known: {sorted(STATUSES)})"
        )
    samples = section.get("all_elapsed_ns") or []
    median = section.get("median_elapsed_ns")
    try:
        return StoredMeasurement(
            status=status,
            median_s=None if median is None else float(median) / 1e9,
            samples_s=[float(ns) / 1e9 for ns in samples],
            all_ok=section.get("all_ok"),
            source=where,
        )
    except (TypeError, ValueError) as exc:
        raise TaskFormatError(f"task {task_id!r}: {where}: bad timing values: {exc}") from None


def candidate_dirs(task_dir: Path) -> list[Path]:
    """The per-model directories under `candidate/`, sorted by name."""
    root = task_dir / "candidate"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_candidate(
    task_dir: Path, task_id: str, model_dir: Path, solution_filename: str
) -> PublishedCandidate:
    """One `candidate/<model>/` directory as a `PublishedCandidate`."""
    source_path = model_dir / solution_filename
    result_path = model_dir / EVAL_RESULT_FILE
    result = read_eval_result(result_path, task_id) if result_path.is_file() else {}
    source = source_path.read_text(encoding="utf-8") if source_path.is_file() else None
    if source is None and result.get("model_output_solution_source"):
        source = str(result["model_output_solution_source"])
    sections: dict[str, StoredMeasurement | None] = {}
    for name in ("baseline", "reference", "candidate"):
        where = f"{result_path.relative_to(task_dir.parent)}#{name}"
        stored = (
            stored_measurement(result[name], task_id=task_id, where=where)
            if name in result
            else None
        )
        sections[name] = None if stored is not None and stored.status == UNKNOWN else stored
    candidate_section = result.get("candidate")
    error = candidate_section.get("error") if isinstance(candidate_section, dict) else None
    return PublishedCandidate(
        task_id=task_id,
        model=model_dir.name,
        model_name=result.get("model"),
        source=source,
        source_path=source_path if source_path.is_file() else None,
        variant_dir=model_dir,
        summary=str(result.get("model_output_summary") or ""),
        eval_result=result_path if result_path.is_file() else None,
        error=None if error is None else str(error),
        **sections,
    )


def read_candidates(
    task_dir: Path, task_id: str, solution_filename: str
) -> list[PublishedCandidate]:
    """Every published candidate of one task directory, legacy layout included."""
    found = [
        read_candidate(task_dir, task_id, d, solution_filename) for d in candidate_dirs(task_dir)
    ]
    legacy = task_dir / "candidate" / solution_filename
    if legacy.is_file():
        found.append(
            PublishedCandidate(
                task_id=task_id,
                model=LEGACY_MODEL,
                source=legacy.read_text(encoding="utf-8"),
                source_path=legacy,
                variant_dir=legacy.parent,
            )
        )
    return found


def load_candidates(task: Task) -> list[PublishedCandidate]:
    """The published candidates of a task loaded from a PerfCodeBench directory."""
    if task.root is None or task.harness is None:
        raise TaskFormatError(f"task {task.id!r} was not loaded from a PerfCodeBench directory")
    return read_candidates(task.root, task.id, task.harness.solution_filename)
