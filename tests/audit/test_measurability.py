"""Measurability probes, each on a task built to fail it ("weak") and one built to pass it
("sound"), from the judge's own timings. Outcomes only: the probes' own statistics decide."""

from __future__ import annotations

import math

import pytest
from audit_tasks import SLOW_SUM, SUM, audit, sum_task

from perfgym.audit.measurability import detectable_ratio
from perfgym.audit.results import Outcome, Severity
from perfgym.tasks.task import Language, Oracle, Solution
from perfgym.tasks.timed import NOT_TIMED

#: A reference that does the baseline's work in a different spelling: no faster.
SLOW_TOO = SLOW_SUM.replace("t = 0", "t = 0  # the same loop")
#: Work of a random size per run (1x to 6x): its times spread wide.
NOISY = (
    "import os, sys\nd = sys.stdin.read().split()\nk = 1 + os.urandom(1)[0] % 6\nt = 0\n"
    "for _ in range(k):\n    for x in d[1:]:\n        t += int(x)\nprint(t // k)\n"
)


def test_headroom_weak_when_the_reference_is_no_faster_and_sound_when_it_is():
    same = audit(sum_task(hidden=True, references=[Solution(label="reference", source=SLOW_TOO)]),
                 ["headroom"]).result("headroom")  # fmt: skip
    assert same is not None and same.outcome is Outcome.WEAK, same
    assert same.severity in (Severity.HIGH, Severity.MEDIUM)
    fast = audit(sum_task(hidden=True), ["headroom"]).result("headroom")
    assert fast is not None and fast.outcome is Outcome.SOUND, fast
    assert fast.value is not None and fast.value > 2  # a 20x loop against the builtin


# The steady program's spread is measured: a round slowed by the other worker's test read a CV
# of 0.16 over 6 rounds in a full run (weak).
@pytest.mark.alone
def test_mde_weak_for_a_noisy_baseline_and_sound_for_a_steady_one_at_enough_repeats():
    noisy = audit(sum_task(hidden=True, baseline=Solution(label="baseline", source=NOISY)),
                  ["mde"], repeats=6).result("mde")  # fmt: skip
    assert noisy is not None and noisy.outcome is Outcome.WEAK, noisy
    assert noisy.value is not None and noisy.value > 1.2
    steady = audit(sum_task(hidden=True), ["mde"], repeats=6, mde_repeats=30).result("mde")
    assert steady is not None and steady.outcome is Outcome.SOUND, steady


def test_detectable_ratio_grows_with_spread_and_shrinks_with_repeats():
    assert detectable_ratio(0.0, 3, 0.03) == 1.03
    assert detectable_ratio(0.05, 3, 0.0) > detectable_ratio(0.05, 10, 0.0) > 1
    assert detectable_ratio(0.05, 1, 0.0) == math.inf


def test_resolution_weak_for_an_empty_program_and_sound_for_real_work():
    tiny = "int main(void){return 0;}\n"  # prints nothing: every case's expected output is ''
    c = sum_task(hidden=False, size=10, language=Language.C, tests=[
        t.model_copy(update={"expected": ""}) for t in sum_task(hidden=False).tests],
        baseline=Solution(label="baseline", source=tiny),
        references=[Solution(label="reference", source=tiny)])  # fmt: skip
    short = audit(c, ["resolution"]).result("resolution")
    assert short is not None and short.outcome is Outcome.WEAK, short
    loop = "import sys\nd = sys.stdin.read().split()\nt = 0\nfor x in d[1:]:\n    t += int(x)\nprint(t)\n"
    work = sum_task(hidden=True, size=100000, references=[Solution(label="reference", source=loop)])
    long = audit(work, ["resolution"]).result("resolution")
    assert long is not None and long.outcome is Outcome.SOUND, long
    assert long.figures["floor_s"] is not None


def test_determinism_weak_when_the_reference_prints_a_fresh_value_each_run():
    rand = "import os, sys\nsys.stdin.read()\nprint(os.urandom(4).hex())\n"
    task = sum_task(hidden=True, permissive=False, tests=[
        t.model_copy(update={"expected": None}) for t in sum_task(hidden=True).tests],
        references=[Solution(label="reference", source=rand)])  # fmt: skip
    r = audit(task, ["determinism"]).result("determinism")
    assert r is not None and r.outcome is Outcome.WEAK and r.severity is Severity.HIGH, r
    ok = audit(sum_task(hidden=True, size=2000), ["determinism"]).result("determinism")
    assert ok is not None and ok.outcome is Outcome.SOUND, ok


@pytest.mark.alone
def test_limit_margin_weak_under_a_tight_limit_and_sound_under_a_loose_one():
    big = sum_task(hidden=True, size=100000)
    loose = audit(big.model_copy(update={"time_limit_s": 60.0}), ["limit-margin"])
    r = loose.result("limit-margin")
    assert r is not None and r.outcome is Outcome.SOUND, r
    # Half the loose run's slowest: under 2x any run not 4x faster than that one (a loaded
    # machine varies a run 2x: 1.5x of it was 2.6x the next run's slowest in CI).
    limit = 0.5 * r.figures["slowest_s"]
    tight = audit(big.model_copy(update={"time_limit_s": limit}), ["limit-margin"])
    r = tight.result("limit-margin")  # weak: a margin under 2x, or the baseline timed out
    assert r is not None and r.outcome is Outcome.WEAK, r


def test_measurability_is_not_applicable_to_a_correctness_only_task():
    task = sum_task(hidden=False, workloads=[], metadata={NOT_TIMED: True})  # as HumanEval+'s
    a = audit(task, ["headroom", "mde", "resolution", "limit-margin", "honest-copies"])
    for r in a.results:
        assert r.outcome is Outcome.NOT_APPLICABLE and "correctness-only" in r.detail, r


def test_a_task_without_a_reference_has_no_headroom_probe():
    task = sum_task(hidden=True, size=2000, references=[])
    r = audit(task, ["headroom"]).result("headroom")
    assert r is not None and r.outcome is Outcome.NOT_APPLICABLE and "reference" in r.detail
    assert SUM  # the module's reference program, used by sum_task


def test_a_checker_that_accepts_nothing_is_reported():
    """The issue's 'checkers that accept nothing': the task's own reference fails it."""
    never = "def check(test_input, expected, output):\n    return False\n"
    task = sum_task(hidden=True, size=500, oracle=Oracle(kind="checker", checker=never))
    r = audit(task, ["determinism"]).result("determinism")
    assert r is not None and r.outcome is Outcome.WEAK and r.severity is Severity.HIGH, r
    assert "reference" in r.detail and "WO" in r.detail
