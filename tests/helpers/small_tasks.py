"""Tiny real tasks several test directories judge (store, service, cli): one definition each."""

from __future__ import annotations

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
SLOW_SUM = (
    "import sys\nd = sys.stdin.read().split()\nt = 0\nfor x in d[1:]:\n    t += int(x)\nprint(t)\n"
)


def sum_task(task_id: str = "sum") -> Task:
    """A Python stdio task: sum n integers; baseline SLOW_SUM, reference SUM."""
    return Task(
        id=task_id,
        family="parsing",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        goal="Print the sum of n integers.",
        baseline=Solution(label="baseline", source=SLOW_SUM),
        references=[Solution(label="reference", source=SUM)],
        tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
        workloads=[TestCase(id="w1", stdin="4\n10 20 30 40\n")],
        oracle=Oracle(kind="tokens"),
    )
