"""`compare(a, b)`: is A faster than B? Ratio, its CI, a test, and the decision; the metrics'
"faster than baseline" rule (strict, as the papers count, or only when significant).

A difference is declared only when it is both statistically significant and larger than a
practical-equivalence margin m: the ratio's CI must lie wholly outside [1/(1+m), 1+m]. Two
copies of one program measured side by side differ systematically by a few per cent on this
kind of machine (which core, which neighbour, page placement); no test on more samples removes
that, so without the margin the A/A false-difference rate grows with the sample size."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.timing.result import Timing

if TYPE_CHECKING:
    import numpy as np

#: Practical-equivalence margin for durations: ratios within [1/1.03, 1.03] are "the same".
DEFAULT_MARGIN = 0.03

#: "significant": only when `compare` says the candidate is significantly faster (the default,
#: as every speed decision: DESIGN.md). "strict": Tc < Tb on the estimates (RLPF's FBR,
#: DMC-Optim's percentiles). `perfgym.timing.decision.speed_call` is the full decision.
FasterRule = Literal["strict", "significant"]


class Comparison(BaseModel):
    """A/B duration comparison; `ratio` = A / B (< 1: A is faster)."""

    model_config = ConfigDict(extra="forbid")

    ratio: float
    ci: tuple[float, float] | None = Field(None, description="CI of the ratio at 1 - alpha.")
    p_value: float | None = Field(None, description="Two-sided p-value of the test in `method`.")
    significant: bool = Field(
        description="p < alpha and the CI lies wholly outside [1/(1+margin), 1+margin]."
    )
    faster: str = Field(description="'a', 'b', or 'neither' (not significant).")
    n_a: int
    n_b: int
    method: str = Field(
        "mann-whitney",
        description="'mann-whitney': ratio of medians, bootstrap CI, rank test (independent "
        "samples); 'paired-t': geometric mean of per-round ratios, t interval and test on "
        "their logs (samples paired by interleaved round).",
    )
    margin: float = Field(0.0, description="Practical-equivalence margin the CI had to clear.")


def _check(samples: Sequence[float], name: str) -> np.ndarray:
    import numpy as np  # numpy loads where a sample is summarised, not on import

    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or len(x) == 0:
        raise ConfigError(f"compare: {name} has no samples")
    if not np.isfinite(x).all() or (x <= 0).any():
        raise ConfigError(f"compare: {name} holds a non-finite or non-positive duration")
    return x


def compare(
    a: Sequence[float],
    b: Sequence[float],
    *,
    alpha: float = 0.05,
    boot: int = 2000,
    seed: int = 0,
    paired: bool = False,
    margin: float = DEFAULT_MARGIN,
) -> Comparison:
    """Compare two duration samples. Significant only when the test rejects equality at
    `alpha` and the CI of the ratio lies wholly outside [1/(1+margin), 1+margin] (margin=0:
    the CI excludes 1). With a margin this is a minimum-effect test: when the true ratio is
    inside the band, each side is declared with probability at most alpha/2.

    Unpaired (default): median ratio, bootstrap CI, Mann-Whitney U. Note the rank test cannot
    reach p < 0.05 with fewer than 4 samples a side. `paired=True` pairs a[i] with b[i] (the
    same interleaved round, so slow drift cancels) and needs at least 3 pairs.
    """
    import numpy as np  # numpy loads where a sample is summarised, not on import

    xa, xb = _check(a, "a"), _check(b, "b")
    if not 0 <= margin < 1:
        raise ConfigError(f"compare: margin must be in [0, 1), got {margin}")
    if paired:
        return _paired(xa, xb, alpha, margin)
    ratio = float(np.median(xa) / np.median(xb))
    ci = None
    p = None
    if len(xa) >= 2 and len(xb) >= 2:
        rng = np.random.default_rng(seed)
        ma = np.median(xa[rng.integers(0, len(xa), (boot, len(xa)))], axis=1)
        mb = np.median(xb[rng.integers(0, len(xb), (boot, len(xb)))], axis=1)
        lo, hi = np.quantile(ma / mb, [alpha / 2, 1 - alpha / 2])
        ci = (float(lo), float(hi))
        from scipy.stats import mannwhitneyu  # scipy loads where a test is computed

        p = float(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    return _decide(ratio, ci, p, alpha, margin, len(xa), len(xb), "mann-whitney")


def _paired(xa: np.ndarray, xb: np.ndarray, alpha: float, margin: float) -> Comparison:
    import numpy as np  # numpy loads where a sample is summarised, not on import

    if len(xa) != len(xb):
        raise ConfigError(f"compare(paired=True): {len(xa)} vs {len(xb)} samples")
    d = np.log(xa) - np.log(xb)
    ratio = float(np.exp(d.mean()))
    if len(d) < 3:
        return _decide(ratio, None, None, alpha, margin, len(xa), len(xb), "paired-t")
    sd = float(d.std(ddof=1))
    if sd < 1e-12:  # the same ratio every round (to rounding): the CI is a point
        ci = (ratio, ratio)
        p = 1.0 if ratio == 1.0 else 0.0
    else:
        from scipy.stats import t, ttest_1samp  # scipy loads where a test is computed

        half = float(t.ppf(1 - alpha / 2, len(d) - 1)) * sd / np.sqrt(len(d))
        ci = (float(np.exp(d.mean() - half)), float(np.exp(d.mean() + half)))
        p = float(ttest_1samp(d, 0.0).pvalue)
    return _decide(ratio, ci, p, alpha, margin, len(xa), len(xb), "paired-t")


def _decide(ratio: float, ci: tuple[float, float] | None, p: float | None, alpha: float,
            margin: float, n_a: int, n_b: int, method: str) -> Comparison:  # fmt: skip
    hi, lo = 1.0 + margin, 1.0 / (1.0 + margin)
    outside = ci is not None and (ci[1] < lo or ci[0] > hi)
    significant = outside and p is not None and p < alpha
    faster = "neither" if not significant else ("a" if ratio < 1 else "b")
    return Comparison(ratio=ratio, ci=ci, p_value=p, significant=significant, faster=faster,
                      n_a=n_a, n_b=n_b, method=method, margin=margin)  # fmt: skip


def timing_margin(clock: str) -> float:
    """The default margin for a clock: instruction counts have no core or neighbour effects
    (CV ~3e-4 here), so any difference the test finds is real."""
    return 0.0 if clock == "instructions" else DEFAULT_MARGIN


def compare_timings(
    a: Timing,
    b: Timing,
    *,
    alpha: float = 0.05,
    paired: bool = False,
    margin: float | None = None,
) -> Comparison | None:
    """`compare` of two measured timings' per-round totals; None when either is unusable.

    paired=True is right for timings of one measurement (one verdict's candidate, baseline
    and reference, or candidates judged together: `samples_s[i]` is round i for all of them);
    margin None: `timing_margin(clock)`."""
    if not a.ok or not b.ok:
        return None
    if not a.samples_s or not b.samples_s or a.clock != b.clock:
        return None
    if paired and len(a.samples_s) != len(b.samples_s):
        raise ConfigError(
            f"compare_timings(paired=True): {len(a.samples_s)} vs {len(b.samples_s)} rounds; "
            "timings of one measurement always have the same rounds"
        )
    m = timing_margin(a.clock) if margin is None else margin
    return compare(a.samples_s, b.samples_s, alpha=alpha, paired=paired, margin=m)


def faster_than(
    candidate: Timing | None,
    baseline: Timing | None,
    rule: FasterRule = "significant",
    *,
    alpha: float = 0.05,
    paired: bool = False,
) -> bool | None:
    """Is the candidate faster than the baseline? None when either duration is unusable.

    'strict' compares the estimates (Tc < Tb), as RLPF and DMC-Optim count; 'significant'
    counts it only when `compare` finds the candidate significantly faster.
    """
    if candidate is None or baseline is None:
        return None
    # Not `usable_s`: the strict rule compares any two estimates of ok timings, as it always has.
    if not candidate.ok or not baseline.ok:
        return None
    if candidate.estimate_s is None or baseline.estimate_s is None:
        return None
    if candidate.clock != baseline.clock:
        return None
    if rule == "strict":
        return candidate.estimate_s < baseline.estimate_s
    c = compare_timings(candidate, baseline, alpha=alpha, paired=paired)
    return c is not None and c.faster == "a"
