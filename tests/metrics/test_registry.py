"""Metrics by name: every registered metric builds, satisfies `Metric`, and computes."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics import Metric, MetricResult, get_metric, metric_names, register_metric
from perfgym.metrics.enamel import EnamelProblem, EnamelSample, enamel_level_limits
from perfgym.metrics.evalperf import Cluster
from perfgym.tasks.task import StoredMeasurement


def pool(*seconds: float) -> list[StoredMeasurement]:
    """Passing pool solutions with the given median durations."""
    return [StoredMeasurement(median_s=s) for s in seconds]


def test_every_registered_metric_computes(mk) -> None:  # type: ignore[no-untyped-def]
    verdicts = [mk("a", Stage.OK, 0.75, 1.0, 0.5), mk("b", Stage.WO, None, 1.0, 0.5)]
    pools = {"a": pool(0.5, 1.0), "b": pool(0.5, 1.0)}
    clusters = {
        t: [Cluster(cost_s=1.0, score=50.0), Cluster(cost_s=0.5, score=100.0)] for t in "ab"
    }
    ref = [0.01, 0.1, 0.2, 0.4]
    problems = [
        EnamelProblem(
            task_id="p",
            reference_times_s=ref,
            level_limits_s=enamel_level_limits(ref),
            samples=[EnamelSample(correct=True, level_times_s=ref)],
        )
    ]
    for name in metric_names():
        metric = get_metric(name)
        assert isinstance(metric, Metric)
        if name == "eff@k":
            result = metric.compute(problems)
        elif name in ("p-tau", "beyond", "mercury-beyond"):
            result = metric.compute(verdicts, pools=pools)
        elif name in (
            "effibench-nmu",
            "effibench-ntmu",
            "effibench-x-memory",
            "effibench-x-integral",
        ):
            memory = {"peak_rss_mb": 10.0, "memory_integral_mb_s": 2.0}
            canonical = {"a": StoredMeasurement(median_s=0.5, peak_rss_mb=5.0,
                                                memory_integral_mb_s=1.0)}  # fmt: skip
            result = metric.compute([mk("a", Stage.OK, 0.75, cand=memory)], canonical=canonical)
        elif name in ("dps", "dps_norm"):
            result = metric.compute(verdicts, clusters=clusters)
        else:
            result = metric.compute(verdicts)
        assert isinstance(result, MetricResult)
        assert result.n in (1, 2)
        assert result.config, name  # the settings travel with the result


def test_settings_rebuild_the_metric() -> None:
    m = get_metric("p-tau", tau=30, k=10)
    assert m.name == "p30_pass@10"
    assert get_metric("opt@k", k=5, hack_adjusted=True).name == "opt@5(hack-adj)"
    assert get_metric("cgre>=x", cgre_threshold=0.9).name == "cgre>=0.9"
    assert get_metric("beyond", dimension="integral").name == "beyond-I"


def test_errors_are_config_errors(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="no metric named"):
        get_metric("speed")
    with pytest.raises(ConfigError, match="invalid settings"):
        get_metric("p-tau", tau=0)
    with pytest.raises(ConfigError, match="invalid settings"):
        get_metric("crr", typo=1)
    with pytest.raises(ConfigError, match="unexpected inputs"):
        get_metric("crr").compute([mk("a", Stage.WO)], pools={})
    with pytest.raises(ConfigError, match="unexpected inputs"):
        get_metric("p-tau").compute([mk("a", Stage.WO)], pool={})
    with pytest.raises(ConfigError, match="already registered"):
        register_metric("crr", lambda: get_metric("crr"))
