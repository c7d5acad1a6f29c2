"""compare(): unpaired rank test, the paired mode that cancels drift, the practical-equivalence
margin, and the FBR rule."""

import numpy as np
import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing, TimingStatus
from perfgym.timing.compare import DEFAULT_MARGIN, compare, compare_timings, faster_than


def drifting_rounds(n: int, seed: int) -> np.ndarray:
    """Per-round machine speed factors swinging 1x-2x, as load comes and goes."""
    return 1.0 + np.random.default_rng(seed).random(n)


def test_paired_mode_sees_a_10_percent_gain_that_drift_hides_from_the_rank_test():
    drift = drifting_rounds(7, seed=1)
    b = 0.2 * drift
    a = 0.9 * b * (1 + np.random.default_rng(2).normal(0, 0.01, 7))
    unpaired = compare(a, b)
    paired = compare(a, b, paired=True)
    assert paired.margin == DEFAULT_MARGIN
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


def test_a_small_systematic_gap_between_twins_is_significant_but_inside_the_margin():
    """Two copies of one program 2 % apart (a core or neighbour effect): with enough rounds the
    test finds the gap, so only the margin keeps the A/A check honest."""
    rng = np.random.default_rng(4)
    drift = drifting_rounds(9, seed=5)
    a = 0.3 * drift * 1.02 * (1 + rng.normal(0, 0.004, 9))
    b = 0.3 * drift * (1 + rng.normal(0, 0.004, 9))
    bare = compare(a, b, paired=True, margin=0.0)
    assert bare.significant and bare.faster == "b"  # real, and 2 %: not a difference that matters
    held = compare(a, b, paired=True)
    assert not held.significant and held.faster == "neither"
    assert held.p_value == pytest.approx(bare.p_value) and held.ci == bare.ci


def test_the_margin_keeps_the_false_difference_rate_of_biased_twins_under_alpha():
    rng = np.random.default_rng(6)
    hits = {"paired": 0, "unpaired": 0}
    for _ in range(300):
        drift = drifting_rounds(7, int(rng.integers(1 << 30)))
        a = drift * 1.02 * (1 + rng.normal(0, 0.03, 7))  # 2 % systematic, 3 % noise
        b = drift * (1 + rng.normal(0, 0.03, 7))
        hits["paired"] += compare(a, b, paired=True).significant
        hits["unpaired"] += compare(a, b).significant
    # a minimum-effect test: each side at most alpha/2 inside the band (here well below)
    assert hits["paired"] / 300 <= 0.025 and hits["unpaired"] / 300 <= 0.025


def test_pairs_1_2x_apart_are_still_decided_through_the_margin():
    rng = np.random.default_rng(7)
    decided = 0
    for _ in range(200):
        drift = drifting_rounds(5, int(rng.integers(1 << 30)))
        a = drift * 1.2 * (1 + rng.normal(0, 0.03, 5))
        b = drift * (1 + rng.normal(0, 0.03, 5))
        decided += compare(a, b, paired=True).faster == "b"
    assert decided / 200 >= 0.9


def test_margin_must_be_a_fraction():
    with pytest.raises(ConfigError):
        compare([1.0] * 3, [1.0] * 3, margin=1.5)


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


def test_compare_timings_pairs_rounds_and_counts_instructions_without_margin():
    base = timing([100.0, 100.0, 100.0, 100.0, 100.0], clock="instructions")
    one_pct = timing([99.0, 99.0, 99.0, 99.0, 99.0], clock="instructions")
    c = compare_timings(one_pct, base, paired=True)
    assert c.margin == 0.0 and c.faster == "a"  # deterministic counts: 1 % is real
    cpu = compare_timings(timing([0.99] * 5), timing([1.0] * 5), paired=True)
    assert cpu.margin == DEFAULT_MARGIN and cpu.faster == "neither"
    with pytest.raises(ConfigError):  # different rounds cannot come from one measurement
        compare_timings(timing([1.0] * 5), timing([1.0] * 6), paired=True)
