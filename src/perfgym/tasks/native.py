"""perfgym's native task format: a directory of task directories, or a tasks.jsonl file.

The format is specified in docs/task-format.md. Every problem is reported as a
`TaskFormatError` that names the task, the file and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.errors import ConfigError, TaskFormatError
from perfgym.tasks._errors import describe
from perfgym.tasks.languages import language_from_filename
from perfgym.tasks.placeholders import check_placeholders
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import (
    HarnessSpec,
    Language,
    Oracle,
    Solution,
    Split,
    Task,
    TaskKind,
    TestCase,
)

TASK_FILE = "task.yaml"
SUITE_FILE = "suite.yaml"


class PoolEntry(BaseModel):
    """One further solution of a task: its label, file and quality rank."""

    model_config = ConfigDict(extra="forbid")

    label: str
    file: str
    quality: float | None = None


class OracleEntry(BaseModel):
    """`oracle:` in task.yaml; `checker` names a Python file in the task directory."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["exact", "tokens", "float", "checker", "harness", "assertion"] = "tokens"
    tolerance: float = 1e-6
    checker: str | None = None


class TaskFile(BaseModel):
    """The contents of task.yaml (file fields name files in the task directory)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    family: str
    language: Language
    kind: TaskKind
    split: Split = Split.TRAIN
    title: str = ""
    goal: str = ""
    interface: str = ""
    metric: str = ""
    correctness_rule: str = ""
    allowed_external_includes: list[str] = Field(default_factory=list)
    oracle: OracleEntry = Field(default_factory=OracleEntry)
    baseline: str
    references: list[str] = Field(default_factory=list)
    pool: list[PoolEntry] = Field(default_factory=list)
    tests: str | None = None
    generator: str | None = None
    workloads: list[TestCase] | str = Field(default_factory=list)
    entry_point: str | None = None
    harness: HarnessSpec | None = None
    time_limit_s: float | None = Field(default=None, gt=0)
    memory_limit_mb: float | None = Field(default=None, gt=0)
    cores: Any = Field(default=1, description="Checked as `Task.cores`.")
    metadata: dict[str, Any] = Field(default_factory=dict)


class SuiteFile(BaseModel):
    """Optional suite.yaml at the suite root."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


