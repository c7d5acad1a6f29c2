"""RLVR, runtime-only (paper 000) and the raw-duration linear/log maps (paper 003 §D.5)."""

from __future__ import annotations

import math

import pytest
from reward_verdicts import failed, ok, staircase, timeout_test, timing

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, TimingStatus
from perfgym.rewards import get_reward


def test_rlvr_staircase_and_edges() -> None:
    r = get_reward("rlvr")
    assert r(staircase()) == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    # Correctness needs no timing: a degraded or absent timing still scores 1.
    degraded = ok(0.5, candidate=timing(0.5, status=TimingStatus.DEGRADED))
    assert r([degraded, ok(None)]) == [1.0, 1.0]
    assert r([ok(0.5, infra_error=True)]) == [None]


def test_runtime_only_staircase() -> None:
    # clip(1 - Tc/Tb, 0, 1) with Tb = 1: correct 1.2 -> 0, faster 0.6 -> 0.4, reference 0.2 -> 0.8
    values = get_reward("runtime_only")(staircase())
    assert values == pytest.approx([0, 0, 0, 0, 0.0, 0.4, 0.8])


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (ok(1.0), 0.0),  # Tc = Tb
        (ok(0.1), 0.9),  # Tc < Tr: runtime-only ignores the reference
        (ok(0.4, tb=0.5, tr=0.8), 0.2),  # Tb <= Tr does not matter either
        (ok(0.5, tr=None), 0.5),  # no reference needed
        (ok(None), None),
        (ok(0.5, tb=None), None),
        (ok(0.5, candidate=timing(0.5, status=TimingStatus.UNAVAILABLE)), None),
        (failed(Stage.WO, candidate=timing(0.01), baseline=timing(1.0)), 0.0),
    ],
)
def test_runtime_only_edges(verdict, expected) -> None:
    assert get_reward("runtime_only")([verdict]) == (
        [expected] if expected is None else pytest.approx([expected])
    )


def test_runtime_only_baseline_column() -> None:
    assert get_reward("runtime_only")([ok(0.5)], baseline_s=[2.0]) == pytest.approx([0.75])


def test_linear_paper_example_and_staircase() -> None:
    r = get_reward("linear")
    # §D.5: "a correct 1s average solution receives 0.9 under the linear map".
    assert r([ok(2.0, per={"a": 0.5, "b": 1.5})]) == pytest.approx([0.9])
    per = [{"a": tc / 2, "b": tc / 2} for tc in (1.2, 0.6, 0.2)]
    values = r([ok(tc, per=p) for tc, p in zip((1.2, 0.6, 0.2), per, strict=True)])
    assert values == pytest.approx([0.94, 0.97, 0.99])
    assert r(staircase()[:4]) == [0.0, 0.0, 0.0, 0.0]


def test_linear_timeouts_cap_and_missing() -> None:
    r = get_reward("linear")
    # A timed-out workload counts as the 10 s cap: mean (0.25 + 10) / 2.
    half = ok(0.25, per={"a": 0.25}, tests=[timeout_test("b")])
    assert r([half]) == pytest.approx([1 - 5.125 / 10])
    assert r([ok(12.0, per={"a": 12.0})]) == [0.0]
    assert r([ok(0.5)]) == [None]  # no per-workload durations
    assert r([ok(0.5, per={"a": float("nan")})]) == [None]
    assert get_reward("linear", duration="estimate")([ok(1.2)]) == pytest.approx([0.88])
    assert get_reward("linear", cap_s=2.0)([ok(1.0, per={"a": 1.0})]) == pytest.approx([0.5])


def test_log_map() -> None:
    r = get_reward("log")
    one = 1 - math.log1p(1.0) / math.log1p(10.0)
    assert r([ok(1.0, per={"a": 1.0})]) == pytest.approx([one])
    assert r([ok(10.0, per={"a": 10.0}), ok(1e-9, per={"a": 1e-9})]) == pytest.approx([0.0, 1.0])
    scaled = get_reward("log", log_scale_s=0.1)([ok(1.0, per={"a": 1.0})])
    assert scaled == pytest.approx([1 - math.log1p(10.0) / math.log1p(100.0)])


def test_bad_parameters() -> None:
    with pytest.raises(ConfigError):
        get_reward("linear", cap_s=0)
    with pytest.raises(ConfigError):
        get_reward("log", duration="median")


def test_raw_duration_rewards_tie_a_commented_copy_with_the_baseline():
    """A copy of the baseline changed only in comments (`same_source`) is the baseline: its
    raw-duration reward is the baseline's, whatever noise its own measurement caught (the audit
    saw such copies beat the baseline on 23 of 40 perfgym-core tasks in one run)."""
    from perfgym.judge.verdict import Stage, Timing, Verdict
    from perfgym.rewards import get_reward

    base = Timing(estimate_s=1.0, per_workload_s={"a": 1.0})
    lucky = Timing(estimate_s=0.8, per_workload_s={"a": 0.8})
    plain = Verdict(task_id="t", stage=Stage.OK, candidate=base, baseline=base)
    copy = Verdict(task_id="t", stage=Stage.OK, candidate=lucky, baseline=base,
                   same_source=["baseline"])  # fmt: skip
    other = Verdict(task_id="t", stage=Stage.OK, candidate=lucky, baseline=base)
    for name in ("linear", "log"):
        reward = get_reward(name)
        assert reward([copy]) == reward([plain]), name
        assert reward([other])[0] > reward([plain])[0], name  # a different program earns it
