"""`speed_call`: the one decision behind every speed claim, and the A/A noise band it falls
back to when a measurement has too few rounds for a test."""

from __future__ import annotations

import random

import pytest

from perfgym.errors import ConfigError
from perfgym.timing.decision import speed_call
from perfgym.timing.noise_band import aa_noise_band
from perfgym.timing.result import Timing, TimingStatus
from perfgym.timing.summary import estimate_ci


def timing(samples: list[float], **extra: object) -> Timing:
    ci = estimate_ci(samples) if len(samples) >= 3 else None
    return Timing(estimate_s=sorted(samples)[len(samples) // 2], samples_s=samples, ci_s=ci,
                  **extra)  # type: ignore[arg-type]  # fmt: skip


def noisy(centre: float, n: int, seed: int, cv: float = 0.05) -> list[float]:
    rng = random.Random(seed)
    return [centre * (1 + rng.gauss(0, cv)) for _ in range(n)]


def test_strict_counts_any_order_significant_only_what_the_test_shows() -> None:
    base = timing(noisy(1.0, 5, 1))
    twin = timing(noisy(1.0, 5, 2))
    strict = speed_call(twin, base, "strict")
    assert strict is not None and strict.outcome in ("faster", "slower") and strict.how == "strict"
    sig = speed_call(twin, base)
    assert sig is not None and sig.outcome == "tie" and sig.how == "paired-t"
    fast = speed_call(timing(noisy(0.33, 5, 3)), base)
    assert fast is not None and fast.faster and fast.at_least_as_fast


def test_the_baselines_own_source_is_a_tie_by_construction_only_under_significant() -> None:
    base, quick = timing([1.0, 1.0, 1.0]), timing([0.5, 0.5, 0.5])
    tied = speed_call(quick, base, same_source=True)
    assert tied is not None and tied.outcome == "tie" and tied.how == "same-source"
    strict = speed_call(quick, base, "strict", same_source=True)
    assert strict is not None and strict.faster  # the paper's rule knows no sources


def test_one_round_without_a_noise_band_is_untestable_and_decides_nothing() -> None:
    call = speed_call(timing([0.5]), timing([1.0]))
    assert call is not None and call.outcome == "tie" and call.how == "untestable"


def test_one_round_is_decided_outside_the_tasks_noise_band_never_inside() -> None:
    band = 0.2
    inside = speed_call(timing([0.9], noise_band=band), timing([1.0], noise_band=band))
    assert inside is not None and inside.outcome == "tie" and inside.how == "noise-band"
    outside = speed_call(timing([0.5], noise_band=band), timing([1.0], noise_band=band))
    assert outside is not None and outside.faster and outside.how == "noise-band"
    slower = speed_call(timing([1.3], noise_band=band), timing([1.0]))
    assert slower is not None and slower.outcome == "slower"
    # The band is never narrower than the equivalence margin (3 %).
    tiny = speed_call(timing([0.98], noise_band=0.0), timing([1.0], noise_band=0.0))
    assert tiny is not None and tiny.outcome == "tie"


def test_given_durations_are_exact_and_a_sampled_side_must_clear_them_by_its_ci() -> None:
    exact = speed_call(Timing(estimate_s=0.5), Timing(estimate_s=1.0))
    assert exact is not None and exact.faster and exact.how == "exact"
    within = speed_call(Timing(estimate_s=0.99), Timing(estimate_s=1.0))
    assert within is not None and within.outcome == "tie"
    sampled = timing([0.50, 0.52, 0.51, 0.49, 0.50])
    fixed = speed_call(sampled, 1.0)  # a stored duration: a float
    assert fixed is not None and fixed.faster and fixed.how == "fixed"
    wide = timing([0.6, 1.4, 0.9, 1.1, 1.0])
    assert (c := speed_call(wide, 1.0)) is not None and c.outcome == "tie"
    reverse = speed_call(2.0, sampled)
    assert reverse is not None and reverse.outcome == "slower"


def test_unusable_durations_give_no_decision() -> None:
    base = timing([1.0, 1.0, 1.0])
    degraded = timing([0.5, 0.5, 0.5], status=TimingStatus.DEGRADED)
    assert speed_call(degraded, base) is None
    assert speed_call(None, base) is None
    assert speed_call(timing([0.5, 0.5, 0.5], clock="cpu"), base) is None  # clocks never mix
    assert speed_call(Timing(), base) is None


def test_aa_noise_band_is_the_prediction_interval_of_one_more_round() -> None:
    steady = aa_noise_band([1.0] * 5, [1.0] * 5)
    assert steady == 0.0
    a, b = noisy(1.0, 9, 4, cv=0.1), noisy(1.0, 9, 5, cv=0.1)
    band = aa_noise_band(a, b)
    assert 0.1 < band < 1.0
    skewed = aa_noise_band([1.05] * 5, [1.0] * 5)  # a systematic edge stays in the band
    assert skewed == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.0, 1.0], [1.0, 1.0]),
        ([1.0] * 3, [1.0] * 4),
        ([1.0, 0.0, 1.0], [1.0] * 3),
        ([1.0, float("nan"), 1.0], [1.0] * 3),
    ],  # fmt: skip
)
def test_aa_noise_band_refuses_malformed_rounds(a: list[float], b: list[float]) -> None:
    with pytest.raises(ConfigError):
        aa_noise_band(a, b)


def test_a_negative_noise_band_is_refused() -> None:
    with pytest.raises(ValueError):
        Timing(estimate_s=1.0, noise_band=-0.1)


def test_instruction_counts_of_one_round_are_exact() -> None:
    a = Timing(estimate_s=990.0, samples_s=[990.0], clock="instructions")
    b = Timing(estimate_s=1000.0, samples_s=[1000.0], clock="instructions")
    call = speed_call(a, b)
    assert call is not None and call.faster and call.how == "exact"  # margin 0 for counts
