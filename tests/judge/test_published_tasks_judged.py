"""Tasks loaded from published schemas run through the real judge: EvalPerf (a function timed
on its performance input) and EffiBench-X (a stdin/stdout program checked by the record's own
evaluator): the benchmark's own solution passes, a wrong one does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig, Stage
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "published"


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=1, noise_rounds=0)) as j:
        yield j


def test_evalperf_task_judged(judge) -> None:  # type: ignore[no-untyped-def]
    task = load_suite(FIXTURES / "evalperf.jsonl").get("Mbpp/4")
    good = judge.judge(task, source=task.pool[1].source, model="m")
    assert good.stage is Stage.OK, good.reason
    wrong = "def heap_queue_largest(nums, n):\n    return sorted(nums)[:n]\n"
    bad = judge.judge(task, source=wrong, model="m")
    assert bad.stage is Stage.WO, bad.reason


def test_effibench_x_io_task_judged_by_its_evaluator(judge) -> None:  # type: ignore[no-untyped-def]
    task = load_suite(FIXTURES / "effibench_x.jsonl").get("codeforces_1900A_sum-of-pairs")
    good = judge.judge(task, source=task.baseline.source, model="m")
    assert good.stage is Stage.OK, good.reason
    # Same tokens laid out differently: the record's evaluator compares tokens, so it passes.
    spaced = task.baseline.source.replace("'\\n'.join", "'  '.join")
    assert judge.judge(task, source=spaced, model="m").stage is Stage.OK
    off_by_one = task.baseline.source.replace("int(d[2 + 2 * i])", "int(d[2 + 2 * i]) + 1")
    bad = judge.judge(task, source=off_by_one, model="m")
    assert bad.stage is Stage.WO, bad.reason