def task_dirs(root: Path) -> list[Path]:
    """The task directories of a suite: every sub-directory not starting with '.' or '_'."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def load_directory(root: Path, name: str | None = None) -> Suite:
    """A suite from a directory holding one directory per task."""
    root = root.resolve()
    info = _suite_file(root)
    dirs = task_dirs(root)
    if not dirs:
        raise ConfigError(
            f"no tasks in {root}: expected task directories with {TASK_FILE}, a tasks.jsonl, "
            "or PerfCodeBench task directories with instance.json"
        )
    tasks = [load_task_dir(d) for d in dirs]
    metadata = dict(info.metadata)
    if info.description:
        metadata["description"] = info.description
    return Suite(
        name=name or info.name or root.name, tasks=tasks, source=str(root), metadata=metadata
    )


def load_task_dir(directory: Path) -> Task:
    """One task from its directory (task.yaml plus the files it names)."""
    directory = directory.resolve()
    label = directory.name
    spec = _task_file(directory)
    if spec.id != directory.name:
        raise TaskFormatError(
            f"task {spec.id!r} ({directory / TASK_FILE}): id must equal the directory name "
            f"{directory.name!r}"
        )
    read = _Reader(directory, spec.id)
    baseline = read.solution("baseline", spec.baseline, spec.language)
    references = [
        read.solution("reference" if n == 0 else f"reference-{n + 1}", f, spec.language)
        for n, f in enumerate(spec.references)
    ]
    pool = [read.solution(e.label, e.file, spec.language, e.quality) for e in spec.pool]
    tests = read.cases(spec.tests, "tests") if spec.tests else []
    workloads = (
        read.cases(spec.workloads, "workloads")
        if isinstance(spec.workloads, str)
        else _unique(spec.workloads, spec.id, "workloads")
    )
    generator = read.text(spec.generator, "generator") if spec.generator else None
    if generator is None and any(c.size is not None for c in workloads):
        raise TaskFormatError(
            f"task {spec.id!r}: workloads are given by size/seed but task.yaml names no generator"
        )
    oracle = Oracle(
        kind=spec.oracle.kind,
        tolerance=spec.oracle.tolerance,
        checker=read.text(spec.oracle.checker, "oracle.checker") if spec.oracle.checker else None,
    )
    if oracle.kind in ("checker", "assertion") and oracle.checker is None:
        raise TaskFormatError(f"task {spec.id!r}: oracle kind {oracle.kind!r} needs a checker file")
    if spec.harness is not None:
        _check_harness(spec.harness, spec.id)
    fields = spec.model_dump(
        exclude={"baseline", "references", "pool", "tests", "workloads", "generator", "oracle"}
    )
    try:
        return Task(
            **fields,
            baseline=baseline,
            references=references,
            pool=pool,
            tests=tests,
            workloads=workloads,
            generator=generator,
            oracle=oracle,
            root=directory,
        )
    except ValidationError as exc:
        raise TaskFormatError(
            f"task {label!r} ({directory / TASK_FILE}): {describe(exc)}"
        ) from None


def load_jsonl(path: Path, name: str | None = None) -> Suite:
    """A suite from a JSONL file holding one `Task` object per line."""
    path = path.resolve()
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path} line {number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskFormatError(f"{where}: invalid JSON: {exc}") from None
            label = record.get("id", "?") if isinstance(record, dict) else "?"
            try:
                task = Task.model_validate(record)
            except ValidationError as exc:
                raise TaskFormatError(f"task {label!r} ({where}): {describe(exc)}") from None
            if task.id in seen:
                raise TaskFormatError(
                    f"task {task.id!r} ({where}): duplicate id, first defined on line "
                    f"{seen[task.id]}"
                )
            seen[task.id] = number
            tasks.append(task)
    if not tasks:
        raise ConfigError(f"no tasks in {path}")
    default = path.parent.name if path.name == "tasks.jsonl" else path.stem
    return Suite(name=name or default, tasks=tasks, source=str(path))


class _Reader:
    """Reads the files one task.yaml names, with errors that name the task and field."""

    def __init__(self, directory: Path, task_id: str) -> None:
        self.directory = directory
        self.task_id = task_id

    def path(self, name: str, field: str) -> Path:
        path = (self.directory / name).resolve()
        if self.directory.resolve() not in path.parents:
            raise TaskFormatError(
                f"task {self.task_id!r}: {field}: {name!r} is outside the task directory"
            )
        if not path.is_file():
            raise TaskFormatError(f"task {self.task_id!r}: {field}: missing file {path}")
        return path

    def text(self, name: str, field: str) -> str:
        return self.path(name, field).read_text(encoding="utf-8")

    def solution(
        self, label: str, name: str, task_language: Language, quality: float | None = None
    ) -> Solution:
        language = language_from_filename(name)
        if language is None:
            raise TaskFormatError(
                f"task {self.task_id!r}: {label}: cannot tell the language of {name!r} "
                "from its extension"
            )
        return Solution(
            label=label,
            source=self.text(name, label),
            language=None if language is task_language else language,
            quality=quality,
        )

    def cases(self, name: str, field: str) -> list[TestCase]:
        path = self.path(name, field)
        cases = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"task {self.task_id!r}: {field}: {path.name} line {number}"
            try:
                cases.append(TestCase.model_validate(json.loads(line)))
            except json.JSONDecodeError as exc:
                raise TaskFormatError(f"{where}: invalid JSON: {exc}") from None
            except ValidationError as exc:
                raise TaskFormatError(f"{where}: {describe(exc)}") from None
        return _unique(cases, self.task_id, field)


def _unique(cases: list[TestCase], task_id: str, field: str) -> list[TestCase]:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise TaskFormatError(f"task {task_id!r}: {field}: duplicate case id {case.id!r}")
        seen.add(case.id)
    return cases


def _check_harness(harness: HarnessSpec, task_id: str) -> None:
    build = harness.build
    for field, texts in (
        ("harness.build.cxxflags", build.cxxflags),
        ("harness.build.sources", build.sources),
        ("harness.build.command", build.command or []),
        ("harness.build.copy_sources_to_build", build.copy_sources_to_build),
        ("harness.run_argv", harness.run_argv or []),
    ):
        check_placeholders(texts, task=task_id, field=field)


def _load_yaml(path: Path, label: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{label} ({path}): malformed YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskFormatError(f"{label} ({path}): expected a mapping, got {type(data).__name__}")
    return data


def _task_file(directory: Path) -> TaskFile:
    path = directory / TASK_FILE
    label = f"task {directory.name!r}"
    if not path.is_file():
        raise TaskFormatError(f"{label}: missing {path}")
    try:
        return TaskFile.model_validate(_load_yaml(path, label))
    except ValidationError as exc:
        raise TaskFormatError(f"{label} ({path}): {describe(exc)}") from None


def _suite_file(root: Path) -> SuiteFile:
    path = root / SUITE_FILE
    if not path.is_file():
        return SuiteFile()
    try:
        return SuiteFile.model_validate(_load_yaml(path, "suite"))
    except ValidationError as exc:
        raise TaskFormatError(f"suite ({path}): {describe(exc)}") from None
