"""Venus Beyond-T/M/I with B%/M%/W%, and Mercury's Beyond, on hand-computed cases."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics.beyond import (
    BeyondConfig,
    BeyondMetric,
    MercuryConfig,
    beyond_breakdown,
    mercury_beyond,
    mercury_score,
)
from perfgym.tasks.task import StoredMeasurement


def pool(*seconds: float) -> list[StoredMeasurement]:
    """Passing pool solutions with the given median durations."""
    return [StoredMeasurement(median_s=s) for s in seconds]


def test_beyond_t_and_breakdown(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": pool(1.0, 2.0, 3.0, 4.0)}
    results = [
        mk("a", Stage.OK, 0.5, sample=0),  # faster than every human: p = 1, B
        mk("a", Stage.OK, 2.0, sample=1),  # ties count as beaten: p = 3/4, M
        mk("a", Stage.OK, 4.0, sample=2),  # p = 1/4, M
        mk("a", Stage.OK, 5.0, sample=3),  # slower than every human: p = 0, W
        mk("a", Stage.WO, 0.1, sample=4),  # failed: p = 0, F
    ]
    b = beyond_breakdown(results, pools)
    assert b.beyond.name == "beyond-T"
    assert b.beyond.value == pytest.approx((1 + 0.75 + 0.25 + 0 + 0) / 5)
    assert (b.better.value, b.within.value, b.worse.value, b.failed.value) == (
        pytest.approx(0.2),
        pytest.approx(0.4),
        pytest.approx(0.2),
        pytest.approx(0.2),
    )
    total = b.better.value + b.within.value + b.worse.value + b.failed.value  # type: ignore[operator]
    assert total == pytest.approx(1.0)


def test_beyond_memory_and_integral_use_their_pool_columns(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {
        "a": [
            StoredMeasurement(median_s=1.0, peak_rss_mb=10.0, memory_integral_mb_s=5.0),
            StoredMeasurement(median_s=1.0, peak_rss_mb=30.0, memory_integral_mb_s=50.0),
        ],
    }
    v = mk("a", Stage.OK, 1.0, cand={"peak_rss_mb": 20.0, "memory_integral_mb_s": 1.0})
    mem = beyond_breakdown([v], pools, BeyondConfig(dimension="memory"))
    integral = beyond_breakdown([v], pools, BeyondConfig(dimension="integral"))
    assert (mem.beyond.name, mem.beyond.value) == ("beyond-M", 0.5)
    assert (integral.beyond.name, integral.beyond.value) == ("beyond-I", 1.0)
    assert integral.better.name == "B%-I"


def test_every_task_weighs_the_same(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": pool(1.0, 2.0), "b": pool(1.0, 2.0)}
    results = [mk("a", Stage.OK, 0.5, sample=i) for i in range(3)] + [mk("b", Stage.WO)]
    r = BeyondMetric().compute(results, pools=pools)
    assert r.per_task == {"a": 1.0, "b": 0.0}
    assert r.value == 0.5


def test_missing_candidate_measurement_scores_zero_with_a_note(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": [StoredMeasurement(median_s=s, peak_rss_mb=s) for s in (1.0, 2.0)]}
    b = beyond_breakdown([mk("a", Stage.OK, 1.0)], pools, BeyondConfig(dimension="memory"))
    assert b.beyond.value == 0.0
    assert b.failed.value == 1.0
    assert any("no memory measurement" in n for n in b.beyond.notes)


@pytest.mark.parametrize(
    ("pools", "match"),
    [
        ({"a": pool(1.0)}, "at least 2"),
        (
            {
                "a": [
                    StoredMeasurement(median_s=1.0),
                    StoredMeasurement(median_s=2.0, status="error"),
                ]
            },
            "at least 2",
        ),
        ({"a": [StoredMeasurement(), StoredMeasurement()]}, "no median_s"),
        (None, "needs pools"),
    ],
)
def test_bad_pools(mk, pools, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=match):
        beyond_breakdown([mk("a", Stage.OK, 1.0)], pools)


def test_pool_of_one_is_allowed_when_asked(mk) -> None:  # type: ignore[no-untyped-def]
    b = beyond_breakdown([mk("a", Stage.OK, 0.5)], {"a": pool(1.0)}, BeyondConfig(min_pool=1))
    assert b.better.value == 1.0


def test_mercury_score() -> None:
    runtimes = [1.0, 3.0]
    assert mercury_score(2.0, runtimes, "t") == 0.5
    assert mercury_score(0.5, runtimes, "t") == 1.0  # clipped to the fastest human
    assert mercury_score(4.0, runtimes, "t") == 0.0  # clipped to the slowest
    assert mercury_score(None, runtimes, "t") == 0.0  # failed: runtime = inf
    with pytest.raises(ConfigError, match="range is empty"):
        mercury_score(1.0, [2.0, 2.0], "t")


def test_mercury_beyond_at_k_uses_the_first_k_samples(mk) -> None:  # type: ignore[no-untyped-def]
    pools = {"a": pool(1.0, 3.0)}
    results = [
        mk("a", Stage.OK, 2.0, sample=0),
        mk("a", Stage.WO, sample=1),
        mk("a", Stage.OK, 1.0, sample=2),
    ]
    assert mercury_beyond(results, pools).value == 0.5
    assert mercury_beyond(results, pools, MercuryConfig(k=2)).value == 0.25
    assert mercury_beyond(results, pools, MercuryConfig(k=3)).value == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="fewer than k"):
        mercury_beyond(results, pools, MercuryConfig(k=4))
