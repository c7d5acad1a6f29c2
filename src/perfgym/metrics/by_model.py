"""`evaluate(verdicts, metrics)`: registered metrics for each model of a mixed results set.

Every metric refuses a set that mixes models (a CRR over two models means nothing); this entry
point groups the verdicts by `Verdict.model` itself and computes each named metric per group:

    results = evaluate(verdicts, ["crr", "fbr"], settings={"crr": {"policy": {...}}})
    results["model-a"]["crr"].value
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics.registry import get_metric
from perfgym.metrics.result import MetricResult

#: PerfCodeBench's headline columns (RLPF Table 2), the default of `evaluate`.
HEADLINE_METRICS: tuple[str, ...] = ("crr", "fbr", "rbr", "cgre")


def group_by_model(verdicts: Sequence[Verdict]) -> dict[str, list[Verdict]]:
    """Model -> its verdicts, models in the order they first appear."""
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if not isinstance(v, Verdict):
            raise ConfigError(f"evaluate: expected Verdict objects, got {type(v).__name__}")
        groups.setdefault(v.model, []).append(v)
    return groups


def evaluate(
    verdicts: Sequence[Verdict],
    metrics: Sequence[str] = HEADLINE_METRICS,
    *,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    inputs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, MetricResult]]:
    """Model -> metric name -> `MetricResult`, each metric computed on that model's verdicts.

    `metrics` are registered names (`metric_names()`); `settings[name]` are the keyword
    settings `get_metric(name, ...)` builds it with, and `inputs[name]` the extra inputs its
    `compute` takes (e.g. `{"p-tau": {"pools": pools}}`). A setting or input for a metric that
    is not asked for is refused, as is an empty set; a metric that cannot score a model raises
    `ConfigError` naming the model.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ConfigError("evaluate: no metrics asked for")
    settings, inputs = settings or {}, inputs or {}
    for what, given in (("settings", settings), ("inputs", inputs)):
        stray = sorted(set(given) - set(names))
        if stray:
            raise ConfigError(f"evaluate: {what} for metrics not asked for: {stray}")
    if len(verdicts) == 0:
        raise ConfigError("evaluate: the results set is empty")
    built = {name: get_metric(name, **settings.get(name, {})) for name in names}
    out: dict[str, dict[str, MetricResult]] = {}
    for model, group in group_by_model(verdicts).items():
        row: dict[str, MetricResult] = {}
        for name, metric in built.items():
            try:
                row[name] = metric.compute(group, **inputs.get(name, {}))
            except ConfigError as exc:
                raise ConfigError(f"evaluate: model {model!r}, metric {name!r}: {exc}") from exc
        out[model] = row
    return out
