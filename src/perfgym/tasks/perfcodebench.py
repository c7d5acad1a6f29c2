"""The PerfCodeBench task-directory layout, exactly as published, as a perfgym `Suite`.

    executable_tasks/<task_id>/
      instance.json                         task text, build recipe, optional run argv
      baseline/<solution_filename>          what the model is asked to speed up
      reference/<solution_filename>         the expert's faster version
      harness/...                           self-checking benchmark (prints {"ok", "elapsed_ns"})
      candidate/<model>/<solution_filename> optional published model output
      candidate/<model>/eval_result.json    its recorded baseline/reference/candidate results

Each task becomes a HARNESS task. Published results become `StoredMeasurement`s on the
baseline and reference; the candidates themselves are read by `load_candidates(task)`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks._errors import describe
from perfgym.tasks.eval_results import (
    EVAL_RESULT_FILE,
    LEGACY_MODEL,
    candidate_dirs,
    load_candidates,
    read_eval_result,
    stored_measurement,
)
from perfgym.tasks.languages import known_names, language_from_filename, language_from_name
from perfgym.tasks.placeholders import check_placeholders, expand_placeholders
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import (
    BuildSpec,
    HarnessSpec,
    Language,
    Oracle,
    Solution,
    Split,
    StoredMeasurement,
    Task,
    TaskKind,
)

INSTANCE_FILE = "instance.json"
DEFAULT_SOLUTION_FILENAME = "solution.cpp"
METADATA_FIELDS = ("language", "domain", "license", "source_name", "source_url", "notes")
#: Files PerfCodeBench's prompt builder shows as the interface, first found wins.
INTERFACE_FILES = ("harness/interface.h", "harness/interface.hpp", "harness/interface.txt")
_VERSION_SUFFIX = re.compile(r"_v\d+$")

__all__ = ["Instance", "family_of", "is_executable_tasks_dir", "load_candidates",
           "load_perfcodebench", "load_task"]  # fmt: skip


class RunEntry(BaseModel):
    """`run` in instance.json."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str] = Field(min_length=1)


