"""A task needing PerfCodeBench's external/ folder builds and runs in the sandbox when the
folder is located elsewhere (--external): the run sees it at <root>/external."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig, Stage
from perfgym.judge.validate import validate_task
from perfgym.tasks import load_suite
from perfgym.tasks.perfcodebench_external import EXTERNAL_ENV

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench"
TREE = FIXTURES / "published" / "executable_tasks"
STUB = FIXTURES / "external_stub"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("task_id", ["cpp_utf8_count", "cpp_xxh_count"])
def test_external_task_builds_with_the_folder_elsewhere(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    task = load_suite(TREE, external=STUB, tasks=[task_id]).get(task_id)
    assert task.metadata["external"] == str(STUB.resolve())
    with Judge(JudgeConfig(repeats=1, cores=[0])) as judge:
        row = validate_task(judge, task)
    assert [c.stage for c in row.solutions] == [Stage.OK, Stage.OK], row
