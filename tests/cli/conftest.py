"""CLI test fixtures; cli_helpers.py importable, and the builders the CLI tests borrow from the
tests of the layers each command drives (report_data.py, sim_data.py), under importlib mode."""

import os
import sys

import pytest

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _name in ("cli", "report", "simulate"):
    sys.path.insert(0, os.path.join(_TESTS, _name))

pytest.register_assert_rewrite("cli_helpers")

from small_tasks import SUM  # noqa: E402

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase  # noqa: E402


@pytest.fixture
def suite(tmp_path):
    """A one-task suite directory (tasks.jsonl) whose baseline and reference both pass."""
    d = tmp_path / "suite"
    d.mkdir()
    task = Task(id="sum-a", family="parsing", language=Language.PYTHON, kind=TaskKind.STDIO,
                goal="Sum.", baseline=Solution(label="baseline", source=SUM),
                references=[Solution(label="reference", source=SUM)],
                tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
                workloads=[TestCase(id="w1", stdin="2\n1 2\n")],
                oracle=Oracle(kind="tokens"))  # fmt: skip
    (d / "tasks.jsonl").write_text(task.model_dump_json() + "\n")
    return d
