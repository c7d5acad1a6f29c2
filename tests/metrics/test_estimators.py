"""Estimators against brute force and hand-computed values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from perfgym.errors import ConfigError
from perfgym.metrics.estimators import (
    eff_at_k,
    fraction_not_faster,
    geometric_mean,
    harmonic_mean,
    hodges_lehmann,
    nearest_rank,
    pass_at_k,
)


def test_hodges_lehmann_is_median_of_walsh_averages_including_the_diagonal() -> None:
    # Walsh averages (i <= j) of 1,2,3,10: 1 1.5 2 2 2.5 3 5.5 6 6.5 10 -> median 2.75.
    assert hodges_lehmann([1.0, 2.0, 3.0, 10.0]) == pytest.approx(2.75)
    assert hodges_lehmann([3.0, 1.0, 10.0, 2.0]) == pytest.approx(2.75)
    assert hodges_lehmann([0.5]) == 0.5
    # Robust to one wild repeat where the mean is not.
    assert hodges_lehmann([1.0, 1.0, 1.0, 1.0, 1.0, 100.0]) == pytest.approx(1.0)


def test_pass_at_k_matches_the_binomial_formula() -> None:
    for n in range(1, 12):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1.0 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_eff_at_k_is_the_expected_max_over_all_k_subsets() -> None:
    rng = np.random.default_rng(7)
    for n in range(1, 8):
        scores = rng.random(n).round(3).tolist()
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(scores, k))
            brute = sum(max(s) for s in subsets) / len(subsets)
            assert eff_at_k(scores, k) == pytest.approx(brute, abs=1e-12)


def test_eff_at_k_on_binary_scores_is_pass_at_k() -> None:
    for n, c, k in [(10, 3, 1), (10, 3, 5), (5, 0, 2), (5, 5, 3)]:
        scores = [1.0] * c + [0.0] * (n - c)
        assert eff_at_k(scores, k) == pytest.approx(pass_at_k(n, c, k))


def test_eff_at_1_is_the_mean() -> None:
    assert eff_at_k([0.2, 0.4, 0.9], 1) == pytest.approx(0.5)


def test_means_of_ratios() -> None:
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert harmonic_mean([2.5, 0.2]) == pytest.approx(2 / (0.4 + 5.0))


def test_nearest_rank_returns_a_real_value() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert nearest_rank(values, 50) == 2.0  # ceil(0.5*4) = 2nd smallest
    assert nearest_rank(values, 100) == 4.0
    assert nearest_rank(values, 10) == 1.0  # ceil(0.4) = 1st
    assert nearest_rank(values, 75) == 3.0
    # 30% of 10 is exactly 3: floating error must not push it to the 4th value.
    assert nearest_rank([float(i) for i in range(1, 11)], 30) == 3.0


def test_percentile_rank_counts_ties_as_beaten() -> None:
    pool = [1.0, 2.0, 3.0, 4.0]
    assert fraction_not_faster(pool, 2.0) == 0.75
    assert fraction_not_faster(pool, 0.5) == 1.0
    assert fraction_not_faster(pool, 5.0) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: hodges_lehmann([]),
        lambda: hodges_lehmann([1.0, float("nan")]),
        lambda: pass_at_k(5, 2, 6),
        lambda: pass_at_k(5, 6, 1),
        lambda: pass_at_k(0, 0, 1),
        lambda: eff_at_k([0.5, 0.2], 3),
        lambda: eff_at_k([0.5, -0.2], 1),
        lambda: geometric_mean([1.0, 0.0]),
        lambda: harmonic_mean([1.0, -1.0]),
        lambda: nearest_rank([1.0, 2.0], 0),
        lambda: nearest_rank([1.0, 2.0], 101),
        lambda: geometric_mean([1.0, float("inf")]),
    ],
)
def test_bad_input_is_a_config_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        call()
