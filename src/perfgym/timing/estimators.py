"""Location estimators of repeated samples: Hodges–Lehmann, the geometric mean, their input check.

Timing owns the estimator a duration is summarised by; metrics reuse these (ENAMEL's level
times are Hodges–Lehmann estimates) through `perfgym.metrics.estimators`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from perfgym.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np


def finite_values(values: Sequence[float], what: str, *, positive: bool = False) -> np.ndarray:
    """Return `values` as a float array after checking they are finite (and > 0 if asked)."""
    import numpy as np  # numpy loads where a sample is summarised, not on import

    if len(values) == 0:
        raise ConfigError(f"{what}: no values")
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ConfigError(f"{what}: expected a flat sequence of numbers")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ConfigError(f"{what}: non-finite value {arr[bad][0]!r}")
    if positive and (arr <= 0).any():
        raise ConfigError(f"{what}: values must be > 0, got {arr[arr <= 0][0]!r}")
    if not positive and (arr < 0).any():
        raise ConfigError(f"{what}: values must be >= 0, got {arr[arr < 0][0]!r}")
    return arr


def hodges_lehmann(samples: Sequence[float]) -> float:
    """Hodges–Lehmann location estimate: the median of all Walsh averages (x_i + x_j)/2, i ≤ j.

    ENAMEL (q-rz/enamel, `enam/evaluate.py::calc_exec_time`) uses exactly this on the 6 timed
    repeats of each test: pairwise means over the lower triangle *including* the diagonal.
    """
    import numpy as np  # numpy loads where a sample is summarised, not on import

    x = finite_values(samples, "hodges_lehmann")
    i, j = np.triu_indices(len(x))
    return float(np.median((x[i] + x[j]) / 2.0))


def geometric_mean(values: Iterable[float], what: str = "geometric mean") -> float:
    """exp(mean(log x)) of positive values: the one spelling of an average of ratios (speed-ups,
    per-round ratios). No numpy: rewards and trainers call it. +inf stays inf; a value that is
    not > 0 (nan included) or no values at all is a `ConfigError` naming `what`."""
    logs = []
    for v in values:
        if not v > 0:
            raise ConfigError(f"{what}: values must be > 0, got {v!r}")
        logs.append(math.log(v))
    if not logs:
        raise ConfigError(f"{what}: no values")
    return math.exp(math.fsum(logs) / len(logs))
