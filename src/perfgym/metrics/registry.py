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
from perfgym.registry import Kind, get, names, register

Factory = Callable[..., Metric]

#: PerfCodeBench's columns (paper 000), each one line for `perfgym list metrics`.
_COLUMN_DOCS = {
    "crr": "PerfCodeBench: share of tasks with a correct program (paper 000)",
    "fbr": "PerfCodeBench: share correct and faster than the baseline (paper 000)",
    "rbr": "PerfCodeBench: share correct and reaching the expert reference (paper 000)",
    "slow": "PerfCodeBench: share correct and not faster than the baseline (paper 000)",
    "gap": "PerfCodeBench: share faster than the baseline, not reference-level (paper 000)",
    "slow/crr": "PerfCodeBench: Slow over the correct tasks (paper 000)",
    "gap/fbr": "PerfCodeBench: Gap over the faster-than-baseline tasks (paper 000)",
    "cgre": "PerfCodeBench: mean share of the baseline-to-reference gap closed (paper 000)",
    "cgre>=x": "PerfCodeBench: share of tasks with CGRE >= cgre_threshold (paper 000)",
    "fbr_strict": "PerfCodeBench: FBR by the paper's strict rule (paper 000)",
    "rbr_strict": "PerfCodeBench: RBR by the paper's strict rule (paper 000)",
    "cgre_strict": "PerfCodeBench: CGRE by the paper's strict rule (paper 000)",
}


def register_metric(name: str, factory: Factory, *, doc: str = "") -> None:
    """Make `factory(**settings) -> Metric` available as `get_metric(name, **settings)`."""
    register(Kind.METRICS, name, doc=doc)(factory)


def get_metric(name: str, **settings: Any) -> Metric:
    """Build the metric registered under `name` with `settings` (its config's fields)."""
    factory: Factory = get(Kind.METRICS, name)
    try:
        return factory(**settings)
    except ValueError as e:  # pydantic's ValidationError is a ValueError
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"metric {name!r}: invalid settings: {e}") from e


def metric_names() -> list[str]:
    """Every registered metric name."""
    return names(Kind.METRICS)


def _column(column: str) -> Factory:
    return lambda **s: PerfCodeBenchMetric(column, PerfCodeBenchConfig(**s))


for _col in COLUMNS:
    register_metric(_col, _column(_col), doc=_COLUMN_DOCS[_col])
#: The metrics built from their config alone: name -> (factory, description).
_PLAIN: dict[str, tuple[Factory, str]] = {
    "pass@k": (lambda **s: PassAtKMetric(PassAtKConfig(**s)),
               "pass@k: one of k samples correct (the unbiased estimator)"),
    "p-tau": (lambda **s: PTauMetric(PTauConfig(**s)), "DMC-Optim p-tau pass@k: correct and no "
              "slower than the tau-th percentile human (paper 003)"),
    "beyond": (lambda **s: BeyondMetric(BeyondConfig(**s)),
               "Venus/Afterburner Beyond-T/M/I: share of passing human solutions beaten (paper 004)"),
    "mercury-beyond": (lambda **s: MercuryMetric(MercuryConfig(**s)),
                       "Mercury's Beyond: position in the pool's runtime range, per task"),
    "eff@k": (lambda **s: EnamelMetric(EnamelConfig(**s)),
              "ENAMEL eff@k: level-by-level efficiency against the expert reference"),
    "opt@k": (lambda **s: GSOMetric("opt", GSOConfig(**s)),
              "GSO Opt@K: an attempt 1.2x faster than the base and matching the expert (paper 001)"),
    "sp@k": (lambda **s: GSOMetric("sp", GSOConfig(**s)),
             "PerfAgent Sp@K: an attempt correct and 1.2x faster than the base (paper 001)"),
    "swefficiency-sr": (lambda **s: SpeedupRatioMetric(SpeedupRatioConfig(**s)),
                        "SWE-fficiency: harmonic mean of the patch's speed-up over the expert's"),
}  # fmt: skip
for _name, (_build, _doc) in _PLAIN.items():
    register_metric(_name, _build, doc=_doc)


def _fixed(name: str, key: str, value: Any, build: Factory) -> Factory:
    """A factory whose config field `key` is fixed by the metric's name (a result's config,
    which records it, rebuilds the same metric; another value is refused)."""

    def factory(**s: Any) -> Metric:
        if s.get(key, value) != value:
            raise ConfigError(f"metric {name!r}: {key} is {value!r}, not {s[key]!r}")
        return build(**{**s, key: value})

    return factory


_EFFIBENCH = {"net": "execution time", "nmu": "peak memory", "ntmu": "memory integral"}
for _q, _what in _EFFIBENCH.items():
    register_metric(
        f"effibench-{_q}",
        _fixed(
            f"effibench-{_q}", "quantity", _q, lambda **s: EffiBenchMetric(EffiBenchConfig(**s))
        ),
        doc=f"EffiBench {_q.upper()}: a correct sample's {_what} over the canonical solution's",
    )
register_metric(
    "dps",
    _fixed("dps", "norm", False, lambda **s: DPSMetric(EvalPerfConfig(**s))),
    doc="EvalPerf DPS: the performance cluster a passing sample matches",
)
register_metric(
    "dps_norm",
    _fixed("dps_norm", "norm", True, lambda **s: DPSMetric(EvalPerfConfig(**s))),
    doc="EvalPerf DPS_norm: DPS by the matched cluster's rank",
)
_EFFIBENCH_X = {"time": "execution time", "memory": "peak memory", "integral": "memory integral"}
for _d, _what in _EFFIBENCH_X.items():
    register_metric(
        f"effibench-x-{_d}",
        _fixed(
            f"effibench-x-{_d}",
            "dimension",
            _d,
            lambda **s: EffiBenchXMetric(EffiBenchXConfig(**s)),
        ),
        doc=f"EffiBench-X: canonical over the sample's {_what}, clipped to [0, 1]",
    )
