"""Training test helpers: the tasks the trainer tests use, fencing (the tiny model and its
tokenizer: tests/helpers/tiny_lm.py)."""

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

ADD = "def add(a, b):\n    return a + b\n"

#: Four perfgym-core Python tasks that judge in about a second each.
TASK_IDS = ["py-topk-words", "py-prefix-range-sums", "py-interval-merge", "py-substring-count"]


def fence(source: str) -> str:
    return f"```python\n{source}```\n"


def add_task() -> Task:
    """A Python FUNCTION task that judges in well under a second."""
    return Task(id="add", family="arith", language=Language.PYTHON, kind=TaskKind.FUNCTION,
                entry_point="add", goal="Return a + b.",
                baseline=Solution(label="baseline", source=ADD),
                references=[Solution(label="reference", source=ADD)],
                tests=[TestCase(id="t1", args=[1, 2], expected=3)],
                workloads=[TestCase(id="w1", args=[5, 6])], oracle=Oracle(kind="exact"))  # fmt: skip
