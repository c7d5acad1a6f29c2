"""ENAMEL level efficiency, weighted score, eff@k and pass@k on hand-computed cases."""

from __future__ import annotations

import itertools

import pytest

from perfgym.errors import ConfigError
from perfgym.metrics.enamel import (
    EnamelConfig,
    EnamelMetric,
    EnamelProblem,
    EnamelSample,
    enamel_eff_at_k,
    enamel_level_limits,
    enamel_level_time,
    enamel_pass_at_k,
    level_efficiencies,
    sample_efficiency,
    sample_passed,
)

REF = [0.01, 0.1, 0.2, 0.4]
LIMITS = enamel_level_limits(REF)  # 2 x 0.4 s on every level


def problem(*samples: EnamelSample, task_id: str = "HumanEval/0") -> EnamelProblem:
    return EnamelProblem(
        task_id=task_id, reference_times_s=REF, level_limits_s=LIMITS, samples=list(samples)
    )


def ok(*times: float | None) -> EnamelSample:
    return EnamelSample(correct=True, level_times_s=list(times))


def test_level_limits_follow_enamel_code() -> None:
    # One limit for all levels: alpha x the largest reference time among weighted levels;
    # the unweighted first level does not count even when it is the slowest.
    assert pytest.approx([0.8] * 4) == LIMITS
    assert enamel_level_limits([9.0, 0.1, 0.2, 0.3]) == [pytest.approx(0.6)] * 4
    with pytest.raises(ConfigError):
        enamel_level_limits([0.1, 0.2], timeout_factor=2.0)
    with pytest.raises(ConfigError):
        enamel_level_limits(REF, timeout_factor=1.0)


def test_level_time_is_max_over_tests_of_hodges_lehmann() -> None:
    assert enamel_level_time([[1.0, 2.0, 3.0, 10.0], [2.0, 2.0, 2.0]]) == pytest.approx(2.75)


def test_hand_computed_levels_and_score() -> None:
    s = ok(0.02, 0.1, 0.3, 0.8)
    p = problem(s)
    effs = level_efficiencies(s, p)
    # level 0 unweighted -> 0; (0.8-0.1)/(0.8-0.1) = 1; (0.8-0.3)/(0.8-0.2) = 5/6; at T -> 0
    assert effs == [0.0, pytest.approx(1.0), pytest.approx(5 / 6), pytest.approx(0.0)]
    assert sample_efficiency(s, p) == pytest.approx((3 * 1 + 3 * 5 / 6 + 0) / 10)
    slower_than_limit = ok(0.02, 0.1, 0.3, 0.9)  # over T but not killed: that level is 0
    assert level_efficiencies(slower_than_limit, p)[3] == 0.0


def test_timeout_zeroes_its_level_and_later_ones() -> None:
    p = problem()
    s = ok(0.01, 0.1, None, None)
    assert level_efficiencies(s, p) == [0.0, pytest.approx(1.0), 0.0, 0.0]
    assert sample_efficiency(s, p) == pytest.approx(0.3)
    assert sample_passed(s)
    first = ok(None, None, None, None)
    assert sample_efficiency(first, p) == 0.0
    assert not sample_passed(first)  # a first-level timeout fails the sample


def test_wrong_answer_zeroes_everything() -> None:
    wrong = EnamelSample(correct=False, level_times_s=[0.01, 0.05, 0.1, 0.2])
    assert level_efficiencies(wrong, problem()) == [0.0] * 4
    assert not sample_passed(wrong)


def test_reference_scores_exactly_one() -> None:
    assert sample_efficiency(ok(*REF), problem()) == pytest.approx(1.0)
    r = enamel_eff_at_k([problem(ok(*REF)), problem(ok(*REF), task_id="HumanEval/1")])
    assert r.value == pytest.approx(1.0)


def test_eff_at_k_over_problems() -> None:
    samples = [ok(0.02, 0.1, 0.3, 0.8), ok(0.01, 0.1, None, None), ok(*REF)]
    scores = [0.55, 0.3, 1.0]
    p1 = problem(*samples)
    p2 = problem(
        EnamelSample(correct=False, level_times_s=[0.0] * 4),
        ok(None, None, None, None),
        ok(*REF),
        task_id="HumanEval/1",
    )
    r1 = enamel_eff_at_k([p1, p2])
    assert r1.per_task["HumanEval/0"] == pytest.approx(sum(scores) / 3)
    assert r1.per_task["HumanEval/1"] == pytest.approx(1 / 3)
    assert r1.value == pytest.approx((sum(scores) / 3 + 1 / 3) / 2)
    r2 = enamel_eff_at_k([p1], EnamelConfig(k=2))
    pairs = list(itertools.combinations(scores, 2))
    assert r2.value == pytest.approx(sum(max(a) for a in pairs) / 3)
    passed = enamel_pass_at_k([p1, p2])
    assert passed.per_task == {"HumanEval/0": 1.0, "HumanEval/1": pytest.approx(1 / 3)}
    assert EnamelMetric().compute([p1, p2]).value == r1.value


@pytest.mark.parametrize(
    "bad",
    [
        lambda: enamel_eff_at_k([]),
        lambda: enamel_eff_at_k([problem()]),  # no samples
        lambda: enamel_eff_at_k([problem(ok(0.1, 0.1, 0.1))]),  # 3 level times, 4 levels
        lambda: enamel_eff_at_k([problem(ok(0.1, None, 0.1, None))]),  # time after a timeout
        lambda: enamel_eff_at_k([problem(ok(0.1, float("nan"), 0.1, 0.1))]),
        lambda: enamel_eff_at_k([problem(ok(0.1, -1.0, 0.1, 0.1))]),
        lambda: enamel_eff_at_k([problem(ok(*REF))], EnamelConfig(k=2)),
        lambda: enamel_eff_at_k([problem(ok(*REF)), problem(ok(*REF))]),  # duplicate id
        lambda: enamel_eff_at_k(
            [
                EnamelProblem(
                    task_id="x", reference_times_s=REF, level_limits_s=[0.1] * 4, samples=[ok(*REF)]
                )
            ]
        ),  # limit not above the reference
    ],
)
def test_bad_input(bad) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        bad()


def test_config_validation() -> None:
    for bad in ({"weights": (0, 0)}, {"weights": (1, -1)}, {"k": 0}, {"x": 1}):
        with pytest.raises(ValueError):
            EnamelConfig(**bad)


def test_an_interval_above_one_is_explained_not_hidden() -> None:
    """ENAMEL's e_j is not clipped (its calc_eff): a sample faster than the reference scores
    above 1 and the interval may reach above 1 (at most 2); the result says why, and says when
    a handful of problems makes the interval little more than their range."""
    fast = ok(*(t / 2 for t in REF))
    r = enamel_eff_at_k([problem(fast), problem(ok(*REF), task_id="HumanEval/1")])
    assert r.per_task["HumanEval/0"] > 1.0 and r.ci_high is not None and r.ci_high > 1.0
    assert r.ci_high <= 2.0
    assert any("not clipped" in n and "HumanEval/0" in n for n in r.notes), r.notes
    assert any("2 problems" in n for n in r.notes), r.notes
    many = [problem(ok(*REF), task_id=f"HumanEval/{i}") for i in range(10)]
    assert enamel_eff_at_k(many).notes == []
