"""Estimators and spreads on hand-checked samples."""

import pytest

from perfgym.timing.summary import cv, estimate, estimate_ci, relative_half_width, robust_cv


def test_robust_cv_ignores_one_outlier_that_dominates_cv():
    calm = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0]
    spiked = [*calm, 2.0]  # one 2x outlier, as a burst on a shared machine produces
    assert cv(spiked) > 0.3
    assert robust_cv(spiked) == pytest.approx(robust_cv([*calm, 1.02]), abs=0.02)
    assert robust_cv(spiked) < 0.05


def test_robust_cv_of_two_values_and_degenerate_inputs():
    # MAD of (1, 3) about the median 2 is 1: 1.4826 * 1 / 2
    assert robust_cv([1.0, 3.0]) == pytest.approx(0.7413)
    assert robust_cv([1.0]) is None
    assert robust_cv([0.0, 0.0]) is None


def test_estimators_and_relative_ci_width():
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]
    assert estimate(xs, "median") == 3.0
    assert estimate(xs, "minimum") == 1.0
    assert estimate(xs, "hodges_lehmann") == pytest.approx(3.0)
    tight = [1.0, 1.001, 0.999, 1.0, 1.0005]
    assert relative_half_width(tight) < 0.001
    assert relative_half_width([1.0, 2.0]) is None  # too few samples for a CI
    lo, hi = estimate_ci([1.0, 1.1, 0.9, 1.05, 0.95], "median", level=0.9)
    assert lo <= 1.0 <= hi
