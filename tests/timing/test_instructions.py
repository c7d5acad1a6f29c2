"""Deterministic mode on this host (no hardware counters here): Valgrind instruction counts,
through the judge for stdio and function tasks, and a program tampering with the counts."""

import shutil

import pytest

from helpers import function_task, graded_task, loop_program
from perfgym.judge import Candidate, Judge, JudgeConfig, TimingStatus
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.warm import WarmSandbox
from perfgym.timing import instructions

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="Valgrind is not installed"),
]


def test_counts_are_identical_across_repeats_and_scale_with_work():
    task = graded_task("counted", passes=[1, 2], sizes=[100_000, 200_000])
    config = JudgeConfig(clock="instructions", repeats=2)
    with Judge(config) as judge:
        (v,) = judge.judge_many([Candidate(task, source=loop_program(1), model="m")])
    c, b = v.candidate, v.baseline
    assert c.status is TimingStatus.OK and c.clock == "instructions"
    assert c.cv == 0.0 and len(set(c.samples_s)) == 1  # deterministic: no spread at all
    assert c.instructions == c.estimate_s
    per_w = c.per_workload_s
    assert 1.3 < per_w["w200000"] / per_w["w100000"] < 2.0  # work doubles; start-up stays fixed
    assert 1.3 < b.estimate_s / c.estimate_s < 2.0  # two passes vs one, same start-up


def test_function_tasks_are_counted_in_a_fresh_interpreter():
    src = "def solve(n):\n    return sum(i * i % 7 for i in range(n))\n"
    task = function_task("counted-calls", src, src, n=50_000)
    with Judge(JudgeConfig(clock="instructions", repeats=2, measure_baseline=False)) as judge:
        (v,) = judge.judge_many([Candidate(task, source=src, model="m")])
    assert v.candidate.status is TimingStatus.OK and v.candidate.cv == 0.0
    assert v.candidate.estimate_s == v.reference.estimate_s  # the same program, the same count


def test_a_forged_total_is_overwritten_and_hiding_everything_is_refused():
    work = "s = 0\nfor i in range(300000):\n    s += i\n"
    forge = work + "open('/tmp/.perfgym-instructions', 'w').write('1 1')\n"
    lim = Limits(wall_s=30, memory_mb=256)
    with WarmSandbox() as sb:
        honest = instructions.count(sb, ["python3", "-S", "main.py"], files={"main.py": work},
                                    limits=lim)  # fmt: skip
        forged = instructions.count(sb, ["python3", "-S", "main.py"], files={"main.py": forge},
                                    limits=lim)  # fmt: skip
        # A wrapped program that leaves no count at all (it deletes the directory Valgrind
        # writes to) is refused, never reported as a number.
        gone = instructions.count(sb, ["sh", "-c", "rm -rf /tmp/.perfgym-vg; exec sleep 0"],
                                  limits=lim)  # fmt: skip
    assert honest.instructions is not None and honest.processes == 1, honest.error
    assert forged.instructions is not None  # the forged total was overwritten by the wrapper
    assert abs(forged.instructions - honest.instructions) < 0.01 * honest.instructions
    assert gone.instructions is None and gone.error
