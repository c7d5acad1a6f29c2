"""A task's noise band: how far apart two single runs of one program land on this machine,
from an A/A measurement of the baseline against its own copy (the decision's fallback when a
measurement has too few rounds for a test), or from such pairs met batch by batch."""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfgym.errors import ConfigError

#: Rounds an A/A measurement needs before its spread means anything (a t quantile with 2 df).
MIN_AA_ROUNDS = 3


def aa_noise_band(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> float:
    """The relative band r (ratio within [1/(1+r), 1+r]) that a new single-round ratio of two
    copies of one program falls in with probability `level`.

    `a[i]`, `b[i]` are round i of the copy and the program, measured interleaved. With
    d_i = log(a_i / b_i) over n rounds, the band is the prediction interval of one more d:
    exp(|mean d| + t_{n-1, (1+level)/2} · sd(d) · sqrt(1 + 1/n)) − 1. The mean is kept in,
    because two copies on this kind of machine differ systematically by a few per cent.
    """
    if len(a) != len(b):
        raise ConfigError(f"aa_noise_band: {len(a)} vs {len(b)} rounds")
    if len(a) < MIN_AA_ROUNDS:
        raise ConfigError(f"aa_noise_band: needs at least {MIN_AA_ROUNDS} rounds, got {len(a)}")
    if any(not (math.isfinite(x) and x > 0) for x in [*a, *b]):
        raise ConfigError("aa_noise_band: a duration is not finite and positive")
    return log_ratio_band([math.log(x / y) for x, y in zip(a, b, strict=True)], level)


def log_ratio_band(d: Sequence[float], level: float = 0.95) -> float:
    """`aa_noise_band` from the log ratios d_i = log(a_i / b_i) of pairs of single runs of one
    program (an A/A measurement's rounds, or a history of such pairs met batch by batch)."""
    n = len(d)
    if n < MIN_AA_ROUNDS:
        raise ConfigError(f"noise band: needs at least {MIN_AA_ROUNDS} pairs, got {n}")
    if any(not math.isfinite(x) for x in d):
        raise ConfigError("noise band: a log ratio is not finite")
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    from scipy.stats import t  # scipy loads where a band is computed

    half = abs(mean) + float(t.ppf((1 + level) / 2, n - 1)) * sd * math.sqrt(1 + 1 / n)
    return math.exp(half) - 1.0


def conformal_ready(n: int, level: float = 0.95) -> bool:
    """Whether `n` pairs give `history_band` its distribution-free bound (19 at 0.95)."""
    return math.ceil((n + 1) * level) <= n


def history_band(d: Sequence[float], level: float = 0.95) -> float:
    """The band one more pair's log ratio falls in with probability `level`, from the log
    ratios `d` of the pairs met so far: their split-conformal bound, the ⌈(n+1)·level⌉-th
    smallest |d_i| (valid for any distribution of exchangeable pairs, and one outlier moves it
    one rank, not the whole spread), once there are enough pairs for it; before that the
    normal-theory prediction interval (`log_ratio_band`). Heavy tails are this kind of
    machine's: its CPU clock runs in phases seconds long (red team rt104 measured 4.5 against
    6.8 ms for one fixed chunk of work), and one far pair kept a normal interval 1.7x wide for
    the next 55 batches, paying a real 1.27x gain the floor 5 times in 6."""
    n = len(d)
    if not conformal_ready(n, level):
        return log_ratio_band(d, level)
    rank = math.ceil((n + 1) * level)
    if any(not math.isfinite(x) for x in d):
        raise ConfigError("noise band: a log ratio is not finite")
    return math.expm1(sorted(abs(x) for x in d)[rank - 1])
