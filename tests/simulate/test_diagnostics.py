"""The diagnostics' arithmetic against hand-computed curves."""

import math

import numpy as np
import pytest

from perfgym.errors import ConfigError
from perfgym.metrics.bootstrap import BootstrapConfig
from perfgym.simulate.diagnostics import (
    activation_curve,
    area,
    clipped_slope,
    diagnose,
    monotonicity,
    smooth,
)


def ladder_points(n_tasks, levels, signal_of_quality):
    task, level, q, y = [], [], [], []
    for t in range(n_tasks):
        for lv in range(levels):
            task.append(f"t{t}")
            level.append(lv)
            q.append(lv / (levels - 1))
            y.append(signal_of_quality(lv / (levels - 1), t))
    return task, level, q, y


def test_diagonal_curve_is_ideal():
    task, level, q, y = ladder_points(6, 11, lambda x, t: x)
    curve, d = diagnose(task, level, q, y, bins=11, window=3)
    assert curve.x == pytest.approx([k / 10 for k in range(11)]) and curve.counts == [6] * 11
    assert d.auc == pytest.approx(0.5)
    assert d.diagonal_deviation == pytest.approx(0.0, abs=1e-12)
    assert d.diagonal_bias == pytest.approx(0.0, abs=1e-12)
    assert d.variance == pytest.approx(0.0, abs=1e-20)  # a straight line is its own trend
    assert d.steepness == pytest.approx(1.0, abs=1e-4)
    assert d.spearman == pytest.approx(1.0) and d.spearman_smoothed == pytest.approx(1.0)
    assert d.spearman_ci == pytest.approx((1.0, 1.0))
    assert d.monotonicity == 1.0
    assert (d.n_points, d.n_tasks) == (66, 6)


def test_hand_computed_small_curve():
    # Two tasks, three levels each: signals (0, .2, 1) and (0, .6, 1).
    task = ["a", "a", "a", "b", "b", "b"]
    level = [0, 1, 2, 0, 1, 2]
    q = [0, 0.5, 1, 0, 0.5, 1]
    y = [0, 0.2, 1, 0, 0.6, 1]
    curve, d = diagnose(task, level, q, y, bins=4, window=3)
    # Bins [0,.25) [.25,.5) [.5,.75) [.75,1]: the second is empty and dropped.
    assert curve.x == [0.0, 0.5, 1.0] and curve.y == pytest.approx([0.0, 0.4, 1.0])
    assert curve.counts == [2, 2, 2]
    # Ends are their own average; the middle is the mean of all three.
    assert curve.smoothed == pytest.approx([0.0, 1.4 / 3, 1.0])
    assert d.auc == pytest.approx(0.5 * (0 + 0.4) / 2 + 0.5 * (0.4 + 1) / 2)  # 0.45
    assert d.diagonal_deviation == pytest.approx(0.1 / 3)
    assert d.diagonal_bias == pytest.approx(-0.1 / 3)
    assert d.variance == pytest.approx((0.4 - 1.4 / 3) ** 2 / 3)
    assert d.monotonicity == 1.0
    # Spearman by hand: ranks of q (1.5, 3.5, 5.5 twice), of y (1.5, 3, 5.5, 1.5, 4, 5.5).
    rq = np.array([1.5, 3.5, 5.5, 1.5, 3.5, 5.5])
    ry = np.array([1.5, 3, 5.5, 1.5, 4, 5.5])
    expected = np.corrcoef(rq, ry)[0, 1]
    assert d.spearman == pytest.approx(expected)


def test_step_curve_is_steep_and_late():
    task, level, q, y = ladder_points(4, 11, lambda x, t: float(x > 0.55))
    curve, d = diagnose(task, level, q, y, bins=10, window=1)
    assert d.steepness == pytest.approx(10.0, rel=1e-3)  # the bound: one bin wide
    assert d.auc < 0.5
    assert d.diagonal_bias < 0 or d.auc < 0.5
    _, d3 = diagnose(task, level, q, y, bins=10, window=3)
    assert 2.0 < d3.steepness < d.steepness  # smoothing spreads the step over three bins


def test_constant_signal_has_no_correlation():
    task, level, q, y = ladder_points(3, 5, lambda x, t: 0.3)
    _, d = diagnose(task, level, q, y)
    assert d.spearman is None and d.spearman_ci is None and d.spearman_smoothed is None
    assert d.monotonicity == 0.0
    assert d.steepness == pytest.approx(0.0, abs=1e-6)
    assert any("constant" in n for n in d.notes)


def test_reversed_signal_is_negative():
    task, level, q, y = ladder_points(3, 5, lambda x, t: 1 - x)
    _, d = diagnose(task, level, q, y)
    assert d.spearman == pytest.approx(-1.0)
    assert d.monotonicity == -1.0
    assert d.steepness == pytest.approx(-1.0, abs=1e-4)


def test_ci_resamples_tasks_and_is_seeded():
    rng = np.random.default_rng(3)
    task, level, q, y = ladder_points(
        12, 6, lambda x, t: float(np.clip(x + rng.normal(0, 0.3), 0, 1))
    )
    cfg = BootstrapConfig(replicates=64, seed=5)
    _, a = diagnose(task, level, q, y, bootstrap=cfg)
    _, b = diagnose(task, level, q, y, bootstrap=cfg)
    assert a.spearman_ci == b.spearman_ci
    low, high = a.spearman_ci
    assert low < a.spearman < high


def test_helpers():
    assert area([0.5], [0.4]) == pytest.approx(0.4)
    assert area([0.25, 0.75], [0.0, 1.0]) == pytest.approx(0.5)
    assert smooth([0, 3, 6, 3], 3) == pytest.approx([0, 3, 4, 3])
    with pytest.raises(ConfigError):
        smooth([1, 2], 2)
    assert clipped_slope([0.5], [0.5], 10) == 0.0
    assert monotonicity(["a", "a", "b", "b"], [0, 1, 0, 1], np.array([0, 1, 1, 1])) == 0.5
    c = activation_curve(np.array([1.0, 1.0]), np.array([0.2, 0.4]), 5, 1)
    assert c.x == [1.0] and c.y == pytest.approx([0.3])


@pytest.mark.parametrize(
    "bad",
    [
        ([], [], [], []),
        (["a"], [0], [math.nan], [0.5]),
        (["a"], [0], [0.5], [1.5]),
        (["a", "b"], [0], [0.5], [0.5]),
    ],
)
def test_bad_input_is_a_config_error(bad):
    with pytest.raises(ConfigError):
        diagnose(*bad)
