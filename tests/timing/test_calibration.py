"""The affine map: recovery of known maps, outliers, fit quality, per-epoch maps, use by rewards."""

import numpy as np
import pytest

from perfgym.errors import ConfigError
from perfgym.rewards._pool import calibration_fn
from perfgym.tasks.task import StoredMeasurement
from perfgym.timing.calibration import calibrate_stored, fit_affine, fit_epochs, paired_durations


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


def test_a_quarter_of_the_references_hit_by_bursts_cannot_pull_the_line():
    rng = np.random.default_rng(1)
    stored = np.geomspace(0.02, 3.0, 24)
    fresh = (1.7 * stored + 0.012) * (1 + rng.normal(0, 0.02, 24))
    hit = rng.choice(24, 6, replace=False)
    fresh[hit] *= rng.uniform(1.4, 2.5, 6)  # re-measured while something else ran
    m = fit_affine(stored, fresh, groups=[f"t{i // 3}" for i in range(24)])
    assert m.slope == pytest.approx(1.7, rel=0.04)
    assert m.intercept_s == pytest.approx(0.012, abs=0.004)
    assert m.outliers >= 5 and m.median_rel_residual < 0.03
    ols = np.polyfit(stored, fresh, 1)  # what a plain least-squares line does with them
    assert abs(ols[0] - 1.7) > 3 * abs(m.slope - 1.7)


def test_each_epoch_gets_its_own_map():
    refs = {f"t{i}/r{j}": {"w": 0.05 * (i + 1) * (j + 1)} for i in range(4) for j in range(3)}
    old = {k: {"w": (v["w"] - 0.04) / 2.0} for k, v in refs.items()}  # a 2x faster campaign
    new = {k: {"w": v["w"] / 0.8} for k, v in refs.items()}  # a slower machine, no overhead
    maps = fit_epochs({"old": old, "new": new}, refs, clock="cpu", to_machine="here")
    assert maps.maps["old"].as_tuple() == pytest.approx((2.0, 0.04))
    assert maps.maps["new"].as_tuple() == pytest.approx((0.8, 0.0), abs=1e-9)
    assert maps("new", 1.0) == pytest.approx(0.8) and maps.maps["old"].from_machine == "old"
    sm = StoredMeasurement(median_s=0.5, per_workload_s={"w": 0.5}, machine="old")
    assert maps.calibrate(sm).median_s == pytest.approx(1.04)
    with pytest.raises(ConfigError):  # never an identity for an epoch nobody calibrated
        maps("elsewhere", 1.0)


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
