"""Summarising repeated duration samples: estimator, spread (CV, robust CV), the estimate's CI."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from perfgym.timing.estimators import hodges_lehmann

if TYPE_CHECKING:
    import numpy as np

Estimator = Literal["median", "hodges_lehmann", "minimum", "mean"]
_BOOT = 400
#: MAD × this estimates the standard deviation of normal data, so robust CV ≈ CV there.
MAD_TO_SD = 1.4826


def estimate(samples: Sequence[float], estimator: Estimator = "median") -> float:
    if not samples:
        raise ValueError("no samples to estimate from")
    if estimator == "median":
        return float(statistics.median(samples))
    if estimator == "hodges_lehmann":
        return hodges_lehmann(samples)
    if estimator == "minimum":
        return float(min(samples))
    if estimator == "mean":
        return float(statistics.fmean(samples))
    raise ValueError(f"unknown estimator {estimator!r}")


def cv(samples: Sequence[float]) -> float | None:
    """Coefficient of variation (sample stdev / mean); None with fewer than two samples."""
    if len(samples) < 2:
        return None
    mean = statistics.fmean(samples)
    return float(statistics.stdev(samples) / mean) if mean > 0 else None


def robust_cv(values: Sequence[float]) -> float | None:
    """1.4826 · MAD / median: a spread that one outlier cannot inflate; None below two values."""
    if len(values) < 2:
        return None
    med = statistics.median(values)
    if med <= 0:
        return None
    mad = statistics.median(abs(v - med) for v in values)
    return float(MAD_TO_SD * mad / med)


def _stat(draws: np.ndarray, estimator: Estimator) -> np.ndarray:
    import numpy as np  # numpy loads where a sample is summarised, not on import

    if estimator == "median":
        return np.asarray(np.median(draws, axis=1))
    if estimator == "minimum":
        return np.asarray(draws.min(axis=1))
    if estimator == "mean":
        return np.asarray(draws.mean(axis=1))
    return np.array([hodges_lehmann(list(row)) for row in draws])


def estimate_ci(
    samples: Sequence[float], estimator: Estimator = "median", level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of `estimate(samples, estimator)`; None below three samples.

    (`perfgym.metrics.bootstrap.bootstrap_ci` is the other bootstrap: it resamples tasks.)
    """
    import numpy as np  # numpy loads where a sample is summarised, not on import

    if len(samples) < 3:
        return None
    x = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(_BOOT, len(x)))
    stats = _stat(x[idx], estimator)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha])
    return float(lo), float(hi)


def relative_half_width(
    samples: Sequence[float], estimator: Estimator = "median", level: float = 0.95
) -> float | None:
    """Half the CI's width over the estimate: the early-stopping criterion; None if unknown."""
    ci = estimate_ci(samples, estimator, level)
    if ci is None:
        return None
    centre = estimate(samples, estimator)
    return (ci[1] - ci[0]) / 2 / centre if centre > 0 else None
