"""Correctness tests' time limits relative to the task's own solutions' measured time."""

import time

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, stages
from perfgym.judge.references import ExpectedOutputs
from perfgym.tasks.task import Language, Solution

SUM = PROGRAMS[Language.PYTHON][0]
LOOP = "while True:\n    pass\n"


def sleeping(seconds: float) -> str:
    """The correct sum program, `seconds` slower."""
    return f"import time\ntime.sleep({seconds})\n{SUM}"


def spinning(seconds: float) -> str:
    """The correct sum program after `seconds` of CPU (a slow program, not a sleeping one)."""
    return (f"import time\nt0 = time.process_time()\n"
            f"while time.process_time() - t0 < {seconds}:\n    pass\n{SUM}")  # fmt: skip


def task_with(limit_s: float = 10.0, baseline: str = SUM, tag: str = ""):
    task = sum_task(Language.PYTHON)
    return task.model_copy(update={"id": f"sum-limits-{tag}", "time_limit_s": limit_s,
                                   "baseline": Solution(label="baseline", source=baseline)})  # fmt: skip


@pytest.fixture(scope="module")
def judge():
    # a 5x wall backstop (the default is 10x): the sleeper below is cut sooner
    config = JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False,
                         test_time_factor=4.0, test_time_floor_s=1.0, wall_backstop=5.0)  # fmt: skip
    with Judge(config) as j:
        yield j


def test_an_infinite_loop_times_out_at_the_relative_limit_not_the_task_limit(judge):
    task = task_with(10.0, tag="loop")
    judge.judge_many([Candidate(task, source=SUM, model="warm")])  # workers up, own runs made
    (v,) = judge.judge_many([Candidate(task, source=LOOP, model="loop")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    assert "test limit 1.00 s = max(1 s, 4 x the" in v.reason, v.reason
    # Cut at the relative limit, on CPU (a clock load does not stretch): about 1 s of CPU, not
    # the task's 10 s. Under heavy load the wall backstop (5 x) may cut it first, with less CPU.
    spent = max(t.cpu_s or 0.0 for t in v.tests)
    assert 0.5 <= spent < 0.4 * 10.0 or "wall time over" in v.reason, v.tests


def test_a_slow_baseline_like_candidate_within_the_factor_passes(judge):
    """The limit is relative to the slower of the reference and the baseline: a copy of a slow
    baseline is correct, and one far slower than both times out, well before the task limit."""
    task = task_with(10.0, baseline=spinning(0.4), tag="slow-baseline")
    like_baseline = spinning(0.4) + "# a copy\n"
    within = spinning(0.8)  # 2x the baseline: inside 4x
    beyond = spinning(6.0)  # 15x the baseline, under the task limit
    vs = judge.judge_many([Candidate(task, source=s, model=m, sample=k) for k, (m, s) in
                           enumerate([("copy", like_baseline), ("within", within),
                                      ("beyond", beyond)])])  # fmt: skip
    by = {v.model: v for v in vs}
    assert by["copy"].stage is Stage.OK, by["copy"].reason
    assert by["within"].stage is Stage.OK, by["within"].reason
    assert (by["beyond"].stage, by["beyond"].detail) == (Stage.NR, "TIMEOUT")
    assert "the baseline's" in by["beyond"].reason, by["beyond"].reason
    # Which clock cut it depends on the load (the CPU limit idle, the 5 x wall backstop on a
    # busy machine); either way it says so, and it was cut long before its 6 s of CPU.
    why = by["beyond"].reason
    assert "CPU time over" in why or "wall time over" in why, why
    spent = max(t.cpu_s or 0.0 for t in by["beyond"].tests)
    assert 0.1 < spent < 6.0, by["beyond"].tests


def test_a_sleeping_candidate_is_cut_at_the_wall_limit(judge):
    """A candidate that blocks uses no CPU: the wall limit (5 x the CPU limit) stops it."""
    task = task_with(10.0, tag="sleeper")
    (v,) = judge.judge_many([Candidate(task, source=sleeping(8.0), model="sleeper")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    assert "wall time over 5" in v.reason, v.reason


def test_the_baseline_and_reference_are_measured_under_the_task_limit():
    """Their own measured runs (workloads) are never cut by the tests' relative limit."""
    task = task_with(10.0, baseline=sleeping(1.5), tag="own-measured")
    # noise_rounds=0: no A/A band (ten more runs of the 1.5 s baseline); no speed is decided here
    config = JudgeConfig(repeats=1, noise_rounds=0, test_time_factor=0.1, test_time_floor_s=0.2)
    with Judge(config) as j:
        (v,) = j.judge_many([Candidate(task, source=SUM, model="m")])
    assert v.stage is Stage.OK, v.reason
    assert v.baseline is not None and v.baseline.ok, v.baseline
    assert v.baseline.estimate_s is not None and v.baseline.external_wall_s >= 1.5
    assert v.reference is not None and v.reference.ok


def test_no_factor_means_the_task_limit():
    task = task_with(3.0, tag="no-factor")
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False,
                           test_time_factor=None)) as j:  # fmt: skip
        t0 = time.perf_counter()
        (v,) = j.judge_many([Candidate(task, source=LOOP, model="loop")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT")
    assert time.perf_counter() - t0 >= 3.0
    assert "test limit" not in v.reason


def test_a_candidate_cannot_set_its_own_limit(judge, monkeypatch):
    """Can a cheaper program score higher? Not by moving its limit: the own solutions' runs that
    set it are all made before any candidate of the task runs a test, and a batch of slow and
    looping candidates leaves them as they were."""
    events: list[str] = []
    run_of, run_tests = ExpectedOutputs.run_of, stages.run_tests

    def own(self, plan, label, case):
        events.append(f"own:{label}:{case.id}")
        return run_of(self, plan, label, case)

    def cand(plan, entry, expected, limits=None):
        events.append("candidate")
        return run_tests(plan, entry, expected, limits)

    monkeypatch.setattr(ExpectedOutputs, "run_of", own)
    monkeypatch.setattr(stages, "run_tests", cand)
    task = task_with(10.0, tag="order")
    burner = "import os\nfor _ in range(os.cpu_count() or 2):\n    os.fork()\nwhile True: pass\n"
    judge.judge_many([Candidate(task, source=s, model=m) for m, s in
                      [("loop", LOOP), ("burn", burner), ("ok", SUM)]])  # fmt: skip
    first = events.index("candidate")
    assert {"own:reference:t1", "own:baseline:t1", "own:reference:t2", "own:baseline:t2"} <= set(
        events[:first]
    ), events
    kept = dict(judge._expected._runs)
    judge.judge_many([Candidate(task, source=s, model=m) for m, s in
                      [("loop", LOOP), ("burn", burner)]])  # fmt: skip
    assert judge._expected._runs == kept  # nothing a candidate ran changed the times


def test_a_limit_is_never_above_the_task_limit(judge):
    """A slow own solution gives no candidate more than the task's limit."""
    task = task_with(0.6, baseline=spinning(0.3), tag="cap")
    (v,) = judge.judge_many([Candidate(task, source=LOOP, model="loop")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT")
    assert "test limit" not in v.reason  # 4 x 0.3 s of CPU > 0.6 s: the task's limit applies


@pytest.mark.parametrize("bad", [{"test_time_factor": 0}, {"test_time_factor": -4},
                                 {"test_time_floor_s": 0}, {"test_time_factor": "fast"}])  # fmt: skip
def test_malformed_limits_are_refused(bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        JudgeConfig(**bad)
