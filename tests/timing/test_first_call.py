"""Anti-caching: a Python candidate that caches its answer across calls in one process.

The judge times every run in a fresh worker child, so the cache never survives into a timed
run and the candidate gains nothing; the first-call check still reports the gap a harness
that repeats calls in one process would have been fooled by."""

import pytest

from helpers import function_task
from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.timing.compare import compare
from perfgym.timing.first_call import FirstCallConfig

HONEST = "def solve(n):\n    s = 0\n    for i in range(n):\n        s += i * i % 7\n    return s\n"
CACHED = (
    "_memo = {}\n"
    "def solve(n):\n"
    "    if n in _memo:\n        return _memo[n]\n"
    "    s = 0\n    for i in range(n):\n        s += i * i % 7\n"
    "    _memo[n] = s\n    return s\n"
)


@pytest.fixture(scope="module")
def verdicts():
    task = function_task("calls", HONEST, HONEST, n=300_000)
    config = JudgeConfig(repeats=7, first_call=FirstCallConfig(repeat_calls=8, rounds=5))
    with Judge(config) as judge:
        vs = judge.judge_many([Candidate(task, source=HONEST, model="honest"),
                               Candidate(task, source=CACHED, model="cached")])  # fmt: skip
    return {v.model: v for v in vs}


def test_fresh_process_timing_gives_the_cache_no_gain(verdicts):
    honest, cached = verdicts["honest"].candidate, verdicts["cached"].candidate
    c = compare(cached.samples_s, honest.samples_s)
    # Close to 1 (two different programs may differ a little for real, and 7 runs each on a
    # loaded 2-core machine spread by tens of per cent: 1.35 was seen once in a full suite run,
    # CI 0.74-1.44): nowhere near the 1/9 a cache surviving across timed calls would show.
    assert 0.67 < c.ratio < 1.5, c


def test_the_first_call_gap_is_reported_for_the_cache_only(verdicts):
    cached, honest = verdicts["cached"], verdicts["honest"]
    assert "first_call_gap" in cached.flags and "first_call_gap" not in honest.flags
    t = cached.candidate
    assert t.first_call_s > 10 * t.repeat_call_s
    h = honest.candidate
    assert "first_call_unchecked" not in honest.flags + cached.flags
    assert h.first_call_s is not None, h  # None: T(1) - T(0) was not above zero
    assert 0.5 < h.first_call_s / h.repeat_call_s < 2.0, h
    # What a harness averaging 1 + k calls in one process would have reported:
    k = 8
    naive_cached = (t.first_call_s + k * t.repeat_call_s) / (1 + k)
    naive_honest = (h.first_call_s + k * h.repeat_call_s) / (1 + k)
    assert naive_cached < 0.3 * naive_honest  # a fake >3x speed-up, which perfgym never credits
