"""The judge on PerfCodeBench-layout fixtures: harness verdicts, CUDA, and a patched timer."""

from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.validate import validate_suite
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"


@pytest.fixture(scope="module")
def suite():
    return load_suite(str(FIXTURES))


def test_validate_reproduces_harness_verdicts(suite):
    with Judge(JudgeConfig(repeats=5)) as judge:
        rows = {r.task_id: r for r in validate_suite(judge, list(suite.tasks))}
    for lang in ("c_popcount_sum", "cpp_topk_sum", "go_group_sum", "java_distinct_count",
                 "py_range_sums"):  # fmt: skip
        r = rows[lang]
        assert r.ok, (lang, r.problems)
        assert all(c.stage is Stage.OK for c in r.solutions)
        assert r.speedup and r.speedup > 1 and r.comparison and r.comparison.faster == "a"
    cuda = rows["cuda_sum_reduce"]
    assert not cuda.ok and "needs a GPU" in cuda.skipped and not cuda.problems


def test_wrong_answer_reported_by_the_harness_is_wo(suite):
    task = suite.get("py_range_sums")
    wrong = "def range_sums(values, queries):\n    return [0 for _ in queries]\n"
    with Judge(JudgeConfig(repeats=1, measure_reference=False, measure_baseline=False)) as judge:
        (v,) = judge.judge_many([Candidate(task, source=wrong, model="m")])
    assert v.stage is Stage.WO


@pytest.mark.alone
def test_a_candidates_patched_clock_is_not_its_harnesss(suite):
    """The candidate monkeypatches the clock its harness reads: it runs in a process of its own
    (perfgym_split.py), so the patch is that process's, and the harness times the baseline's
    loop it is with its own clock. (A harness whose own clock lies is caught by the sandbox's
    clock: tests/tasks/test_perfcodebench_clock.py, tests/judge/test_wrapper_flush_order.py.)"""
    task = suite.get("py_range_sums")
    cheat = (
        "import time\n"
        "_ticks = iter(range(0, 10**9, 1000))\n"
        "time.perf_counter_ns = lambda: next(_ticks)  # every interval now reads 1 microsecond\n"
        + task.baseline.source
    )
    # One lane (core 0), 5 interleaved rounds (the variants never share the machine's cores).
    with Judge(JudgeConfig(repeats=5, measure_reference=False, cores=[0])) as judge:
        (v,) = judge.judge_many([Candidate(task, source=cheat, model="cheat")])
    assert v.stage is Stage.OK
    assert v.candidate is not None and v.baseline is not None
    assert v.candidate.clock == "harness" and v.candidate.estimate_s is not None
    # the baseline's own time, not the 1 microsecond per interval the patch would read (orders
    # of magnitude apart: no tight ratio on a loaded machine)
    assert v.candidate.estimate_s > 0.1 * (v.baseline.estimate_s or 0) > 1e-4
