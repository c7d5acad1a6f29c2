"""A small suite for the training tests: cheap Python FUNCTION tasks in three families and
splits, each with a slow baseline, a fast reference and a graded pool."""

from __future__ import annotations

from pathlib import Path

from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase

SLOW_SUM = ("def total(n):\n    s = 0\n    for i in range(n):\n        for _ in range(3):\n"
            "            s += i\n    return s // 3\n")  # fmt: skip
MID_SUM = "def total(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"
FAST_SUM = "def total(n):\n    return n * (n - 1) // 2\n"
WRONG_SUM = "def total(n):\n    return n\n"


def sum_task(task_id: str, family: str, split: Split) -> Task:
    return Task(
        id=task_id,
        family=family,
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        entry_point="total",
        title=f"Sum below n ({task_id})",
        goal="Return the sum of the integers 0..n-1.",
        interface="def total(n: int) -> int",
        baseline=Solution(label="baseline", source=SLOW_SUM),
        references=[Solution(label="reference", source=FAST_SUM)],
        pool=[Solution(label="pool-1", source=MID_SUM, quality=1.0)],
        tests=[TestCase(id="t1", args=[10], expected=45), TestCase(id="t2", args=[0], expected=0)],
        workloads=[TestCase(id="w1", args=[200_000])],
        oracle=Oracle(kind="exact"),
        split=split,
    )


def write_suite(directory: Path) -> Path:
    """tasks.jsonl with sum-a (train, family a), sum-b (train, family b), sum-c (test, c)."""
    tasks = [sum_task("sum-a", "a", Split.TRAIN), sum_task("sum-b", "b", Split.TRAIN),
             sum_task("sum-c", "c", Split.TEST)]  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tasks.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    return path
