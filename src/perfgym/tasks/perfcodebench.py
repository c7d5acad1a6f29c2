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
A task that cannot load (malformed files) or cannot build here (an absent `external/`
library, see perfcodebench_external.py; packaged ones come from the system, see
perfcodebench_system.py) is skipped and listed in the suite's
`metadata["skipped"]`, one entry each with its language and reason; the rest of the suite loads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks._errors import describe
from perfgym.tasks.eval_results import (
    EVAL_RESULT_FILE,
    LEGACY_MODEL,
    UNKNOWN,
    candidate_dirs,
    load_candidates,
    read_eval_result,
    stored_measurement,
)
from perfgym.tasks.languages import known_names, language_from_filename, language_from_name
from perfgym.tasks.perfcodebench_cores import detect_cores
from perfgym.tasks.perfcodebench_external import (
    include_dirs,
    locate_external,
    missing_external,
)
from perfgym.tasks.perfcodebench_system import use_system_libraries
from perfgym.tasks.placeholders import check_placeholders, expand_placeholders
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import (
    MAX_CORES,
    BuildSpec,
    HarnessSpec,
    Language,
    Oracle,
    Solution,
    Split,
    StoredMeasurement,
    StoredStatus,
    Task,
    TaskKind,
)

INSTANCE_FILE = "instance.json"
DEFAULT_SOLUTION_FILENAME = "solution.cpp"
METADATA_FIELDS = ("language", "domain", "license", "source_name", "source_url", "notes")
#: Files PerfCodeBench's prompt builder shows as the interface, first found wins.
INTERFACE_FILES = ("harness/interface.h", "harness/interface.hpp", "harness/interface.txt")
_VERSION_SUFFIX = re.compile(r"_v\d+$")

__all__ = ["Instance", "UnsupportedTask", "family_of", "is_executable_tasks_dir",
           "load_candidates", "load_perfcodebench", "load_task", "read_instance"]  # fmt: skip


class UnsupportedTask(TaskFormatError):
    """A well-formed task this machine cannot build (an external library is absent)."""


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
    benchmark_timeout_sec: float | None = Field(
        default=None, gt=0, description="The task's own run limit; becomes Task.time_limit_s."
    )
    cores: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CORES,
        strict=True,
        description="Cores each measured run needs (perfgym's; wins over detection).",
    )
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


def load_perfcodebench(
    path: Path,
    name: str | None = None,
    *,
    external: str | Path | None = None,
    only: Sequence[str] | None = None,
) -> Suite:
    """Every task directory under an `executable_tasks/` directory that loads here.

    `external` locates the `external/` library folder (see perfcodebench_external.py); `only`
    names the task directories to read (no other is parsed; an absent one is a ConfigError).
    A task that fails to load is skipped and recorded in `metadata["skipped"]`.
    """
    path = path.resolve()
    dirs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not dirs:
        raise ConfigError(f"no task directories in {path}")
    if only is not None:
        by_name = {d.name: d for d in dirs}
        absent = [t for t in only if t not in by_name]
        if absent:
            raise ConfigError(f"no task directory {', '.join(map(repr, absent))} in {path}")
        dirs = [by_name[t] for t in dict.fromkeys(only)]
    located = locate_external(path.parent, external)
    tasks: list[Task] = []
    skipped: list[dict[str, str]] = []
    for d in dirs:
        try:
            tasks.append(load_task(d, external=located))
        except TaskFormatError as exc:
            kind = "unsupported" if isinstance(exc, UnsupportedTask) else "failed"
            skipped.append({"task": d.name, "language": language_guess(d), "kind": kind,
                            "reason": str(exc)})  # fmt: skip
    default = path.parent.name if path.name == "executable_tasks" else path.name
    return Suite(
        name=name or default,
        tasks=tasks,
        source=str(path),
        metadata={
            "format": "perfcodebench",
            "root": str(path.parent),
            "external": None if located is None else str(located),
            "skipped": skipped,
        },
    )


def load_task(task_dir: Path, *, external: Path | None = None) -> Task:
    """One `executable_tasks/<task_id>/` directory; `external`: the located library folder.

    TaskFormatError when malformed; UnsupportedTask when it needs an absent external library.
    """
    task_dir = task_dir.resolve()
    instance = read_instance(task_dir)
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
    baseline_stored, reference_stored, models, timeouts = _published(task_dir, task_id)
    baseline = _solution(task_dir, "baseline", filename, baseline_stored)
    reference = _solution(task_dir, "reference", filename, reference_stored)
    build, system = use_system_libraries(instance.build, external)
    if system:
        instance = instance.model_copy(update={"build": build})
    _check_build(instance, task_dir, external)
    metadata: dict[str, Any] = {
        key: getattr(instance, key) for key in METADATA_FIELDS if getattr(instance, key) is not None
    }
    if (task_dir / "candidate" / filename).is_file():
        models.append(LEGACY_MODEL)
    metadata["candidates"] = models
    if external is not None:
        metadata["external"] = str(external)
    if system:
        metadata["system_libraries"] = system
    cores, why = _cores(instance, task_dir, language, baseline, reference)
    if cores > 1:
        metadata["cores_from"] = why
    # The task's own limit; an older task without one takes the longest its results record.
    limit = instance.benchmark_timeout_sec or (max(timeouts) if timeouts else None)
    if limit is not None:  # set beside the published times: scaled to this machine's speed
        metadata["published_limit_s"] = limit  # (perfgym.judge.machine_scale)
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
        time_limit_s=limit,
        cores=cores,
        root=task_dir,
        metadata=metadata,
    )


