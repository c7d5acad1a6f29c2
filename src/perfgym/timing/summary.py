"""Summarising repeated duration samples: estimator, spread (CV) and a bootstrap CI."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Literal

import numpy as np

from perfgym.metrics.estimators import hodges_lehmann

Estimator = Literal["median", "hodges_lehmann", "minimum", "mean"]
_BOOT = 400


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


def bootstrap_ci(
    samples: Sequence[float], estimator: Estimator = "median", level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the estimator; None with fewer than three samples."""
    if len(samples) < 3:
        return None
    x = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(_BOOT, len(x)))
    draws = x[idx]
    if estimator == "median":
        stats = np.median(draws, axis=1)
    elif estimator == "minimum":
        stats = draws.min(axis=1)
    elif estimator == "mean":
        stats = draws.mean(axis=1)
    else:
        stats = np.array([hodges_lehmann(list(row)) for row in draws])
    alpha = (1 - level) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha])
    return float(lo), float(hi)
