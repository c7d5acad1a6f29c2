"""`compare(a, b)`: is A faster than B? Ratio, its bootstrap CI, a rank test, and the decision."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import mannwhitneyu

from perfgym.errors import ConfigError


class Comparison(BaseModel):
    """A/B duration comparison; `ratio` = median(A) / median(B) (< 1: A is faster)."""

    model_config = ConfigDict(extra="forbid")

    ratio: float
    ci: tuple[float, float] | None = Field(None, description="95% bootstrap CI of the ratio.")
    p_value: float | None = Field(None, description="Two-sided Mann-Whitney U p-value.")
    significant: bool = Field(description="CI excludes 1 and p < alpha.")
    faster: str = Field(description="'a', 'b', or 'neither' (not significant).")
    n_a: int
    n_b: int


def _check(samples: Sequence[float], name: str) -> np.ndarray:
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or len(x) == 0:
        raise ConfigError(f"compare: {name} has no samples")
    if not np.isfinite(x).all() or (x <= 0).any():
        raise ConfigError(f"compare: {name} holds a non-finite or non-positive duration")
    return x


def compare(
    a: Sequence[float], b: Sequence[float], *, alpha: float = 0.05, boot: int = 2000, seed: int = 0
) -> Comparison:
    """Compare two duration samples. Significant only when both the bootstrap CI of the median
    ratio excludes 1 and the rank test rejects equality at `alpha`."""
    xa, xb = _check(a, "a"), _check(b, "b")
    ratio = float(np.median(xa) / np.median(xb))
    ci = None
    p = None
    if len(xa) >= 2 and len(xb) >= 2:
        rng = np.random.default_rng(seed)
        ma = np.median(xa[rng.integers(0, len(xa), (boot, len(xa)))], axis=1)
        mb = np.median(xb[rng.integers(0, len(xb), (boot, len(xb)))], axis=1)
        lo, hi = np.quantile(ma / mb, [alpha / 2, 1 - alpha / 2])
        ci = (float(lo), float(hi))
        p = float(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    significant = ci is not None and p is not None and p < alpha and (ci[1] < 1 or ci[0] > 1)
    faster = "neither" if not significant else ("a" if ratio < 1 else "b")
    return Comparison(ratio=ratio, ci=ci, p_value=p, significant=significant, faster=faster,
                      n_a=len(xa), n_b=len(xb))  # fmt: skip
