"""Deterministic mode's counted runs are checked runs for every kind of task (red team
helper-94, /work/wt/rt94).

With `clock="instructions"` a function task's counted runs were a driver that threw the call's
value away, and their outputs were not checked (only a separate run was). A candidate that
told it was counted (the driver's argv, the wrapper's PYTHONHASHSEED) returned 0 there and did
the work everywhere else: OK, 85 million instructions against its honest twin's 759 million,
RLPF 1.26 against 0.15. The driver now prints the value and the counted run is judged on it.
"""

from __future__ import annotations

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.tasks.task import Solution, Task, TestCase
from perfgym.timing import instructions

pytestmark = pytest.mark.skipif(
    instructions.backend()[0] is None, reason="no way to count instructions on this host"
)

_WORK = """
def total(n):
    s = 0
    for i in range(n):
        for j in range(20):
            s += (i * j) % 7
    return s
"""
#: The same work, but 0 when its process is the counting driver.
CHEAT = (
    "import os, sys\n"
    "_COUNTED = os.environ.get('PYTHONHASHSEED') == '0' and sys.argv[:1] == ['/tmp/driver.py']\n"
    + _WORK.replace("    s = 0\n", "    if _COUNTED:\n        return 0\n    s = 0\n", 1)
)


@pytest.fixture(scope="module")
def task() -> Task:
    return Task(id="counted-fn", family="counted", language="python", kind="function",
                entry_point="total", baseline=Solution(label="baseline", source=_WORK),
                references=[Solution(label="reference", source=_WORK)],
                tests=[TestCase(id=f"t{k}", args=[k]) for k in (0, 1, 5, 17)],
                workloads=[TestCase(id="w1", args=[3000])], oracle={"kind": "exact"},
                time_limit_s=20)  # fmt: skip


def test_a_program_that_skips_its_work_when_counted_is_wrong(task) -> None:
    with Judge(JudgeConfig(repeats=1, clock="instructions")) as judge:
        honest, cheat = judge.judge_many([Candidate(task, source=_WORK, model="honest"),
                                          Candidate(task, source=CHEAT, model="cheat")])  # fmt: skip
    assert honest.stage.value == "OK" and honest.candidate.instructions > 10_000_000
    assert cheat.stage.value == "WO", (cheat.stage, cheat.reason)
    assert cheat.candidate is None


def test_the_value_line_is_the_drivers_last(tmp_path) -> None:
    assert instructions.returned_value(b"noise\nperfgym-value:[1, 2]\n") == [1, 2]
    for bad in (b"perfgym-value:[1]\nprinted after\n", b"", b"perfgym-value:{not json"):
        with pytest.raises(ValueError):
            instructions.returned_value(bad)
