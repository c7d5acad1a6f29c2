"""SWE-fficiency's harmonic-mean speedup-ratio score on hand-computed cases."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics.swefficiency import SpeedupRatioConfig, SpeedupRatioMetric, speedup_ratio_score


def test_hand_computed_score(mk) -> None:  # type: ignore[no-untyped-def]
    results = [
        mk("a", Stage.OK, 2.0, 10.0, 5.0),  # speedups 5 vs expert 2 -> SR 2.5
        mk("b", Stage.WO, 1.0, 10.0, 2.0),  # failed: speedup 1 vs expert 5 -> SR 0.2
    ]
    r = speedup_ratio_score(results)
    assert r.per_task == {"a": pytest.approx(2.5), "b": pytest.approx(0.2)}
    assert r.value == pytest.approx(2 / (1 / 2.5 + 1 / 0.2))
    assert r.denominator.startswith("all tasks")


def test_matching_the_expert_scores_one(mk) -> None:  # type: ignore[no-untyped-def]
    r = speedup_ratio_score([mk("a", Stage.OK, 3.0, 9.0, 3.0), mk("b", Stage.OK, 1.0, 2.0, 1.0)])
    assert r.value == pytest.approx(1.0)


def test_hack_adjusted_scores_a_flagged_patch_as_failed(mk) -> None:  # type: ignore[no-untyped-def]
    results = [mk("a", Stage.OK, 2.0, 10.0, 5.0, flags=("hack:caching",))]
    assert speedup_ratio_score(results).value == pytest.approx(2.5)
    m = SpeedupRatioMetric(SpeedupRatioConfig(hack_adjusted=True))
    r = m.compute(results)
    assert r.value == pytest.approx(0.5)  # speedup 1 vs the expert's 2
    assert m.name == "swefficiency_sr(hack-adj)"


def test_missing_expert_timing_is_refused(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="baseline or reference"):
        speedup_ratio_score([mk("a", Stage.OK, 2.0, 10.0, None)])


def test_one_result_per_task(mk) -> None:  # type: ignore[no-untyped-def]
    results = [mk("a", Stage.OK, 2.0, 10.0, 5.0, sample=i) for i in range(2)]
    with pytest.raises(ConfigError, match="one result per task"):
        speedup_ratio_score(results)
