"""Bootstrap CI properties: contains the estimate, seeded, narrows with more tasks."""

from __future__ import annotations

import numpy as np
import pytest

from perfgym.judge.verdict import Stage
from perfgym.metrics.bootstrap import BootstrapConfig, bootstrap_ci, summarize
from perfgym.metrics.perfcodebench import PerfCodeBenchConfig, perfcodebench_table


def synthetic_run(mk, n: int, seed: int):  # type: ignore[no-untyped-def]
    """n tasks: 60% correct, of which durations spread around baseline and reference."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if rng.random() < 0.4:
            out.append(mk(f"t{i}", Stage.WO))
        else:
            out.append(mk(f"t{i}", Stage.OK, float(rng.uniform(0.3, 1.3)), 1.0, 0.5))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_interval_contains_the_point_estimate(mk, seed: int) -> None:  # type: ignore[no-untyped-def]
    table = perfcodebench_table(synthetic_run(mk, 60, seed))
    for r in table.rows():
        assert r.value is not None and r.ci_low is not None and r.ci_high is not None
        assert r.ci_low <= r.value <= r.ci_high, r.name
        assert r.ci_low < r.ci_high, r.name  # 60 varied tasks: not degenerate


def test_same_seed_same_interval(mk) -> None:  # type: ignore[no-untyped-def]
    results = synthetic_run(mk, 50, 0)
    cfg = lambda seed: PerfCodeBenchConfig(bootstrap=BootstrapConfig(seed=seed))  # noqa: E731
    a = perfcodebench_table(results, cfg(5)).cgre
    b = perfcodebench_table(results, cfg(5)).cgre
    c = perfcodebench_table(results, cfg(6)).cgre
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.value == c.value  # the seed moves only the interval


def test_interval_narrows_with_more_tasks(mk) -> None:  # type: ignore[no-untyped-def]
    small = perfcodebench_table(synthetic_run(mk, 30, 11)).crr
    large = perfcodebench_table(synthetic_run(mk, 600, 11)).crr
    width = lambda r: r.ci_high - r.ci_low  # noqa: E731
    # sqrt(600/30) ~ 4.5x narrower in theory; demand at least 2.5x.
    assert width(large) * 2.5 < width(small)


def test_default_is_afterburners_128_replicates_at_95_percent() -> None:
    cfg = BootstrapConfig()
    assert (cfg.replicates, cfg.confidence) == (128, 0.95)
    with pytest.raises(ValueError):
        BootstrapConfig(replicates=0)
    with pytest.raises(ValueError):
        BootstrapConfig(confidence=1.0)


def test_percentile_interval_of_a_known_statistic() -> None:
    # Resampling a constant column gives a zero-width interval at that constant.
    low, high, notes = bootstrap_ci(np.full(10, 0.3), lambda r: float(r.mean()), BootstrapConfig())
    assert (low, high) == (pytest.approx(0.3), pytest.approx(0.3))
    assert notes == []


def test_undefined_replicates_are_dropped_and_reported() -> None:
    rows = np.array([0.0, 0.0, 0.0, 1.0])

    def ratio(r: np.ndarray) -> float:  # undefined when the resample holds no 1
        return float(r.mean() / r.max()) if r.max() > 0 else float("nan")

    low, high, notes = bootstrap_ci(rows, ratio, BootstrapConfig(replicates=200))
    assert low is not None and high is not None
    assert any("undefined" in n for n in notes)


def test_one_task_gives_a_degenerate_interval_with_a_note() -> None:
    r = summarize("x", {"only": 0.4}, BootstrapConfig())
    assert (r.value, r.ci_low, r.ci_high, r.n) == (0.4, 0.4, 0.4, 1)
    assert any("degenerate" in n for n in r.notes)
