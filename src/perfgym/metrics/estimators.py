"""Shared estimators: Hodges–Lehmann, unbiased pass@k / eff@k, means of ratios, nearest rank.

Every function validates its input and raises `ConfigError` with a plain message instead of
letting NaN, negative or empty input reach numpy. `hodges_lehmann` and `finite_values` belong
to the timing layer (`perfgym.timing.estimators`) and are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from perfgym.errors import ConfigError
from perfgym.timing.estimators import finite_values, hodges_lehmann
from perfgym.timing.estimators import geometric_mean as _geometric_mean

__all__ = [
    "eff_at_k",
    "finite_values",
    "fraction_not_faster",
    "geometric_mean",
    "harmonic_mean",
    "hodges_lehmann",
    "nearest_rank",
    "pass_at_k",
]


def _check_nck(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ConfigError(f"pass@k: need at least one sample, got n={n}")
    if not 0 <= c <= n:
        raise ConfigError(f"pass@k: successes c={c} outside [0, n={n}]")
    if not 1 <= k <= n:
        raise ConfigError(f"pass@k: k={k} must lie in [1, n={n}] (n samples per task)")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k = 1 − C(n−c, k)/C(n, k) (Chen et al. 2021), as a stable product."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i): no huge binomials, exact for small n.
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def eff_at_k(scores: Sequence[float], k: int) -> float:
    """Unbiased expected maximum of k scores drawn without replacement from n (ENAMEL eff@k).

    With scores sorted ascending e_(1) ≤ … ≤ e_(n), E[max of a random k-subset] =
    Σ_{i=k}^{n} C(i−1, k−1)/C(n, k) · e_(i). The weights are built from the top down,
    w_n = k/n and w_{i−1} = w_i · (1 − (k−1)/(i−1)), as ENAMEL's `calc_eff_at_k` does, so no
    binomial coefficient is ever formed. For 0/1 scores it equals `pass_at_k`.
    """
    e = np.sort(finite_values(scores, "eff@k"))
    n = len(e)
    if not 1 <= k <= n:
        raise ConfigError(f"eff@k: k={k} must lie in [1, n={n}] (n samples per task)")
    weights = np.empty(n - k + 1)
    weights[-1] = k / n
    for idx in range(n - k - 1, -1, -1):
        i = idx + k + 1  # 1-based order-statistic index of weights[idx + 1]
        weights[idx] = weights[idx + 1] * (1.0 - (k - 1) / (i - 1))
    return float(np.dot(weights, e[k - 1 :]))


def geometric_mean(values: Sequence[float], what: str = "geometric mean") -> float:
    """exp(mean(log x)) of positive values."""
    return _geometric_mean(finite_values(values, what, positive=True).tolist(), what)


def harmonic_mean(values: Sequence[float], what: str = "harmonic mean") -> float:
    """n / Σ(1/x) of positive values."""
    x = finite_values(values, what, positive=True)
    return float(len(x) / np.sum(1.0 / x))


def nearest_rank(values: Sequence[float], tau: float) -> float:
    """The τ-th percentile by the nearest-rank rule: the ⌈τ/100·m⌉-th smallest of m values.

    It always returns one of the values (a real solution's duration, never an interpolation),
    so "no slower than the τ-th-percentile reference" compares against an actual reference.
    """
    if not 0.0 < tau <= 100.0 or math.isnan(tau):
        raise ConfigError(f"percentile tau={tau} must lie in (0, 100]")
    x = np.sort(finite_values(values, "nearest_rank"))
    rank = max(1, math.ceil(tau / 100.0 * len(x) - 1e-9))
    return float(x[rank - 1])


def fraction_not_faster(pool: Sequence[float], value: float) -> float:
    """Share of `pool` that is ≥ `value`: Venus/Afterburner's percentile rank (ties count as beaten).

    Afterburner's `utils.percentage_position` is 1 − bisect_left(sorted(pool), value)/len(pool),
    i.e. the fraction of pool entries that are not strictly smaller than the candidate.
    """
    x = finite_values(pool, "percentile pool")
    return float(np.count_nonzero(x >= value) / len(x))
