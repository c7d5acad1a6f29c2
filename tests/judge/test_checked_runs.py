"""Measured runs are checked runs, and Python stdio tests run in warm workers (program mode)."""

import os

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.tasks.task import Language, TestCase

CORRECT = PROGRAMS[Language.PYTHON][0]
# Correct unless pinned to one core, as measured runs are in timing mode: a program that
# behaves one way when checked and another when timed.
PINNED_CHEAT = (
    "import os, sys\nif len(os.sched_getaffinity(0)) == 1:\n    print(0)\n    sys.exit(0)\n"
    + CORRECT
)
PINNED_CRASH = (
    "import os\nif len(os.sched_getaffinity(0)) == 1:\n    raise SystemExit(7)\n" + CORRECT
)
WRONG_ON_W2 = (
    "import sys\nd = sys.stdin.read().split()\ns = sum(map(int, d[1:]))\nprint(s + (s > 100))\n"
)

needs_two_cores = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="correctness runs must float over two cores"
)


def two_workloads():
    task = sum_task(Language.PYTHON)
    return task.model_copy(update={"id": "sum-python-2w", "workloads": [
        TestCase(id="w1", stdin="4\n10 20 30 40\n"), TestCase(id="w2", stdin="5\n1 1 1 1 100\n")
    ]})  # fmt: skip


@needs_two_cores
def test_a_program_wrong_only_when_timed_is_wo(judge):
    (v,) = judge.judge_many([Candidate(two_workloads(), source=PINNED_CHEAT, model="cheat")])
    assert (v.stage, v.detail) == (Stage.WO, "WRONG_OUTPUT"), v.reason
    assert v.reason.startswith("w1:") and v.candidate is None
    assert [(t.id, t.passed) for t in v.tests] == [("t1", True), ("t2", True), ("w1", False)]


@needs_two_cores
def test_a_program_failing_only_when_timed_is_nr(judge):
    (v,) = judge.judge_many([Candidate(two_workloads(), source=PINNED_CRASH, model="crash")])
    assert (v.stage, v.detail) == (Stage.NR, "RUNTIME_ERROR"), v.reason
    assert v.reason.startswith("w1: exit code 7") and v.candidate is None
    assert v.tests[-1].id == "w1" and v.tests[-1].status.value == "RUNTIME_ERROR"


def test_the_first_failing_workload_is_reported(judge):
    (v,) = judge.judge_many([Candidate(two_workloads(), source=WRONG_ON_W2, model="w2")])
    assert (v.stage, v.detail) == (Stage.WO, "WRONG_OUTPUT") and v.reason.startswith("w2:")
    assert [(t.id, t.passed) for t in v.tests] == [("t1", True), ("t2", True), ("w1", True),
                                                   ("w2", False)]  # fmt: skip
    assert v.candidate is None


def test_a_correct_program_is_timed_with_every_workload_listed():
    config = JudgeConfig(repeats=2, measure_baseline=False)
    with Judge(config) as judge:
        cands = [Candidate(two_workloads(), source=CORRECT, model="ok", sample=k) for k in (0, 1)]
        cands.append(Candidate(two_workloads(), source=WRONG_ON_W2, model="wrong"))
        ok, ok2, wrong = judge.judge_many(cands)
    for v in (ok, ok2):
        assert v.stage is Stage.OK, v.reason
        assert [t.id for t in v.tests] == ["t1", "t2", "w1", "w2"] and all(
            t.passed for t in v.tests
        )
        assert v.candidate is not None and len(v.candidate.samples_s) == 2
    assert wrong.stage is Stage.WO and wrong.candidate is None
    assert ok.reference is not None and ok.reference.status.value == "ok"  # unchecked, timed


def test_deterministic_mode_checks_workloads_before_measuring():
    """clock='instructions' counts with Valgrind outside these run functions: the workloads are
    checked by a separate run first, as before."""
    config = JudgeConfig(clock="instructions", repeats=1, measure_baseline=False,
                         measure_reference=False)  # fmt: skip
    with Judge(config) as judge:
        (v,) = judge.judge_many([Candidate(two_workloads(), source=WRONG_ON_W2, model="w2")])
    assert (v.stage, v.detail) == (Stage.WO, "WRONG_OUTPUT") and v.reason.startswith("w2:")
    assert [t.id for t in v.tests] == ["t1", "t2", "w1", "w2"]


def test_python_tests_run_in_warm_workers(judge):
    task = two_workloads()
    before = sum(w.calls for w in judge.workers.workers)
    (v,) = judge.judge_many([Candidate(task, source=CORRECT, model="warm")])
    assert v.stage is Stage.OK, v.reason
    # One program-mode run per test; workloads (expected outputs, measured runs) are sandboxed.
    assert sum(w.calls for w in judge.workers.workers) - before == len(task.tests)
