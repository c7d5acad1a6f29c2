"""Metrics by name: `get_metric("p-tau", tau=30, k=10)` rebuilds a metric from name + settings.

Factories take their config's fields as keyword arguments (unknown ones are refused by the
config models), so a result's `config` dict is enough to rebuild the metric that produced it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perfgym.errors import ConfigError
from perfgym.metrics.beyond import BeyondConfig, BeyondMetric, MercuryConfig, MercuryMetric
from perfgym.metrics.effibench import EffiBenchConfig, EffiBenchMetric
from perfgym.metrics.effibench_x import EffiBenchXConfig, EffiBenchXMetric
from perfgym.metrics.enamel import EnamelConfig, EnamelMetric
from perfgym.metrics.evalperf import DPSMetric, EvalPerfConfig
from perfgym.metrics.gso import GSOConfig, GSOMetric
from perfgym.metrics.perfcodebench import COLUMNS, PerfCodeBenchConfig, PerfCodeBenchMetric
from perfgym.metrics.ptau import PassAtKConfig, PassAtKMetric, PTauConfig, PTauMetric
from perfgym.metrics.result import Metric
from perfgym.metrics.swefficiency import SpeedupRatioConfig, SpeedupRatioMetric

Factory = Callable[..., Metric]

_REGISTRY: dict[str, Factory] = {}


def register_metric(name: str, factory: Factory) -> None:
    """Make `factory(**settings) -> Metric` available as `get_metric(name, **settings)`."""
    if name in _REGISTRY:
        raise ConfigError(f"metric {name!r} is already registered")
    _REGISTRY[name] = factory


def get_metric(name: str, **settings: Any) -> Metric:
    """Build the metric registered under `name` with `settings` (its config's fields)."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown metric {name!r}; known: {sorted(_REGISTRY)}") from None
    try:
        return factory(**settings)
    except ValueError as e:  # pydantic's ValidationError is a ValueError
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"metric {name!r}: invalid settings: {e}") from e


def metric_names() -> list[str]:
    """Every registered metric name."""
    return sorted(_REGISTRY)


def _column(column: str) -> Factory:
    return lambda **s: PerfCodeBenchMetric(column, PerfCodeBenchConfig(**s))


for _col in COLUMNS:
    register_metric(_col, _column(_col))
register_metric("pass@k", lambda **s: PassAtKMetric(PassAtKConfig(**s)))
register_metric("p-tau", lambda **s: PTauMetric(PTauConfig(**s)))
register_metric("beyond", lambda **s: BeyondMetric(BeyondConfig(**s)))
register_metric("mercury-beyond", lambda **s: MercuryMetric(MercuryConfig(**s)))
register_metric("eff@k", lambda **s: EnamelMetric(EnamelConfig(**s)))
register_metric("opt@k", lambda **s: GSOMetric("opt", GSOConfig(**s)))
register_metric("sp@k", lambda **s: GSOMetric("sp", GSOConfig(**s)))
register_metric("swefficiency-sr", lambda **s: SpeedupRatioMetric(SpeedupRatioConfig(**s)))


def _fixed(name: str, key: str, value: Any, build: Factory) -> Factory:
    """A factory whose config field `key` is fixed by the metric's name (a result's config,
    which records it, rebuilds the same metric; another value is refused)."""

    def factory(**s: Any) -> Metric:
        if s.get(key, value) != value:
            raise ConfigError(f"metric {name!r}: {key} is {value!r}, not {s[key]!r}")
        return build(**{**s, key: value})

    return factory


for _q in ("net", "nmu", "ntmu"):
    register_metric(
        f"effibench-{_q}",
        _fixed(
            f"effibench-{_q}", "quantity", _q, lambda **s: EffiBenchMetric(EffiBenchConfig(**s))
        ),
    )
register_metric("dps", _fixed("dps", "norm", False, lambda **s: DPSMetric(EvalPerfConfig(**s))))
register_metric(
    "dps_norm", _fixed("dps_norm", "norm", True, lambda **s: DPSMetric(EvalPerfConfig(**s)))
)
for _d in ("time", "memory", "integral"):
    register_metric(
        f"effibench-x-{_d}",
        _fixed(
            f"effibench-x-{_d}",
            "dimension",
            _d,
            lambda **s: EffiBenchXMetric(EffiBenchXConfig(**s)),
        ),
    )
