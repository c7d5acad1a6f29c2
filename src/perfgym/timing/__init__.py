"""Timing: how repeated runs become a duration with its spread, CI and trust status.

    summary        estimators (median, Hodges–Lehmann, minimum), CV, robust CV, bootstrap CI
    compare        compare(a, b): ratio, CI, test, margin, decision; faster_than(strict|significant)
    drift          fixed probe programs, their noise bands, DriftMonitor
    first_call     first call vs repeated calls in one process (caching signature)
    instructions   deterministic mode: instruction counts via hardware counters or Valgrind
    calibration    affine map stored -> present machine (DMC-Optim §C.7), one per campaign
    filterability  duration filterability of a task's workloads (robust CV >= 0.3)
    stability      rerun swings, ranking correlation and decision flips

The schedule itself (interleaving, pinning, early stopping) is `perfgym.judge.measure`,
configured by `perfgym.judge.JudgeConfig`; see docs/timing.md.
"""

from perfgym.timing.calibration import (
    AffineMap,
    EpochMaps,
    calibrate_stored,
    fit_affine,
    fit_epochs,
    paired_durations,
)
from perfgym.timing.compare import (
    DEFAULT_MARGIN,
    Comparison,
    FasterRule,
    compare,
    compare_timings,
    faster_than,
    timing_margin,
)
from perfgym.timing.drift import DriftCheck, DriftConfig, DriftMonitor, ProbeReport
from perfgym.timing.filterability import Filterability, duration_filterability
from perfgym.timing.first_call import FirstCallConfig, FirstCallReport, first_call_check
from perfgym.timing.summary import bootstrap_ci, cv, estimate, relative_half_width, robust_cv

__all__ = [
    "DEFAULT_MARGIN",
    "AffineMap",
    "Comparison",
    "DriftCheck",
    "DriftConfig",
    "DriftMonitor",
    "EpochMaps",
    "FasterRule",
    "Filterability",
    "FirstCallConfig",
    "FirstCallReport",
    "ProbeReport",
    "bootstrap_ci",
    "calibrate_stored",
    "compare",
    "compare_timings",
    "cv",
    "duration_filterability",
    "estimate",
    "faster_than",
    "fit_affine",
    "first_call_check",
    "fit_epochs",
    "paired_durations",
    "relative_half_width",
    "robust_cv",
    "timing_margin",
]
