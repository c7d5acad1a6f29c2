"""A single-round batch's baseline is its run and its twins' pooled (geometric mean): every
candidate is compared with the baseline measured at two or more places in the batch's order.

Found by red teams rt105 and rt107: equal-work copies of the baseline were paid in clusters,
each cluster a batch whose one baseline run landed in a slower moment than the copies'. Pooled
with its twin, an equal-work copy's log ratio to the baseline has about three quarters of the
variance of the twin ratios its band is set from (measured on py-lis-dp, 4 fresh judges x 30
batches: copies paid 2 of 648 pooled against 5 of 648 on the baseline's run alone, the same
calls; honest 1.3x and 1.6x programs 49 and 144 of 216 against 47 and 146)."""

from __future__ import annotations

import math

from perfgym.judge.noise_bands import pool_twins, twin_label
from perfgym.judge.twins import ROLE_TIMING, role_timing
from perfgym.timing.decision import speed_call
from perfgym.timing.result import Timing, TimingStatus


def run(s: float, **extra: object) -> Timing:
    """One single-round timing of `s` seconds over two workloads (a third and two thirds)."""
    fields: dict = {
        "estimate_s": s,
        "samples_s": [s],
        "per_workload_s": {"a": s / 3, "b": 2 * s / 3},
        "per_workload_samples_s": {"a": [s / 3], "b": [2 * s / 3]},
        "ci_s": (0.9 * s, 1.1 * s),
    }
    fields.update(extra)
    return Timing(**fields)


def batch(base: Timing, *twins: Timing) -> dict[str, Timing]:
    out = {"baseline": base, "reference": run(base.estimate_s / 10)}  # type: ignore[operator]
    out.update({twin_label(k): t for k, t in enumerate(twins)})
    return out


def test_the_baseline_is_its_run_and_its_twins_pooled() -> None:
    own = run(1.3, noise_band=0.25)
    timings = batch(own, run(1.1))
    pool_twins(timings)
    got = timings["baseline"]
    g = math.sqrt(1.3 * 1.1)
    assert math.isclose(got.estimate_s, g) and math.isclose(got.samples_s[0], g)  # type: ignore[arg-type]
    assert math.isclose(got.per_workload_s["b"], 2 * g / 3)
    assert math.isclose(got.per_workload_samples_s["a"][0], g / 3)
    assert got.ci_s is not None and math.isclose(got.ci_s[0], 0.9 * g)
    assert got.noise_band == 0.25  # the band stamped on it stays
    assert own.estimate_s == 1.3  # the measured timing itself is not rewritten
    assert timings["reference"].estimate_s == 0.13  # only the baseline is pooled


def test_a_copy_that_met_a_slow_baseline_run_is_no_longer_paid_and_a_real_gain_is() -> None:
    """The baseline's run landed slow (1.3 s) and its twin less so (1.1 s, inside the band):
    an equal-work copy at 1.0 s was paid as faster against the run alone, and is a tie against
    the two pooled; a program really 2x faster is faster either way."""
    band = 0.25
    timings = batch(run(1.3, noise_band=band), run(1.1))
    alone = timings["baseline"]
    pool_twins(timings)
    pooled = timings["baseline"]
    copy, fast = run(1.0), run(0.6)
    assert speed_call(copy, alone).outcome.value == "faster"  # type: ignore[union-attr]
    assert speed_call(copy, pooled).outcome.value == "tie"  # type: ignore[union-attr]
    assert speed_call(fast, pooled).outcome.value == "faster"  # type: ignore[union-attr]


def test_the_first_batch_pools_all_its_twins() -> None:
    timings = batch(run(1.0), run(1.1), run(0.9), run(1.2))
    pool_twins(timings)
    g = (1.0 * 1.1 * 0.9 * 1.2) ** 0.25
    assert math.isclose(timings["baseline"].estimate_s, g)  # type: ignore[arg-type]


def test_nothing_is_pooled_from_a_reused_a_failed_or_a_mismatched_run() -> None:
    cases = [
        batch(run(1.3, flags=["reused_timing"]), run(1.1)),  # an earlier batch's baseline
        batch(run(1.3), run(1.1, status=TimingStatus.DEGRADED)),  # a twin not trusted
        batch(run(1.3, status=TimingStatus.DEGRADED), run(1.1)),
        batch(run(1.3), run(1.1, samples_s=[1.1, 1.2])),  # rounds that do not line up
        batch(run(1.3), run(1.1, per_workload_s={"a": 0.4})),  # workloads that do not
        batch(run(1.3), run(1.1, per_workload_samples_s={"a": [0.4], "c": [0.7]})),
        batch(run(1.3), run(1.1, estimate_s=None)),
        batch(run(1.3), run(1.1, samples_s=[float("nan")])),
        batch(run(1.3)),  # no twin
    ]
    for timings in cases:
        before = timings["baseline"]
        pool_twins(timings)
        assert timings["baseline"] is before
    empty: dict[str, Timing] = {}
    pool_twins(empty)
    assert empty == {}


def test_a_candidate_that_is_the_baselines_program_gets_the_pooled_timing_too() -> None:
    """It has the baseline's timing (`twins.role_timing`), so it stays the baseline's after
    pooling; a reference's copy keeps the reference's."""
    own = run(1.3, noise_band=0.25)
    timings = batch(own, run(1.1))
    timings["copy-of-baseline"] = role_timing(own.model_copy(update={"noise_band": None}))
    timings["copy-of-reference"] = role_timing(timings["reference"])
    pool_twins(timings)
    got = timings["copy-of-baseline"]
    assert got.samples_s == timings["baseline"].samples_s and ROLE_TIMING in got.flags
    # the band stamped on the baseline is not the copy's: comparing the copy with the
    # reference uses the reference's band alone, as before pooling
    assert got.noise_band is None and timings["baseline"].noise_band == 0.25
    assert timings["copy-of-reference"].samples_s == timings["reference"].samples_s
