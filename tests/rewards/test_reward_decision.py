"""Rewards take `decision="significant"|"strict"`: the default pays nothing for noise, the
choice is recorded with every output and in the reward's parameters, and a bad one is refused."""

import pytest
from reward_verdicts import ok, timing

from perfgym.errors import ConfigError
from perfgym.rewards import get_reward


def sampled(xs: list[float]) -> object:
    return timing(sorted(xs)[len(xs) // 2], samples_s=xs)


NOISE = [0.99, 1.03, 0.96, 1.01, 0.98]  # 1 % below the baseline's median: noise
BASE = [1.00, 1.04, 0.97, 1.02, 0.99]


@pytest.mark.parametrize("name", ["rlpf", "rlpf_no_rbr", "runtime_only"])
def test_noise_earns_no_speed_credit_by_default_and_strict_says_so(name: str) -> None:
    v = ok(None, candidate=sampled(NOISE), baseline=sampled(BASE), reference=sampled([0.25] * 5))
    default, strict = (
        get_reward(name).score([v])[0],
        get_reward(name, decision="strict").score([v])[0],
    )
    assert "baseline tie (paired-t)" in default.decision
    assert strict.decision.startswith("strict: baseline faster (strict)")
    assert strict.value is not None and default.value is not None
    assert default.value < strict.value  # the strict rule paid for noise
    assert get_reward(name).params["decision"] == "significant"


def test_the_baselines_own_text_ties_by_construction() -> None:
    v = ok(None, candidate=sampled([0.5] * 5), baseline=sampled(BASE),
           reference=sampled([0.25] * 5), same_source=["baseline"])  # fmt: skip
    out = get_reward("rlpf").score([v])[0]
    assert out.value == pytest.approx(0.15) and "same-source" in out.decision


def test_a_stored_baseline_column_is_a_given_duration() -> None:
    v = ok(None, candidate=sampled([0.50, 0.51, 0.49, 0.50, 0.52]), baseline=sampled(BASE),
           reference=sampled([0.25] * 5))  # fmt: skip
    out = get_reward("rlpf").score([v], baseline_s=[1.0])[0]
    assert out.components["fbr"] is True and "baseline faster (fixed)" in out.decision
    near = get_reward("runtime_only").score([v], baseline_s=[0.51])[0]
    assert near.value == 0.0 and "baseline tie (fixed)" in near.decision


@pytest.mark.parametrize("name", ["rlpf", "runtime_only", "rlpf_no_fbr"])
@pytest.mark.parametrize("bad", ["lenient", "", "Strict", 1])
def test_an_unknown_decision_is_refused(name: str, bad: object) -> None:
    with pytest.raises(ConfigError):
        get_reward(name, decision=bad)
