"""Timing: how repeated runs become a duration with its spread, CI and trust status.

    result         Timing, TimingStatus: a variant's measured cost and whether it may be used
    estimators     Hodges–Lehmann and the finite-input check estimators share
    summary        estimators (median, Hodges–Lehmann, minimum), CV, robust CV, the estimate's CI
    compare        compare(a, b): ratio, CI, test, margin, decision; faster_than(strict|significant)
    decision       speed_call(a, b, decision): faster / tie / slower, the rule behind every claim
    noise_band     aa_noise_band: a task's A/A band, the decision's fallback with too few rounds
    check_configs  DriftConfig, FirstCallConfig: the checks' settings, without the sandbox
    drift          fixed probe programs, their noise bands, DriftMonitor
    first_call     first call vs repeated calls in one process (caching signature)
    instructions   deterministic mode: instruction counts via hardware counters or Valgrind
    calibration    affine map stored -> present machine (DMC-Optim §C.7), one per campaign
    filterability  duration filterability of a task's workloads (robust CV >= 0.3)
    stability      rerun swings, ranking correlation and decision flips

The schedule itself (interleaving, pinning, early stopping) is `perfgym.judge.measure`,
configured by `perfgym.judge.JudgeConfig`; see docs/timing.md. Names load on first use: the
probes and the first-call check need the sandbox, a `Timing` does not.
"""

from typing import TYPE_CHECKING

from perfgym._lazy import exports_of, lazy_exports

# `compare` is also a submodule's name: imported here so the function, not the module, wins.
from perfgym.timing.compare import (
    DEFAULT_MARGIN,
    Comparison,
    FasterRule,
    compare,
    compare_timings,
    faster_than,
    timing_margin,
)

if TYPE_CHECKING:
    from perfgym.timing.calibration import (
        AffineMap,
        EpochMaps,
        calibrate_stored,
        fit_affine,
        fit_epochs,
        paired_durations,
    )
    from perfgym.timing.check_configs import DriftConfig, FirstCallConfig
    from perfgym.timing.decision import DECISIONS, Decision, SpeedCall, speed_call
    from perfgym.timing.drift import DriftCheck, DriftMonitor, ProbeReport
    from perfgym.timing.estimators import hodges_lehmann
    from perfgym.timing.filterability import Filterability, duration_filterability
    from perfgym.timing.first_call import FirstCallReport, first_call_check
    from perfgym.timing.noise_band import aa_noise_band
    from perfgym.timing.result import Timing, TimingStatus
    from perfgym.timing.summary import cv, estimate, estimate_ci, relative_half_width, robust_cv

_EXPORTS = exports_of(
    {
        "perfgym.timing.calibration": (
            "AffineMap",
            "EpochMaps",
            "calibrate_stored",
            "fit_affine",
            "fit_epochs",
            "paired_durations",
        ),
        "perfgym.timing.decision": ("DECISIONS", "Decision", "SpeedCall", "speed_call"),
        "perfgym.timing.noise_band": ("aa_noise_band",),
        "perfgym.timing.check_configs": ("DriftConfig", "FirstCallConfig"),
        "perfgym.timing.drift": ("DriftCheck", "DriftMonitor", "ProbeReport"),
        "perfgym.timing.estimators": ("hodges_lehmann",),
        "perfgym.timing.filterability": ("Filterability", "duration_filterability"),
        "perfgym.timing.first_call": ("FirstCallReport", "first_call_check"),
        "perfgym.timing.result": ("Timing", "TimingStatus"),
        "perfgym.timing.summary": (
            "cv",
            "estimate",
            "estimate_ci",
            "relative_half_width",
            "robust_cv",
        ),
    }
)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DECISIONS",
    "DEFAULT_MARGIN",
    "AffineMap",
    "Comparison",
    "Decision",
    "DriftCheck",
    "DriftConfig",
    "DriftMonitor",
    "EpochMaps",
    "FasterRule",
    "Filterability",
    "FirstCallConfig",
    "FirstCallReport",
    "ProbeReport",
    "SpeedCall",
    "Timing",
    "TimingStatus",
    "aa_noise_band",
    "calibrate_stored",
    "compare",
    "compare_timings",
    "cv",
    "duration_filterability",
    "estimate",
    "estimate_ci",
    "faster_than",
    "fit_affine",
    "fit_epochs",
    "first_call_check",
    "hodges_lehmann",
    "paired_durations",
    "relative_half_width",
    "robust_cv",
    "speed_call",
    "timing_margin",
]
