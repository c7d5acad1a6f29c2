"""`evaluate`: registered metrics per model, the verdicts of several models grouped by itself."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics import evaluate, get_metric, group_by_model
from perfgym.tasks.task import StoredMeasurement


def _two_models(mk):  # type: ignore[no-untyped-def]
    # Model "fast": both tasks correct, one faster than the baseline, one at reference speed.
    # Model "slow": one correct but slower than the baseline, one wrong answer.
    return [
        mk("t1", Stage.OK, 0.6, 1.0, 0.5, model="fast"),
        mk("t1", Stage.OK, 1.2, 1.0, 0.5, model="slow"),
        mk("t2", Stage.OK, 0.5, 1.0, 0.5, model="fast"),
        mk("t2", Stage.WO, None, 1.0, 0.5, model="slow"),
    ]


def test_each_model_gets_the_metric_of_its_own_verdicts(mk) -> None:  # type: ignore[no-untyped-def]
    verdicts = _two_models(mk)
    out = evaluate(verdicts, ["crr", "fbr", "rbr"])
    assert list(out) == ["fast", "slow"]
    assert out["fast"]["crr"].value == pytest.approx(1.0)
    assert out["fast"]["fbr"].value == pytest.approx(1.0)
    assert out["slow"]["crr"].value == pytest.approx(0.5)
    assert out["slow"]["fbr"].value == pytest.approx(0.0)
    for model, rows in out.items():
        mine = [v for v in verdicts if v.model == model]
        for name, result in rows.items():
            assert result == get_metric(name).compute(mine)


def test_the_default_metrics_are_the_perfcodebench_headline(mk) -> None:  # type: ignore[no-untyped-def]
    out = evaluate(_two_models(mk))
    assert set(out["fast"]) == {"crr", "fbr", "rbr", "cgre"}


def test_settings_and_inputs_reach_the_metric_they_name(mk) -> None:  # type: ignore[no-untyped-def]
    verdicts = _two_models(mk)
    pools = {t: [StoredMeasurement(median_s=s) for s in (0.5, 0.8, 1.0)] for t in ("t1", "t2")}
    out = evaluate(
        verdicts,
        ["p-tau", "crr"],
        settings={"p-tau": {"tau": 50, "k": 1}},
        inputs={"p-tau": {"pools": pools}},
    )
    fast = [v for v in verdicts if v.model == "fast"]
    expected = get_metric("p-tau", tau=50, k=1).compute(fast, pools=pools)
    assert out["fast"]["p-tau"] == expected
    assert out["fast"]["p-tau"].name == "p50_pass@1"


def test_bad_requests_are_refused_with_the_model_named(mk) -> None:  # type: ignore[no-untyped-def]
    verdicts = _two_models(mk)
    with pytest.raises(ConfigError, match="empty"):
        evaluate([])
    with pytest.raises(ConfigError, match="not asked for"):
        evaluate(verdicts, ["crr"], settings={"fbr": {}})
    with pytest.raises(ConfigError, match="no metric named"):
        evaluate(verdicts, ["no-such-metric"])
    with pytest.raises(ConfigError, match="model 'fast', metric 'p-tau'"):
        evaluate(verdicts, ["p-tau"])  # p-tau needs pools


def test_group_by_model_keeps_first_seen_order(mk) -> None:  # type: ignore[no-untyped-def]
    verdicts = [mk("t1", model="b"), mk("t1", model="a"), mk("t2", model="b")]
    groups = group_by_model(verdicts)
    assert list(groups) == ["b", "a"]
    assert [v.task_id for v in groups["b"]] == ["t1", "t2"]
