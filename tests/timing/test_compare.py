"""compare(): unpaired rank test, the paired mode that cancels drift, and the FBR rule."""

import numpy as np
import pytest

from perfgym.judge.verdict import Timing, TimingStatus
from perfgym.timing.compare import compare, faster_than


def drifting_rounds(n: int, seed: int) -> np.ndarray:
    """Per-round machine speed factors swinging 1x-2x, as load comes and goes."""
    return 1.0 + np.random.default_rng(seed).random(n)


def test_paired_mode_sees_a_10_percent_gain_that_drift_hides_from_the_rank_test():
    drift = drifting_rounds(7, seed=1)
    b = 0.2 * drift
    a = 0.9 * b * (1 + np.random.default_rng(2).normal(0, 0.01, 7))
    unpaired = compare(a, b)
    paired = compare(a, b, paired=True)
    assert not unpaired.significant  # drift across rounds swamps a 10 % difference
    assert paired.significant and paired.faster == "a" and paired.method == "paired-t"
    assert paired.ratio == pytest.approx(0.9, rel=0.02)
    assert paired.ci[0] < 0.9 < paired.ci[1]


def test_unpaired_compare_needs_four_samples_a_side():
    fast, slow = [1.0, 1.01, 1.02], [2.0, 2.01, 2.02]
    assert not compare(fast, slow).significant  # the exact rank test bottoms out at p = 0.1
    assert compare([*fast, 1.0], [*slow, 2.0]).faster == "a"


def test_identical_programs_are_not_significant_in_either_mode():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        drift = drifting_rounds(5, int(rng.integers(1 << 30)))
        a = drift * (1 + rng.normal(0, 0.05, 5))
        b = drift * (1 + rng.normal(0, 0.05, 5))
        hits += compare(a, b).significant + compare(a, b, paired=True).significant
    assert hits / 400 <= 0.08  # nominal 5 %; a generous bound on 400 draws


def timing(samples, status=TimingStatus.OK, clock="cpu"):
    return Timing(samples_s=samples, estimate_s=float(np.median(samples)), status=status,
                  clock=clock)  # fmt: skip


def test_faster_than_strict_counts_noise_significant_does_not():
    base = timing([1.00, 1.05, 0.95, 1.02, 0.98])
    noise = timing([0.99, 1.04, 0.97, 1.03, 0.96])  # 1 % lower median, well within noise
    real = timing([0.50, 0.52, 0.49, 0.51, 0.50])
    assert faster_than(noise, base, "strict") is True
    assert faster_than(noise, base, "significant") is False
    assert faster_than(real, base, "significant") is True
    degraded = timing([0.5] * 5, status=TimingStatus.DEGRADED)
    assert faster_than(degraded, base, "strict") is None
    assert faster_than(real, timing([1.0] * 5, clock="wall")) is None  # clocks never mix