def _cores(
    instance: Instance,
    task_dir: Path,
    language: Language,
    baseline: Solution,
    reference: Solution,
) -> tuple[int, str]:
    """The task's cores and where they come from: instance.json's `cores`, else detection over
    the baseline, the reference and the harness (see perfcodebench_cores.py)."""
    if instance.cores is not None:
        return instance.cores, f"{INSTANCE_FILE} cores = {instance.cores}"
    filename = instance.solution_filename
    sources = [
        (f"baseline/{filename}", baseline.source),
        (f"reference/{filename}", reference.source),
    ]
    for path in sorted((task_dir / "harness").rglob("*")):
        if path.is_file() and path.stat().st_size <= 1 << 20:
            try:
                sources.append((str(path.relative_to(task_dir)), path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue  # data, not code
    build = instance.build
    return detect_cores(sources, language, [*build.cxxflags, *(build.command or [])])


def read_instance(task_dir: Path) -> Instance:
    """`<task_dir>/instance.json`, validated; TaskFormatError naming the task otherwise."""
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


def _check_build(instance: Instance, task_dir: Path, external: Path | None = None) -> None:
    """Placeholders valid, the recipe complete, the files it names present, and every external
    file, `-I` directory and quoted include it needs found (else UnsupportedTask)."""
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
    root = task_dir.parent.parent
    inputs: list[Path] = []
    dirs: list[Path] = []
    sources: list[Path] = sorted(p for p in (task_dir / "harness").rglob("*") if p.is_file())
    for variant in ("baseline", "reference"):
        variant_dir = task_dir / variant

        def expand(texts: list[str], variant_dir: Path = variant_dir) -> list[str]:
            # Relative paths are relative to the benchmark root, where commands run.
            return expand_placeholders(texts, task_dir=task_dir, variant_dir=variant_dir,
                                       build_dir="{build_dir}", root=root)  # fmt: skip

        sources.append(variant_dir / instance.solution_filename)
        flags = expand(build.cxxflags + (build.command or []))
        dirs += [root / d for d in include_dirs(flags) if "{build_dir}" not in d]
        # Input files must exist for the baseline and the reference; build outputs cannot.
        for field in ("build.sources", "build.copy_sources_to_build"):
            for text in expand(fields[field]):
                if "{build_dir}" in text:
                    continue
                resolved = root / text
                if resolved.is_relative_to(root / "external"):
                    inputs.append(resolved)  # checked against the located folder below
                elif not resolved.is_file():
                    raise TaskFormatError(
                        f"task {task_id!r}: {field}: missing file {resolved} (for the {variant})"
                    )
                else:
                    sources.append(resolved)
    copied = [Path(t).name for t in build.copy_sources_to_build]
    why = missing_external(root=root, external=external, paths=inputs,
                           dirs=list(dict.fromkeys(dirs)), sources=sources,
                           provided=copied)  # fmt: skip
    if why is not None:
        raise UnsupportedTask(f"task {task_id!r}: {why}")


def language_guess(task_dir: Path) -> str:
    """The language of a task that did not load, for the per-language counts ('?' if unknown)."""
    try:
        data = json.loads((task_dir / INSTANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        named = data.get("language")
        if isinstance(named, str) and (lang := language_from_name(named)) is not None:
            return lang.value
        filename = data.get("solution_filename", DEFAULT_SOLUTION_FILENAME)
        if isinstance(filename, str) and (lang := language_from_filename(filename)) is not None:
            return lang.value
    for candidate in ("baseline", "reference"):
        for f in (
            sorted((task_dir / candidate).glob("*")) if (task_dir / candidate).is_dir() else []
        ):
            if (lang := language_from_filename(f.name)) is not None:
                return lang.value
    return "?"


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
) -> tuple[StoredMeasurement | None, StoredMeasurement | None, list[str], list[float]]:
    """Stored baseline and reference results, the candidate model names, recorded limits.

    Each model's eval_result.json records the baseline and reference as that model's run saw
    them, and the files of one task can disagree (one run's baseline timed out, another's
    did not). For the task's own stored figures the first section by model name with status
    ok is taken; failing that, the first reported one, so that a failure is kept, not hidden.
    A section with status `unknown` (a missing_candidate run never measured them) is not a
    result and is ignored. The published table (`perfcodebench_published`) instead uses each
    model's own file.
    """
    models = [d.name for d in candidate_dirs(task_dir)]
    chosen: dict[str, StoredMeasurement | None] = {"baseline": None, "reference": None}
    timeouts: list[float] = []
    for model in models:
        path = task_dir / "candidate" / model / EVAL_RESULT_FILE
        if not path.is_file():
            continue
        result = read_eval_result(path, task_id)
        limit = result.get("benchmark_timeout_sec")
        if isinstance(limit, int | float) and not isinstance(limit, bool) and limit > 0:
            timeouts.append(float(limit))
        for name in chosen:
            current = chosen[name]
            if name not in result or (current is not None and current.status == StoredStatus.OK):
                continue
            where = f"{path.relative_to(task_dir.parent)}#{name}"
            stored = stored_measurement(result[name], task_id=task_id, where=where)
            if stored.status == UNKNOWN:
                continue
            if current is None or stored.status == StoredStatus.OK:
                chosen[name] = stored
    return chosen["baseline"], chosen["reference"], models, timeouts