class Instance(BaseModel):
    """instance.json, with the fields PerfCodeBench publishes; any other field is an error."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    title: str
    goal: str
    metric: str
    correctness_rule: str
    allowed_external_includes: list[str] = Field(default_factory=list)
    solution_filename: str = DEFAULT_SOLUTION_FILENAME
    build: BuildSpec
    run: RunEntry | None = None
    language: str | None = None
    domain: Any = None
    license: Any = None
    source_name: Any = None
    source_url: Any = None
    notes: Any = None


def is_executable_tasks_dir(path: Path) -> bool:
    """True when `path` is a directory with at least one `<task>/instance.json`."""
    if not path.is_dir():
        return False
    return any((child / INSTANCE_FILE).is_file() for child in path.iterdir() if child.is_dir())


def family_of(task_id: str) -> str:
    """The task family: the id without a trailing version suffix (`_v02`).

    PerfCodeBench ships numbered variants of one task (`cuda_cub_add_reduce_i32_v12`); they
    must land in the same split.
    """
    return _VERSION_SUFFIX.sub("", task_id)


def load_perfcodebench(path: Path, name: str | None = None) -> Suite:
    """Every task directory under an `executable_tasks/` directory."""
    path = path.resolve()
    dirs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not dirs:
        raise ConfigError(f"no task directories in {path}")
    tasks = [load_task(d) for d in dirs]
    default = path.parent.name if path.name == "executable_tasks" else path.name
    return Suite(
        name=name or default,
        tasks=tasks,
        source=str(path),
        metadata={"format": "perfcodebench", "root": str(path.parent)},
    )


def load_task(task_dir: Path) -> Task:
    """One `executable_tasks/<task_id>/` directory."""
    task_dir = task_dir.resolve()
    instance = _instance(task_dir)
    task_id = instance.task_id
    if task_id != task_dir.name:
        raise TaskFormatError(
            f"task {task_id!r} ({task_dir / INSTANCE_FILE}): task_id must equal the directory "
            f"name {task_dir.name!r}"
        )
    filename = instance.solution_filename
    if Path(filename).name != filename:
        raise TaskFormatError(
            f"task {task_id!r}: solution_filename must be a file name: {filename!r}"
        )
    language = _language(instance)
    if not (task_dir / "harness").is_dir():
        raise TaskFormatError(f"task {task_id!r}: missing harness directory {task_dir / 'harness'}")
    baseline_stored, reference_stored, models = _published(task_dir, task_id)
    baseline = _solution(task_dir, "baseline", filename, baseline_stored)
    reference = _solution(task_dir, "reference", filename, reference_stored)
    _check_build(instance, task_dir)
    metadata: dict[str, Any] = {
        key: getattr(instance, key) for key in METADATA_FIELDS if getattr(instance, key) is not None
    }
    if (task_dir / "candidate" / filename).is_file():
        models.append(LEGACY_MODEL)
    metadata["candidates"] = models
    return Task(
        id=task_id,
        family=family_of(task_id),
        language=language,
        kind=TaskKind.HARNESS,
        title=instance.title,
        goal=instance.goal,
        interface=_interface(task_dir),
        metric=instance.metric,
        correctness_rule=instance.correctness_rule,
        allowed_external_includes=instance.allowed_external_includes,
        baseline=baseline,
        references=[reference],
        oracle=Oracle(kind="harness"),
        harness=HarnessSpec(
            build=instance.build,
            run_argv=instance.run.argv if instance.run else None,
            solution_filename=filename,
        ),
        # The published task directories carry no split: they load as evaluation tasks.
        split=Split.TEST,
        root=task_dir,
        metadata=metadata,
    )


def _instance(task_dir: Path) -> Instance:
    path = task_dir / INSTANCE_FILE
    label = f"task {task_dir.name!r}"
    if not path.is_file():
        raise TaskFormatError(f"{label}: missing {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"{label}: malformed {path}: {exc}") from None
    if not isinstance(data, dict):
        raise TaskFormatError(f"{label}: {path}: expected a JSON object")
    try:
        return Instance.model_validate(data)
    except ValidationError as exc:
        raise TaskFormatError(f"{label} ({path}): {describe(exc)}") from None


def _language(instance: Instance) -> Language:
    if instance.language is not None:
        language = language_from_name(instance.language)
        if language is None:
            raise TaskFormatError(
                f"task {instance.task_id!r}: unknown language {instance.language!r} "
                f"(known: {', '.join(known_names())})"
            )
        return language
    language = language_from_filename(instance.solution_filename)
    if language is None:
        raise TaskFormatError(
            f"task {instance.task_id!r}: no `language` field and the extension of "
            f"solution_filename {instance.solution_filename!r} names no known language"
        )
    return language


def _check_build(instance: Instance, task_dir: Path) -> None:
    """Placeholders valid, the recipe complete, and the files it names present."""
    task_id, build = instance.task_id, instance.build
    fields = {
        "build.cxxflags": build.cxxflags,
        "build.sources": build.sources,
        "build.command": build.command or [],
        "build.copy_sources_to_build": build.copy_sources_to_build,
        "run.argv": instance.run.argv if instance.run else [],
    }
    for field, texts in fields.items():
        check_placeholders(texts, task=task_id, field=field)
    if build.compiler is not None and not build.sources:
        raise TaskFormatError(f"task {task_id!r}: build.sources is empty")
    if build.command is not None and not build.command:
        raise TaskFormatError(f"task {task_id!r}: build.command is empty")
    # Input files must exist for the baseline and the reference; build outputs cannot be checked.
    for field in ("build.sources", "build.copy_sources_to_build"):
        for text in fields[field]:
            if "{build_dir}" in text:
                continue
            for variant in ("baseline", "reference"):
                (expanded,) = expand_placeholders(
                    [text], task_dir=task_dir, variant_dir=task_dir / variant, build_dir="."
                )
                # Relative paths are relative to the benchmark root, where commands run.
                resolved = task_dir.parent.parent / expanded
                if not resolved.is_file():
                    raise TaskFormatError(
                        f"task {task_id!r}: {field}: missing file {resolved} (for the {variant})"
                    )


def _solution(
    task_dir: Path, variant: str, filename: str, stored: StoredMeasurement | None
) -> Solution:
    path = task_dir / variant / filename
    if not path.is_file():
        raise TaskFormatError(f"task {task_dir.name!r}: missing {variant} solution {path}")
    return Solution(label=variant, source=path.read_text(encoding="utf-8"), stored=stored)


def _interface(task_dir: Path) -> str:
    for relative in INTERFACE_FILES:
        path = task_dir / relative
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return ""


def _published(
    task_dir: Path, task_id: str
) -> tuple[StoredMeasurement | None, StoredMeasurement | None, list[str]]:
    """Stored baseline and reference results and the candidate model names.

    Every model's eval_result.json repeats the baseline and reference measurements (the
    published runner caches them). The first result, by model name, whose section has status
    ok is taken; failing that, the first section found, so that a failure is kept, not hidden.
    """
    models = [d.name for d in candidate_dirs(task_dir)]
    chosen: dict[str, StoredMeasurement | None] = {"baseline": None, "reference": None}
    for model in models:
        path = task_dir / "candidate" / model / EVAL_RESULT_FILE
        if not path.is_file():
            continue
        result = read_eval_result(path, task_id)
        for name in chosen:
            current = chosen[name]
            if name not in result or (current is not None and current.status == "ok"):
                continue
            where = f"{path.relative_to(task_dir.parent)}#{name}"
            stored = stored_measurement(result[name], task_id=task_id, where=where)
            if current is None or stored.status == "ok":
                chosen[name] = stored
        if all(s is not None and s.status == "ok" for s in chosen.values()):
            break
    return chosen["baseline"], chosen["reference"], models
