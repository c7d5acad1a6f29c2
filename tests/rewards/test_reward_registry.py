"""The reward API: registry by name, rebuild from name + params, columns, outputs."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from pydantic import ValidationError
from reward_verdicts import ok, staircase

from perfgym.errors import ConfigError
from perfgym.registry import Kind, unregister
from perfgym.rewards import (
    Reward,
    RewardOutput,
    get_reward,
    list_rewards,
    register_reward,
    reward_factory,
)

BUILT_IN = {
    "afterburner",
    "linear",
    "log",
    "percentile",
    "percentile_qar",
    "percentile_qp",
    "rlpf",
    "rlpf_no_fbr",
    "rlpf_no_rbr",
    "rlpf_no_shaping",
    "rlvr",
    "runtime_only",
}


@pytest.fixture
def scratch_name() -> Iterator[str]:
    name = "test_only_constant"
    yield name
    unregister(Kind.REWARDS, name)


def test_every_built_in_is_registered() -> None:
    assert set(list_rewards()) >= BUILT_IN
    assert list_rewards() == sorted(list_rewards())


def test_unknown_name_and_parameter() -> None:
    with pytest.raises(ConfigError, match="registered: .*rlpf"):
        get_reward("speedup")
    with pytest.raises(ConfigError, match="it accepts: alpha_f"):
        get_reward("rlpf", alpha=0.2)


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_name_and_params_rebuild_the_reward(name: str) -> None:
    r = get_reward(name)
    assert r.name == name
    rebuilt = get_reward(r.name, **r.params)
    assert rebuilt.params == r.params
    assert reward_factory(name).__doc__


def test_params_hold_defaults_and_overrides() -> None:
    r = get_reward("rlpf", alpha_f=0.2)
    assert r.params["alpha_f"] == 0.2 and r.params["alpha_r"] == 0.10
    assert get_reward("percentile_qar").params["quality"] == "qar"
    assert get_reward("percentile_qar", tau=50).params["tau"] == 50
    assert "rlpf" in repr(r)


def test_call_and_score_agree_and_unknown_columns_are_ignored() -> None:
    r = get_reward("rlpf")
    batch = staircase()
    outs = r.score(batch, prompts=["p"] * 7, task_id=["x"] * 7)
    assert [o.value for o in outs] == r(batch, prompts=["p"] * 7)
    assert r([]) == []


def test_register_custom_reward(scratch_name: str) -> None:
    @register_reward(scratch_name)
    def constant(value: float = 0.5) -> Reward:
        def score(verdicts, columns):
            return [RewardOutput(value=value, stage=v.stage) for v in verdicts]

        return Reward(score, bounds=(0.0, 1.0))

    r = get_reward(scratch_name, value=0.25)
    assert (r.name, r.params) == (scratch_name, {"value": 0.25})
    assert r([ok(1.0)]) == [0.25]
    assert constant()([ok(1.0)]) == [0.5]  # calling the factory directly stamps too
    with pytest.raises(ConfigError, match="already registered"):
        register_reward(scratch_name)(constant)
    register_reward(scratch_name, replace=True)(constant)


def test_non_finite_values_never_reach_a_trainer() -> None:
    def score(verdicts, columns):
        return [RewardOutput(value=math.nan) for _ in verdicts]

    with pytest.raises(ValueError, match="non-finite"):
        Reward(score, bounds=(0, 1), name="broken")([ok(1.0)])


def test_reward_output_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        RewardOutput(value=1.0, score=2.0)  # type: ignore[call-arg]


def test_order_must_cover_the_staircase() -> None:
    with pytest.raises(ConfigError, match="6 relations"):
        Reward(lambda v, c: [], bounds=(0, 1), order=("<",))
