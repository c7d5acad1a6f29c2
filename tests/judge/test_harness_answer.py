"""A harness's answer checked outside the program (`perfgym.judge.harness_answer`): the fields
of its line beyond ok and the times must equal the reference's where the reference's and the
baseline's agree; a harness whose own check is loose does not let a wrong answer through."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.harness_answer import agreed, answer_fields, mismatch
from perfgym.tasks import load_suite
from perfgym.tasks.timed import NOT_TIMED

FIXTURES = (
    Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/answer_check/executable_tasks"
)


def test_only_answer_named_fields_are_answers():
    line = {"ok": True, "elapsed_ns": 5, "wall_time_ms": 1.0, "actual_time_s": 2,
            "compressed_size": 3, "actual_sum": 7, "expected_sum": 7, "checksum": 1,
            "row_hash": 2, "hashes": 3}  # fmt: skip
    assert answer_fields(line) == {"actual_sum": 7, "expected_sum": 7, "checksum": 1,
                                   "row_hash": 2}  # fmt: skip


def test_only_fields_the_reference_and_the_baseline_agree_on_are_checked():
    want = agreed({"sum": 7, "seed": 1, "n": 3}, {"sum": 7, "seed": 2, "n": 3})
    assert want.fields == {"sum": 7, "n": 3} and want.describe() == "checked: n, sum"
    assert mismatch(want, {"sum": 7, "n": 3, "other": 0}) == ""
    assert "sum = 8" in mismatch(want, {"sum": 8, "n": 3})
    assert "no 'n'" in mismatch(want, {"sum": 7})
    assert mismatch(want, {"sum": 7.0, "n": 3})  # another type is another answer
    none = agreed({"seed": 1}, {"seed": 2})
    assert not none.fields and none.describe().startswith("not checked:")
    assert mismatch(none, {}) == ""


@pytest.fixture(scope="module")
def verdicts():
    (task,) = load_suite(FIXTURES).tasks
    task = task.model_copy(update={"metadata": {**task.metadata, NOT_TIMED: True}})
    wrong = "def total(values):\n    return 0\n"
    with Judge(JudgeConfig(repeats=1)) as j:
        return j.judge_many([Candidate(task, source=wrong, model="wrong"),
                             Candidate(task, source=task.references[0].source, model="ref"),
                             Candidate(task, source=task.baseline.source, model="base")])  # fmt: skip


def test_a_wrong_answer_the_harness_calls_ok_is_wo(verdicts):
    wrong = verdicts[0]
    assert wrong.stage is Stage.WO, wrong.reason
    assert "actual_total = 0" in wrong.reason
    assert wrong.harness_answer == "checked: actual_total"


def test_the_task_own_solutions_pass_the_check(verdicts):
    for v in verdicts[1:]:
        assert v.stage is Stage.OK, v.reason
        assert v.harness_answer == "checked: actual_total"
