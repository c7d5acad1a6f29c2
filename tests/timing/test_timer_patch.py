"""Candidates that monkeypatch the timer their harness or caller reads: perfgym times from
outside the process, so the lie is exposed (harness tasks) or simply never read (function)."""

from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks import load_suite

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"


def test_a_harness_timer_running_slow_is_not_the_harnesss():
    """Subtler than a frozen clock: every interval the candidate's `time` measures reads a
    hundredth as long (half, when this test was written against the in-process harness). The
    candidate runs in a process of its own (perfgym_split.py): the harness's clock is not that
    one, and the candidate is timed as the baseline it is. (Was: the harness believed
    a ~2x speed-up, and the sandbox's clock flagged `harness_timer_mismatch`; that check is
    still what catches a compiled harness's clock: tests/judge/test_wrapper_flush_order.py.)"""
    task = load_suite(str(FIXTURES)).get("py_range_sums")
    cheat = (
        "import time\n"
        "_real = time.perf_counter_ns\n_t0 = _real()\n"
        "time.perf_counter_ns = lambda: _t0 + (_real() - _t0) // 100\n" + task.baseline.source
    )
    with Judge(JudgeConfig(repeats=5, measure_reference=False)) as judge:
        (v,) = judge.judge_many([Candidate(task, source=cheat, model="cheat")])
    assert v.stage is Stage.OK
    c, b = v.candidate, v.baseline
    assert c.clock == "harness" and c.estimate_s is not None and b.estimate_s is not None
    # the same work on the same clock: not the hundredth the patch would read (orders apart)
    assert c.estimate_s > 0.25 * b.estimate_s


_THIRD_SLOW = """
import time
from itertools import accumulate

_real, _hidden = time.perf_counter_ns, [0]
{patch}

def range_sums(values, queries):
    t0 = _real()
    third = len(queries) // 3  # the baseline's loop for a third of the queries, prefix sums after
    answers = [sum(values[i] for i in range(lo, hi)) for lo, hi in queries[:third]]
    _hidden[0] += _real() - t0
    prefix = [0, *accumulate(values)]
    return answers + [prefix[hi] - prefix[lo] for lo, hi in queries[third:]]
"""


def test_a_clock_hiding_its_slow_third_is_paid_no_more_than_the_same_program_unpatched():
    """The clock claims nearly the reference's time; the real saving is about two thirds of
    that, so each witness shows over the check's half of the claim and it passes (helper-52's
    attack: paid as the reference in 10 of 10 verdicts before the saving was paid as
    confirmed)."""
    task = load_suite(str(FIXTURES)).get("py_range_sums")
    honest = _THIRD_SLOW.format(patch="")
    cheat = _THIRD_SLOW.format(patch="time.perf_counter_ns = lambda: _real() - _hidden[0]")
    cands = [Candidate(task, source=s, model=m) for m, s in (("honest", honest), ("cheat", cheat))]
    with Judge(JudgeConfig(repeats=5, measure_reference=False)) as judge:
        h, c = judge.judge_many(cands)
    assert h.stage is Stage.OK and c.stage is Stage.OK
    assert h.candidate is not None and c.candidate is not None
    assert h.candidate.estimate_s is not None and c.candidate.estimate_s is not None
    if "harness_timer_mismatch" in c.flags:
        return  # denied outright: it earns no speed at all
    # (The honest program's own claim may be denied against a baseline round that ran fast;
    # its harness time is still the same work clocked honestly, the yardstick here.)
    # Paid the claim it read 0.05-0.09x the honest time; paid what the clocks confirm,
    # 0.55-1.34x (median 0.88) in the 18 of 25 verdicts the check let through here: rounds of
    # one program differ up to 2x on this VM, so no tight ratio.
    assert c.candidate.estimate_s > 0.3 * h.candidate.estimate_s


def test_a_function_patching_perf_counter_only_fools_its_own_report():
    honest = (
        "def solve(n):\n    s = 0\n    for i in range(n):\n        s += i * i % 7\n    return s\n"
    )
    cheat = "import time\ntime.perf_counter_ns = lambda: 0\n" + honest
    lim = Limits(wall_s=20, memory_mb=256)
    runs = {"honest": [], "cheat": []}
    with PythonWorkerPool(size=1) as pool:
        for _ in range(5):  # interleaved, so a load that comes and goes falls on both
            for name, src in (("honest", honest), ("cheat", cheat)):
                runs[name].append(pool.call(src, "solve", [300_000], lim))
    assert all(r.reported_call_s == 0 for r in runs["cheat"])  # the in-process clock lies
    assert all(r.reported_call_s > 0.005 for r in runs["honest"])
    med = {k: sorted(r.cpu_s for r in rs)[2] for k, rs in runs.items()}
    # The outside clock does not: the cheat's CPU is the same order as the honest run's
    # (the same loop; 1.35x once on a loaded CI machine, so no tight ratio), never near 0.
    assert med["cheat"] > 0.5 * med["honest"] > 0.0025
