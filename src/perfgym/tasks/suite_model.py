"""`Suite`: a named, ordered set of tasks; the model every loader returns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from perfgym.errors import ConfigError
from perfgym.tasks.task import Split, Task


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
