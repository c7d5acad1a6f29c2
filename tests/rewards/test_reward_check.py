"""`check_reward` passes every registered reward and catches each kind of broken reward."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from perfgym.judge.verdict import Stage, Verdict
from perfgym.rewards import (
    Reward,
    RewardCheckError,
    RewardOutput,
    canonical_batch,
    check_reward,
    get_reward,
    list_rewards,
)


@pytest.mark.parametrize("name", list_rewards())
def test_every_registered_reward_conforms(name: str) -> None:
    values = check_reward(get_reward(name))
    assert values["infra_error"] is None


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("rlpf", {"degenerate_gap": "none", "on_missing_timing": "floor"}),
        ("percentile", {"composition": "additive", "quality": "qar", "w_correct": 0.3}),
        ("percentile", {"composition": "multitask", "quality": "qp"}),
        ("percentile", {"composition": "collapsed", "limit": "ranked", "limit_percentile": 60}),
        ("percentile", {"filter": "relative", "limit": "relative", "quality": "timeouts"}),
        ("percentile_qp", {"ranking": "leaderboard", "tau": 50, "calibrate": (0.63, 0.05)}),
        ("afterburner", {"objective": "memory"}),
        ("afterburner", {"objective": "integral", "format_weight": 0.0}),
        ("log", {"duration": "estimate"}),
    ],
)
def test_non_default_configurations_conform(name: str, params: dict) -> None:
    check_reward(get_reward(name, **params))


def constant_reward(value_of, *, order=None, bounds=(-10.0, 10.0)) -> Reward:
    """A Reward whose value per verdict is `value_of(verdict, index)`."""

    def score(verdicts: Sequence[Verdict], columns) -> list[RewardOutput]:
        return [RewardOutput(value=value_of(v, i)) for i, v in enumerate(verdicts)]

    return Reward(score, bounds=bounds, order=order)


def honest(v: Verdict, i: int) -> float | None:
    if v.infra_error:
        return None
    return 1.0 if v.stage is Stage.OK else 0.0


def test_an_honest_minimal_reward_passes() -> None:
    check_reward(constant_reward(honest, order=("==", "==", "==", "<", "==", "==")))


def test_non_deterministic() -> None:
    counter = itertools.count()
    with pytest.raises(RewardCheckError, match="non-deterministic"):
        check_reward(constant_reward(lambda v, i: None if v.infra_error else float(next(counter))))


def test_batch_position_dependence() -> None:
    with pytest.raises(RewardCheckError, match="reordering"):
        check_reward(constant_reward(lambda v, i: None if v.infra_error else float(i)))


def test_crash_on_missing_timing_names_the_case() -> None:
    def speed(v: Verdict, i: int) -> float | None:
        if v.infra_error or v.stage is not Stage.OK:
            return None if v.infra_error else 0.0
        assert v.candidate is not None and v.baseline is not None
        return v.baseline.estimate_s / v.candidate.estimate_s  # type: ignore[operator]

    with pytest.raises(RewardCheckError, match="crashed on case 'candidate_absent'"):
        check_reward(constant_reward(speed))


def test_non_finite_values_from_a_plain_function() -> None:
    def plain(verdicts, **columns):
        return [None if v.infra_error else float("inf") for v in verdicts]

    with pytest.raises(RewardCheckError, match="non-finite"):
        check_reward(plain)


def test_infra_error_scored_as_zero() -> None:
    def zero(verdicts, **columns):
        return [0.0 for _ in verdicts]

    with pytest.raises(RewardCheckError, match="infrastructure error scored 0.0"):
        check_reward(zero)


def test_broken_staircase_claim() -> None:
    with pytest.raises(RewardCheckError, match="claims NX < NC"):
        check_reward(constant_reward(honest, order=("<",) * 6))


def test_out_of_bounds() -> None:
    with pytest.raises(RewardCheckError, match="outside bounds"):
        check_reward(constant_reward(honest, bounds=(0.0, 0.5)))


def test_wrong_length_and_wrong_type() -> None:
    with pytest.raises(RewardCheckError, match="list of"):
        check_reward(lambda verdicts, **c: [0.0])
    with pytest.raises(RewardCheckError, match="not a float"):
        check_reward(lambda verdicts, **c: [None if v.infra_error else "1" for v in verdicts])


def test_unknown_required_column() -> None:
    r = constant_reward(honest)
    r.requires = ("secret_sauce",)
    with pytest.raises(RewardCheckError, match="cannot invent"):
        check_reward(r)
    labels, _ = canonical_batch()
    check_reward(r, columns={"secret_sauce": [1] * len(labels)})
    with pytest.raises(RewardCheckError, match="entries"):
        check_reward(r, columns={"secret_sauce": [1]})


def test_score_disagreeing_with_call() -> None:
    class Liar(Reward):
        def __call__(self, verdicts, **columns):
            return [None if v.infra_error else 0.5 for v in verdicts]

    liar = Liar(
        lambda vs, c: [RewardOutput(value=None if v.infra_error else 1.0) for v in vs],
        bounds=(0, 1),
    )
    with pytest.raises(RewardCheckError, match="score\\(\\) values differ"):
        check_reward(liar)


def test_rebuild_mismatch_is_caught() -> None:
    r = get_reward("rlpf")
    r.params = {**r.params, "alpha_f": 0.5}  # params no longer describe the reward
    with pytest.raises(RewardCheckError, match="does not rebuild"):
        check_reward(r)
