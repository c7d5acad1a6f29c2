"""`materialize`: size/seed cases of native tasks become concrete stdin or arguments."""

from __future__ import annotations

import pytest

from perfgym.errors import TaskFormatError
from perfgym.tasks import Solution, Task, TaskKind, TestCase, materialize, materialize_all

GENERATOR = (
    "import random\n\n"
    "def generate(size, seed):\n"
    "    rng = random.Random(seed)\n"
    "    values = [rng.randint(0, 99) for _ in range(size)]\n"
    "    return VALUE\n"
)


def _task(kind: TaskKind, generator: str | None, value: str = "values") -> Task:
    return Task(
        id="gen",
        family="gen",
        language="python",
        kind=kind,
        entry_point="f" if kind is TaskKind.FUNCTION else None,
        baseline=Solution(label="baseline", source="def f(xs): return sum(xs)\n"),
        tests=[TestCase(id="lit", stdin="1\n", args=[[1]], expected="1\n")],
        workloads=[TestCase(id="w", size=5, seed=3)],
        generator=None if generator is None else generator.replace("VALUE", value),
    )


def test_stdio_and_function_generation_is_deterministic() -> None:
    stdio = _task(TaskKind.STDIO, GENERATOR, "' '.join(map(str, values))")
    first = materialize(stdio, stdio.workloads[0])
    assert first.stdin and first.stdin == materialize(stdio, stdio.workloads[0]).stdin
    assert len(first.stdin.split()) == 5 and first.size == 5 and first.id == "w"
    function = _task(TaskKind.FUNCTION, GENERATOR, "(values,)")
    case = materialize(function, function.workloads[0])
    assert case.args is not None and len(case.args) == 1 and len(case.args[0]) == 5
    assert stdio.workloads[0].stdin == ""  # the task itself is not modified


def test_literal_cases_are_returned_unchanged() -> None:
    task = _task(TaskKind.STDIO, GENERATOR, "'x'")
    assert materialize(task, task.tests[0]) is task.tests[0]
    assert [c.id for c in materialize_all(task, [*task.tests, *task.workloads])] == ["lit", "w"]


def test_generator_problems_are_task_format_errors() -> None:
    with pytest.raises(TaskFormatError, match="has no generator"):
        materialize(_task(TaskKind.STDIO, None), TestCase(id="w", size=1, seed=1))
    wrong_type = _task(TaskKind.STDIO, GENERATOR, "values")
    with pytest.raises(TaskFormatError, match="must return stdin text, got list"):
        materialize(wrong_type, wrong_type.workloads[0])
    not_args = _task(TaskKind.FUNCTION, GENERATOR, "'text'")
    with pytest.raises(TaskFormatError, match="argument list"):
        materialize(not_args, not_args.workloads[0])
    broken = _task(TaskKind.STDIO, "def generate(size, seed):\n    return (\n")
    with pytest.raises(TaskFormatError, match="generator does not load"):
        materialize(broken, broken.workloads[0])
    nameless = _task(TaskKind.STDIO, "def make(size, seed):\n    return ''\n")
    with pytest.raises(TaskFormatError, match="defines no generate"):
        materialize(nameless, nameless.workloads[0])
