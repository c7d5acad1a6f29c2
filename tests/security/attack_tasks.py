"""Small real tasks the attack tests judge: built in code, each a few lines of its own."""

from __future__ import annotations

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

SUM_SQUARES_REFERENCE = "def f(n):\n    return (n - 1) * n * (2 * n - 1) // 6\n"


def function_task(
    task_id: str,
    goal: str,
    baseline: str,
    reference: str,
    tests: list[tuple[list, object]],
    workloads: list[list],
) -> Task:
    """A Python FUNCTION task with entry point `f`, exact oracle, tests given as (args, expected)
    and workloads as argument lists."""
    return Task(
        id=task_id,
        family="math",
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        entry_point="f",
        goal=goal,
        baseline=Solution(label="baseline", source=baseline),
        references=[Solution(label="reference", source=reference)],
        tests=[TestCase(id=f"t{k}", args=a, expected=e) for k, (a, e) in enumerate(tests, 1)],
        workloads=[TestCase(id=f"w{k}", args=a) for k, a in enumerate(workloads, 1)],
        oracle=Oracle(kind="exact"),
    )


def sum_squares_task(task_id: str, baseline: str, workloads: list[int]) -> Task:
    """Sum of i*i for i below n: the reference is the closed form."""
    return function_task(task_id, "Return the sum of i*i for i below n.", baseline,
                         SUM_SQUARES_REFERENCE, [([10], 285), ([0], 0)],
                         [[n] for n in workloads])  # fmt: skip
