"""GRPO prompt datasets: one row per task of a split, with a chat `prompt` column and the columns
perfgym's rewards need (TRL's reward functions and verl's `compute_score` read the same rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perfgym.errors import ConfigError
from perfgym.tasks.suite import Suite
from perfgym.tasks.task import Task
from perfgym.train.prompt import rlpf_messages

__all__ = ["GRPO_COLUMNS", "PROMPTS", "check_family_disjoint", "grpo_rows", "require_columns"]

#: What a prompt kind turns a task into: chat messages.
PROMPTS = {"rlpf": rlpf_messages}

#: The columns every GRPO row has (verl reads data_source, prompt, reward_model, extra_info;
#: TRL passes task_id and the others to the reward functions as keyword arguments).
GRPO_COLUMNS = ("prompt", "task_id", "suite", "language", "family", "split", "data_source",
                "ability", "reward_model", "extra_info")  # fmt: skip


def check_family_disjoint(suite: Suite) -> None:
    """Splits are family-disjoint (no family in two splits): a ConfigError naming the first
    family that is not, so a prompt set never leaks a test family into training."""
    seen: dict[str, str] = {}
    for task in suite.tasks:
        other = seen.setdefault(task.family, task.split.value)
        if other != task.split.value:
            raise ConfigError(f"suite {suite.name!r}: family {task.family!r} is in both the "
                              f"{other} and {task.split.value} splits (task {task.id!r}); "
                              "splits must be family-disjoint")  # fmt: skip


def _messages(prompt: str, task: Task) -> list[dict[str, str]]:
    try:
        make = PROMPTS[prompt]
    except KeyError:
        raise ConfigError(f"unknown prompt {prompt!r}; choose one of "
                          f"{', '.join(sorted(PROMPTS))}") from None  # fmt: skip
    return make(task)


def grpo_rows(suite: Suite, split: str | None, *, prompt: str = "rlpf",
              data_source: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """One row per task of `split` (None: every task). `data_source` is what the verl adapter
    loads the suite from (default: the suite's name; give its path for a suite on disk)."""
    check_family_disjoint(suite)
    chosen = suite.split(split) if split else suite
    if not chosen.tasks:
        raise ConfigError(f"suite {suite.name!r} has no tasks in split {split!r}")
    source = data_source or suite.name
    rows = []
    for index, task in enumerate(chosen.tasks):
        rows.append({
            "prompt": _messages(prompt, task),
            "task_id": task.id,
            "suite": suite.name,
            "language": task.language.value,
            "family": task.family,
            "split": task.split.value,
            "data_source": source,
            "ability": "code-optimization",
            "reward_model": {"style": "perfgym", "ground_truth": task.id},
            "extra_info": {"task_id": task.id, "index": index, "split": task.split.value,
                           "language": task.language.value, "prompt": prompt},
        })  # fmt: skip
    return rows


def require_columns(columns: Sequence[str], needed: Sequence[str], what: str) -> None:
    """A ConfigError naming every needed column a dataset lacks."""
    missing = [c for c in needed if c not in set(columns)]
    if missing:
        raise ConfigError(f"{what} lacks the column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)} (it has {', '.join(columns) or 'none'})")  # fmt: skip
