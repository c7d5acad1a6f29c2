"""A correct candidate whose timing carries a sandbox hiding flag earns the lowest speed credit.

Never a bonus and never None: a trainer that drops None samples would otherwise give hiding
CPU in an auto-reaped child no signal at all (issue 13, hole 2). End-to-end versions on the
real sandbox are in tests/security/test_hidden_cpu.py and test_worker.py.
"""

from __future__ import annotations

import pytest
from reward_verdicts import ok, timing

from perfgym.judge.verdict import TimingStatus
from perfgym.rewards import get_reward, list_rewards
from perfgym.run_status import CLOCK_CHEAT_FLAGS
from perfgym.sandbox.execution import HIDING_FLAGS


def hider(flag: str, tc: float = 0.01) -> object:
    """A correct verdict whose candidate looks 100x faster than the baseline but hid its CPU."""
    per = {"w1": tc / 2, "w2": tc / 2}
    cand = timing(tc, per, status=TimingStatus.DEGRADED, flags=[flag], status_reason=flag)
    return ok(None, candidate=cand)


def honest(tc: float) -> object:
    return ok(tc, per={"w1": tc / 2, "w2": tc / 2})


@pytest.mark.parametrize("flag", HIDING_FLAGS)
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("rlpf", {}),
        ("rlpf", {"on_missing_timing": "floor"}),
        ("afterburner", {}),
        ("runtime_only", {}),
        ("linear", {}),
        ("log", {}),
    ],
)
def test_hiding_scores_at_most_the_plain_baseline(flag: str, name: str, params: dict) -> None:
    reward = get_reward(name, **params)
    columns = {"format_ok": [True, True]} if name == "afterburner" else {}
    hid, baseline_speed = reward([hider(flag), honest(1.0)], **columns)
    assert hid is not None, f"{name}: a hider must get a number, not None"
    assert baseline_speed is not None
    assert hid <= baseline_speed, f"{name}: hider {hid} above a baseline-speed candidate"


@pytest.mark.parametrize("flag", HIDING_FLAGS)
def test_hiding_ranks_last_in_the_percentile_reward(flag: str) -> None:
    pools = [[{"w1": s, "w2": s} for s in (0.1, 0.2, 0.3, 0.4, 0.5)]] * 2
    reward = get_reward("percentile", quality="timeouts", rho=1.0)
    hid, fast = reward([hider(flag), honest(0.05)], pool=pools)
    assert hid is not None and fast is not None
    assert hid < fast


def test_the_reason_names_the_flag() -> None:
    out = get_reward("rlpf").score([hider("hidden_cpu")])[0]
    assert "hidden_cpu" in out.reason


def clock_cheat(flag: str, tc: float = 0.01) -> object:
    """A correct harness verdict claiming 100x the baseline's speed, denied by the external clock:
    `perfgym.judge.crosscheck` flags the verdict and degrades the candidate's timing."""
    per = {"w1": tc / 2, "w2": tc / 2}
    cand = timing(tc, per, status=TimingStatus.DEGRADED, status_reason=flag, clock="harness")
    return ok(None, candidate=cand, flags=[flag])


def _columns(name: str, n: int) -> dict:
    if name.startswith("afterburner"):
        return {"format_ok": [True] * n}
    if name.startswith("percentile"):
        return {"pool": [[{"w1": s, "w2": s} for s in (0.1, 0.2, 0.3, 0.4, 0.5)]] * n}
    return {}


@pytest.mark.parametrize("flag", CLOCK_CHEAT_FLAGS)
@pytest.mark.parametrize("name", list_rewards())
def test_a_harness_clock_cheat_scores_no_more_than_an_honest_slow_program(
    flag: str, name: str
) -> None:
    # Red team round 5: a cheat caught by the cross-check scored None under RLPF (dropped: being
    # caught cost nothing). Every reward: a number, never above a correct baseline-speed program.
    cheat, slow = get_reward(name)([clock_cheat(flag), honest(1.0)], **_columns(name, 2))
    assert cheat is not None, f"{name}: a caught clock cheat must get a number, not None"
    assert slow is not None
    assert cheat <= slow, f"{name}: clock cheat {cheat} above an honest baseline-speed program"


def test_rlpf_scores_a_clock_cheat_at_the_floor_and_names_the_flag() -> None:
    out = get_reward("rlpf").score([clock_cheat("harness_timer_mismatch")])[0]
    assert out.value == pytest.approx(0.15)
    assert "harness_timer_mismatch" in out.reason
