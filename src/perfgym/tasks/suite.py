"""`Suite` (a named set of tasks) and `load_suite(spec)`, the one entry to every loader.

`spec` is one of:
  - a built-in name: `perfgym-core`, `enamel`, `humaneval`, `humanevalplus`;
  - a directory of perfgym task directories (each with `task.yaml`), see docs/task-format.md;
  - a `tasks.jsonl` file (one `Task` JSON object per line), or a directory holding only one;
  - a PerfCodeBench `executable_tasks/` directory (recognised by its `*/instance.json`), or the
    repository root above it.
Anything else is a `ConfigError` that lists the built-ins.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from perfgym.errors import ConfigError
from perfgym.tasks.task import Split, Task

#: Built-in suites: name -> "module:function" returning a Suite (imported only when asked).
BUILTINS: dict[str, str] = {
    "perfgym-core": "perfgym.tasks.suite:load_perfgym_core",
    "enamel": "perfgym.tasks.enamel:load_enamel",
    "humaneval": "perfgym.tasks.humaneval:load_humaneval",
    "humanevalplus": "perfgym.tasks.humaneval:load_humanevalplus",
}


class Suite(BaseModel):
    """A named, ordered set of tasks with unique ids."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Suite name (built-in name or directory name).")
    tasks: list[Task] = Field(description="Tasks in a stable order.")
    source: str = Field(description="Where it was loaded from: a path or 'builtin:<name>'.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Suite-level facts.")

    _index: dict[str, Task] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        index: dict[str, Task] = {}
        for task in self.tasks:
            if task.id in index:
                raise ValueError(f"suite {self.name!r}: duplicate task id {task.id!r}")
            index[task.id] = task
        self._index = index
        return self

    def __len__(self) -> int:
        return len(self.tasks)

    def ids(self) -> list[str]:
        """Task ids in suite order."""
        return [task.id for task in self.tasks]

    def get(self, task_id: str) -> Task:
        """The task with this id; KeyError naming the suite otherwise."""
        try:
            return self._index[task_id]
        except KeyError:
            raise KeyError(f"suite {self.name!r} has no task {task_id!r}") from None

    def split(self, name: Split | str) -> Suite:
        """The tasks of one split (train/val/test), as a suite named '<name>:<split>'."""
        try:
            split = Split(name)
        except ValueError:
            choices = ", ".join(s.value for s in Split)
            raise ConfigError(f"unknown split {name!r}; choose one of {choices}") from None
        return Suite(
            name=f"{self.name}:{split.value}",
            tasks=[task for task in self.tasks if task.split is split],
            source=self.source,
            metadata=self.metadata,
        )


def load_suite(spec: str | Path) -> Suite:
    """Load a suite from a built-in name or a path (see the module docstring)."""
    if isinstance(spec, str) and spec in BUILTINS:
        return _builtin_loader(spec)()
    path = Path(spec).expanduser()
    if path.is_file():
        if path.suffix == ".jsonl":
            from perfgym.tasks.native import load_jsonl

            return load_jsonl(path)
        raise ConfigError(f"cannot load a suite from file {path}: only a tasks .jsonl file is")
    if path.is_dir():
        return _load_directory(path)
    raise ConfigError(
        f"unknown suite {str(spec)!r}: not a built-in ({', '.join(BUILTINS)}) and no such path"
    )


def _load_directory(path: Path) -> Suite:
    from perfgym.tasks import native, perfcodebench

    if perfcodebench.is_executable_tasks_dir(path):
        return perfcodebench.load_perfcodebench(path)
    if perfcodebench.is_executable_tasks_dir(path / "executable_tasks"):
        return perfcodebench.load_perfcodebench(path / "executable_tasks")
    task_dirs = native.task_dirs(path)
    if not task_dirs and (path / "tasks.jsonl").is_file():
        return native.load_jsonl(path / "tasks.jsonl")
    return native.load_directory(path)


def _builtin_loader(name: str) -> Callable[[], Suite]:
    module_name, func_name = BUILTINS[name].split(":")
    loader: Callable[[], Suite] = getattr(importlib.import_module(module_name), func_name)
    return loader


def perfgym_core_candidates() -> list[Path]:
    """Where the `perfgym-core` suite is looked for, in order.

    Inside the installed package (`perfgym/suites/perfgym-core`, where package data would put
    it), then the source checkout's top-level `suites/perfgym-core` (src layout: three levels
    above this file).
    """
    package_dir = Path(__file__).resolve().parents[1]
    return [
        package_dir / "suites" / "perfgym-core",
        package_dir.parents[1] / "suites" / "perfgym-core",
    ]


def find_suite_dir(name: str, candidates: Sequence[Path]) -> Path:
    """The first existing directory among `candidates`; ConfigError naming them all otherwise."""
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"built-in suite {name!r} not found; searched: {searched}")


def load_perfgym_core() -> Suite:
    """perfgym's own suite, in perfgym's native format."""
    from perfgym.tasks.native import load_directory

    directory = find_suite_dir("perfgym-core", perfgym_core_candidates())
    suite = load_directory(directory, name="perfgym-core")
    return suite.model_copy(update={"source": f"builtin:perfgym-core ({directory})"})
