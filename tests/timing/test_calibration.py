"""The affine map: recovery of known maps, outliers, fit quality, use by rewards."""

import numpy as np
import pytest

from perfgym.errors import ConfigError
from perfgym.rewards._pool import calibration_fn
from perfgym.tasks.task import StoredMeasurement
from perfgym.timing.calibration import calibrate_stored, fit_affine, paired_durations


def test_fit_recovers_dmc_optims_published_map():
    # DMC-Optim §C.7 reports fresh = 0.6306 * stored + 0.0529 s
    stored = np.geomspace(0.02, 4.0, 30)
    fresh = 0.6306 * stored + 0.0529
    m = fit_affine(stored, fresh, groups=[f"t{i // 3}" for i in range(30)])
    assert m.slope == pytest.approx(0.6306, rel=1e-6)
    assert m.intercept_s == pytest.approx(0.0529, rel=1e-6)
    assert m.r2 == pytest.approx(1.0) and m.cv_r2 == pytest.approx(1.0)
    assert m(1.0) == pytest.approx(0.6835)
    assert calibration_fn(m.as_tuple())(1.0) == pytest.approx(0.6835)  # rewards take it as is


def test_relative_weighting_keeps_fast_workloads_right_and_one_burst_is_dropped():
    rng = np.random.default_rng(0)
    stored = np.geomspace(0.01, 5.0, 40)
    fresh = (2.0 * stored + 0.02) * (1 + rng.normal(0, 0.02, 40))
    fresh[7] *= 3.0  # one reference re-measured during a burst
    m = fit_affine(stored, fresh, groups=[f"t{i // 4}" for i in range(40)])
    assert m.outliers >= 1 and m.n <= 39
    assert m.slope == pytest.approx(2.0, rel=0.05)
    assert m.intercept_s == pytest.approx(0.02, abs=0.005)
    assert m.median_rel_residual < 0.03
    assert m.cv_r2 > 0.99


def test_fit_refuses_what_it_cannot_fit():
    with pytest.raises(ConfigError):
        fit_affine([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ConfigError):
        fit_affine([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ConfigError):
        fit_affine([1.0, 2.0, -3.0], [1.0, 2.0, 3.0])


def test_paired_durations_and_calibrate_stored():
    stored = {"t1/ref": {"w1": 1.0, "w2": 2.0}, "t2/ref": {"w1": 3.0}, "t3/ref": {"w9": 1.0}}
    fresh = {"t1/ref": {"w1": 2.0, "w2": 4.0}, "t2/ref": {"w1": 6.0, "w2": 1.0}}
    xs, ys, gs = paired_durations(stored, fresh)
    assert (xs, ys, gs) == ([1.0, 2.0, 3.0], [2.0, 4.0, 6.0], ["t1", "t1", "t2"])
    m = fit_affine(xs, ys, groups=gs)
    sm = StoredMeasurement(median_s=1.5, samples_s=[1.0, 2.0], per_workload_s={"w1": 0.5})
    out = calibrate_stored(sm, m)
    assert out.median_s == pytest.approx(3.0) and out.per_workload_s["w1"] == pytest.approx(1.0)
    assert out.samples_s == pytest.approx([2.0, 4.0]) and "calibrated" in out.source
