"""The best-patch selector keeps the fastest eligible patch, not the last, and no cheaper trick
(a flagged, failing or merely lucky patch) can beat an honest one."""

from __future__ import annotations

from perfgym.agent.attempt import Attempt, HackFinding
from perfgym.agent.selector import best_attempt, eligible, speedup_curve


def _a(index: int, speedup: float | None, stage: str = "measured", significant: bool = True,
       hacks: tuple[str, ...] = ()) -> Attempt:  # fmt: skip
    return Attempt(task_id="t", index=index, stage=stage, diff=f"d{index}", speedup=speedup,
                   significant=significant,
                   hacks=[HackFinding(kind=k, evidence="e") for k in hacks])  # fmt: skip


def test_fastest_eligible_not_last():
    attempts = [_a(1, 3.0), _a(2, 1.5), _a(3, 2.0)]
    assert best_attempt(attempts).index == 1
    assert speedup_curve(attempts) == [3.0, 3.0, 3.0]


def test_cheaper_tricks_never_win():
    honest = _a(1, 2.0)
    tricks = [
        _a(2, 50.0, hacks=("caching_signature",)),  # faster, but flagged
        _a(3, 9.0, stage="tests"),  # breaks a test
        _a(4, 9.0, stage="workload"),  # outputs differ
        _a(5, 9.0, significant=False),  # a lucky estimate, not a significant one
        _a(0, 99.0),  # a duplicate/empty submission does not count
    ]
    assert best_attempt([honest, *tricks]).index == 1
    assert not any(eligible(t) for t in tricks)
    assert best_attempt(tricks[:4]) is None
    assert speedup_curve([honest, *tricks]) == [2.0, 2.0, 2.0, 2.0, 2.0]


def test_excluded_after_full_suite_falls_back_to_next():
    attempts = [_a(1, 3.0), _a(2, 2.5), _a(3, 0.9)]
    assert best_attempt(attempts, excluded=[1]).index == 2
    assert best_attempt(attempts, excluded=[1, 2]) is None  # a slower patch is never kept


def test_curve_starts_at_one_until_something_is_kept():
    assert speedup_curve([_a(1, None, stage="build"), _a(2, 1.8), _a(3, 1.2)]) == [1.0, 1.8, 1.8]
