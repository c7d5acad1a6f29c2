"""`speed_call(a, b, decision)`: is A faster than B, the same, or slower? The one rule behind
every speed claim (FBR, RBR, the report's colours, reward bonuses).

decision="significant" (perfgym's default): a difference counts only when the measurement
shows it. In order:

    same-source   A's normalised source is B's (the judge says so): a tie by construction
    paired-t      both have >= 3 rounds of one measurement: `compare(paired=True)` with the
                  clock's margin (`timing_margin`)
    mann-whitney  both have >= 4 samples but different rounds: the unpaired `compare`
    fixed         one side is a given duration (no samples: stored, a column, a hand-made
                  Timing): the other side's estimate CI must clear it by the margin
    exact         neither has samples, or instruction counts (deterministic) with too few
                  rounds for the test: the estimates, beyond the clock's margin
    noise-band    too few rounds for a test (repeats 1-2, RLPF's training setting): the ratio
                  must leave the A/A noise band of the side that has one (`Timing.noise_band`,
                  the baseline's or the reference's; the wider if both), never narrower
                  than the margin
    untestable    too few rounds and no noise band: a tie (no bonus is paid for a difference
                  nothing can tell from noise)

decision="strict": the papers' rule on the estimates (Tc < Tb faster, Tc == Tb tie), noise and
all; use it to reproduce a published figure.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.timing.compare import compare, timing_margin
from perfgym.timing.estimators import geometric_mean
from perfgym.timing.result import Timing
from perfgym.timing.summary import Estimator, estimate_ci

Decision = Literal["significant", "strict"]


class SpeedOutcome(StrEnum):
    """A's side of a speed call against B (its value is what results files hold)."""

    FASTER = "faster"
    TIE = "tie"
    SLOWER = "slower"


#: The decisions, for validation and help texts.
DECISIONS: tuple[Decision, ...] = ("significant", "strict")


class SpeedCall(BaseModel):
    """The decision about A against B: `outcome` is A's ('faster': A is faster than B)."""

    model_config = ConfigDict(extra="forbid")

    outcome: SpeedOutcome
    ratio: float = Field(description="A / B on what was compared (< 1: A took less).")
    decision: Decision
    how: str = Field(description="Which rule decided (see the module docstring).")

    @property
    def faster(self) -> bool:
        return self.outcome == SpeedOutcome.FASTER

    @property
    def at_least_as_fast(self) -> bool:
        """'Reference or better': faster, or not told apart from B."""
        return self.outcome != SpeedOutcome.SLOWER


def _usable(t: Timing | float | None) -> Timing | None:
    if t is None:
        return None
    if not isinstance(t, Timing):
        t = Timing(estimate_s=float(t))  # a given duration (a stored column): no samples
    if not t.ok or t.estimate_s is None or not t.estimate_s > 0 or not math.isfinite(t.estimate_s):
        return None
    return t


def _estimator(t: Timing) -> Estimator:
    known: tuple[Estimator, ...] = ("median", "hodges_lehmann", "minimum", "mean")
    return next((e for e in known if e == t.estimator), "median")


def by_band(ratio: float, band: float) -> SpeedOutcome:
    """A/B's `ratio` outside the relative `band` either way is faster or slower, else a tie."""
    if ratio < 1.0 / (1.0 + band):
        return SpeedOutcome.FASTER
    if ratio > 1.0 + band:
        return SpeedOutcome.SLOWER
    return SpeedOutcome.TIE


def speed_call(
    a: Timing | float | None,
    b: Timing | float | None,
    decision: Decision = "significant",
    *,
    same_source: bool = False,
    alpha: float = 0.05,
) -> SpeedCall | None:
    """A against B under `decision`; None when either has no usable duration (absent,
    degraded, no estimate) or they use different clocks. A float is a given duration."""
    ta, tb = _usable(a), _usable(b)
    if ta is None or tb is None:
        return None
    if isinstance(a, Timing) and isinstance(b, Timing) and a.clock != b.clock:
        return None
    assert ta.estimate_s is not None and tb.estimate_s is not None
    estimate_ratio = ta.estimate_s / tb.estimate_s
    if decision == "strict":
        outcome = SpeedOutcome.FASTER if ta.estimate_s < tb.estimate_s else (
            SpeedOutcome.TIE if ta.estimate_s == tb.estimate_s else SpeedOutcome.SLOWER)  # fmt: skip
        return SpeedCall(outcome=outcome, ratio=estimate_ratio, decision=decision, how="strict")

    def call(outcome: SpeedOutcome, ratio: float, how: str) -> SpeedCall:
        return SpeedCall(outcome=outcome, ratio=ratio, decision=decision, how=how)

    if same_source:
        return call(SpeedOutcome.TIE, estimate_ratio, "same-source")
    clock = ta.clock if isinstance(a, Timing) else tb.clock
    margin = timing_margin(clock)
    xa, xb = ta.samples_s, tb.samples_s
    if len(xa) == len(xb) >= 3 or (len(xa) >= 4 and len(xb) >= 4):
        paired = len(xa) == len(xb)
        c = compare(xa, xb, alpha=alpha, paired=paired, margin=margin)
        outcome = {"a": SpeedOutcome.FASTER, "b": SpeedOutcome.SLOWER}.get(
            c.faster, SpeedOutcome.TIE
        )
        return call(outcome, c.ratio, c.method)
    if (not xa and not xb) or clock == "instructions":  # counts: one round is exact
        return call(by_band(estimate_ratio, margin), estimate_ratio, "exact")
    if not xa or not xb:
        sampled, fixed, sign = (tb, ta.estimate_s, -1) if not xa else (ta, tb.estimate_s, 1)
        ci = sampled.ci_s or estimate_ci(sampled.samples_s, _estimator(sampled))
        if ci is not None:
            lo, hi = (x / fixed for x in ci)
            if sign < 0:  # the sampled side is B: A/B's interval is the inverse
                lo, hi = 1.0 / hi, 1.0 / lo
            outcome = SpeedOutcome.TIE
            if hi < 1.0 / (1.0 + margin):
                outcome = SpeedOutcome.FASTER
            elif lo > 1.0 + margin:
                outcome = SpeedOutcome.SLOWER
            return call(outcome, estimate_ratio, "fixed")
    bands = [t.noise_band for t in (ta, tb) if t.noise_band is not None]
    ratio = estimate_ratio
    if xa and len(xa) == len(xb):  # one measurement's rounds: the mean per-round ratio
        ratio = geometric_mean((x / y for x, y in zip(xa, xb, strict=True)), "per-round ratio")
    if bands:
        return call(by_band(ratio, max(max(bands), margin)), ratio, "noise-band")
    return call(SpeedOutcome.TIE, ratio, "untestable")
