"""Hypothesis properties of every registered reward: bounded, monotone in Tc, never crashing."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfgym.judge.verdict import Stage, Timing, TimingStatus, Verdict
from perfgym.rewards import canonical_columns, get_reward, list_rewards

seconds = st.floats(min_value=1e-3, max_value=50.0, allow_nan=False)


def correct(tc: float, tb: float, tr: float) -> Verdict:
    split = {"w1": tc / 2, "w2": tc / 2}  # the canonical pool's workloads
    return Verdict(
        task_id="p",
        stage=Stage.OK,
        candidate=Timing(
            estimate_s=tc, per_workload_s=split, peak_rss_mb=tc, memory_integral_mb_s=tc
        ),
        baseline=Timing(estimate_s=tb, peak_rss_mb=tb, memory_integral_mb_s=tb),
        reference=Timing(estimate_s=tr),
    )


@pytest.mark.parametrize("name", list_rewards())
@settings(max_examples=40, deadline=None)
@given(tc=seconds, dt=seconds, tb=seconds, tr=seconds)
def test_monotone_non_increasing_in_tc_and_bounded(
    name: str, tc: float, dt: float, tb: float, tr: float
) -> None:
    reward = get_reward(name)
    batch = [correct(tc, tb, tr), correct(tc + dt, tb, tr)]
    fast, slow = reward(batch, **canonical_columns(reward, 2))
    assert fast is not None and slow is not None
    assert fast >= slow - 1e-12
    low, high = reward.bounds
    assert low - 1e-12 <= slow <= fast <= high + 1e-12


def any_timing() -> st.SearchStrategy[Timing | None]:
    figure = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))
    return st.one_of(
        st.none(),
        st.builds(
            Timing,
            estimate_s=figure,
            per_workload_s=st.dictionaries(st.sampled_from(["w1", "w2", "w3"]), st.floats()),
            status=st.sampled_from(list(TimingStatus)),
            clock=st.sampled_from(["wall", "cpu"]),
            peak_rss_mb=figure,
            memory_integral_mb_s=figure,
        ),
    )


@pytest.mark.parametrize("name", list_rewards())
@settings(max_examples=40, deadline=None)
@given(
    stage=st.sampled_from(list(Stage)),
    infra=st.booleans(),
    candidate=any_timing(),
    baseline=any_timing(),
    reference=any_timing(),
)
def test_any_verdict_gives_none_or_a_bounded_finite_value(
    name: str, stage: Stage, infra: bool, candidate, baseline, reference
) -> None:
    reward = get_reward(name)
    v = Verdict(
        task_id="p",
        stage=stage,
        infra_error=infra,
        candidate=candidate,
        baseline=baseline,
        reference=reference,
    )
    (value,) = reward([v], **canonical_columns(reward, 1))
    if infra:
        assert value is None
    if value is not None:
        assert math.isfinite(value)
        assert reward.bounds[0] - 1e-12 <= value <= reward.bounds[1] + 1e-12
