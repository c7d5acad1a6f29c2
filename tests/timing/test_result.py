"""`Timing.usable_s` / `unusable_reason` / `ok`: one answer to "may this duration be used"."""

from __future__ import annotations

import math

import pytest

from perfgym.judge.verdict import TestResult
from perfgym.run_status import Status
from perfgym.timing.result import Timing, TimingStatus, is_positive_seconds


def test_an_ok_positive_estimate_is_usable() -> None:
    t = Timing(estimate_s=0.25)
    assert t.ok and t.usable_s == 0.25 and t.unusable_reason is None


@pytest.mark.parametrize(
    ("timing", "reason"),
    [
        (Timing(estimate_s=1.0, status=TimingStatus.DEGRADED, status_reason="drift"),
         "timing degraded: drift"),
        (Timing(estimate_s=1.0, status=TimingStatus.UNAVAILABLE), "timing unavailable"),
        (Timing(), "timing has no estimate"),
        (Timing(estimate_s=0.0), "estimate 0.0 is not a positive finite duration"),
        (Timing(estimate_s=-1.0), "estimate -1.0 is not a positive finite duration"),
        (Timing(estimate_s=math.nan), "estimate nan is not a positive finite duration"),
        (Timing(estimate_s=math.inf), "estimate inf is not a positive finite duration"),
    ],
)  # fmt: skip
def test_an_unusable_timing_says_why(timing: Timing, reason: str) -> None:
    assert timing.usable_s is None
    assert timing.unusable_reason == reason


def test_ok_is_the_status_alone() -> None:
    assert Timing(estimate_s=0.0).ok  # ok, yet no usable duration
    assert not Timing(estimate_s=1.0, status=TimingStatus.DEGRADED).ok


def test_positive_seconds_are_finite_numbers_above_zero() -> None:
    assert is_positive_seconds(1) and is_positive_seconds(0.5)
    assert not any(is_positive_seconds(x) for x in (0, -1.0, math.nan, math.inf, None, True, "1"))


def test_a_test_result_knows_it_timed_out() -> None:
    assert TestResult(id="w", passed=False, status=Status.TIMEOUT).timed_out
    assert not TestResult(id="w", passed=True, status=Status.OK).timed_out
