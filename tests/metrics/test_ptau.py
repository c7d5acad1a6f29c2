"""DMC-Optim p-τ pass@k and plain pass@k on hand-computed cases."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics.ptau import PassAtKConfig, PTauConfig, correctness_pass_at_k, p_tau_pass_at_k
from perfgym.tasks.task import StoredMeasurement


def pool(*seconds: float) -> list[StoredMeasurement]:
    """Passing pool solutions with the given median durations."""
    return [StoredMeasurement(median_s=s) for s in seconds]


POOLS = {"a": pool(4.0, 1.0, 3.0, 2.0)}


def test_p50_pass_at_1_against_the_second_fastest_of_four(mk) -> None:  # type: ignore[no-untyped-def]
    # Nearest rank ceil(0.5 * 4) = 2: the reference takes 2.0 s; equal time passes.
    results = [
        mk("a", Stage.OK, 2.0, sample=0),
        mk("a", Stage.OK, 2.1, sample=1),
        mk("a", Stage.WO, 0.1, sample=2),
    ]
    r = p_tau_pass_at_k(results, POOLS, PTauConfig(tau=50))
    assert r.name == "p50_pass@1"
    assert r.value == pytest.approx(1 / 3)
    r2 = p_tau_pass_at_k(results, POOLS, PTauConfig(tau=50, k=2))
    assert r2.value == pytest.approx(1 - 1 / 3)  # 1 - C(2,2)/C(3,2)
    # p100 compares with the slowest reference (4 s): both correct samples pass.
    assert p_tau_pass_at_k(results, POOLS, PTauConfig(tau=100)).value == pytest.approx(2 / 3)
    # p10: the fastest (1 s): none passes.
    assert p_tau_pass_at_k(results, POOLS, PTauConfig(tau=10)).value == 0.0


def test_tasks_are_averaged(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": pool(1.0, 2.0), "b": pool(1.0, 2.0)}
    results = [mk("a", Stage.OK, 0.5), mk("b", Stage.OK, 3.0)]
    r = p_tau_pass_at_k(results, pools, PTauConfig(tau=50))
    assert r.per_task == {"a": 1.0, "b": 0.0}
    assert r.value == 0.5
    assert r.n == 2


def test_per_test_comparison_uses_one_ranked_reference(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {
        "a": [
            StoredMeasurement(median_s=2.0, per_workload_s={"w1": 1.0, "w2": 1.0}),
            StoredMeasurement(median_s=4.0, per_workload_s={"w1": 3.0, "w2": 1.0}),
        ]
    }
    # Total 3.5 s beats the p100 reference's 4 s total, but w2 is slower than its 1.0 s.
    v = mk("a", Stage.OK, cw={"w1": 2.0, "w2": 1.5})
    total = PTauConfig(tau=100)
    per_test = PTauConfig(tau=100, comparison="per_test")
    tolerant = PTauConfig(tau=100, comparison="per_test", tolerance=0.5)
    assert p_tau_pass_at_k([v], pools, total).value == 1.0
    assert p_tau_pass_at_k([v], pools, per_test).value == 0.0
    assert p_tau_pass_at_k([v], pools, tolerant).value == 1.0


def test_untimed_correct_sample_does_not_pass(mk) -> None:  # type: ignore[no-untyped-def]
    r = p_tau_pass_at_k([mk("a", Stage.OK, None)], POOLS, PTauConfig(tau=100))
    assert r.value == 0.0
    assert any("no usable duration" in n for n in r.notes)


def test_failed_pool_solutions_are_not_references(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": [*pool(1.0, 2.0), StoredMeasurement(status="timeout", median_s=10.0)]}
    # p100 is the slowest *passing* reference (2 s), not the timed-out 10 s one.
    r = p_tau_pass_at_k([mk("a", Stage.OK, 1.5)], pools, PTauConfig(tau=100))
    assert r.value == 1.0
    r = p_tau_pass_at_k([mk("a", Stage.OK, 2.5)], pools, PTauConfig(tau=100))
    assert r.value == 0.0


@pytest.mark.parametrize(
    ("pools", "match"),
    [
        (None, "needs pools"),
        ({}, "no pool"),
        ({"a": pool(1.0)}, "at least 2"),
        ({"a": [StoredMeasurement(), StoredMeasurement()]}, "no duration"),
        ({"a": pool(1.0, float("nan"))}, "finite"),
        ({"a": pool(1.0, -2.0)}, "> 0"),
    ],
)
def test_bad_pools(mk, pools, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=match):
        p_tau_pass_at_k([mk("a", Stage.OK, 1.0)], pools)


def test_config_validation() -> None:
    for bad in ({"tau": 0}, {"tau": 101}, {"k": 0}, {"tolerance": 2}, {"nope": 1}):
        with pytest.raises(ValueError):
            PTauConfig(**bad)


def test_k_larger_than_samples(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="fewer than k"):
        p_tau_pass_at_k([mk("a", Stage.OK, 1.0)], POOLS, PTauConfig(k=2))


def test_correctness_pass_at_k(mk) -> None:  # type: ignore[no-untyped-def]
    results = [mk("a", Stage.OK, sample=i) for i in range(2)] + [
        mk("a", Stage.WO, sample=i) for i in range(2, 5)
    ]
    results += [mk("b", Stage.WO, sample=i) for i in range(5)]
    r = correctness_pass_at_k(results, PassAtKConfig(k=2))
    assert r.per_task["a"] == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert r.per_task["b"] == 0.0
    assert r.value == pytest.approx(0.35)
