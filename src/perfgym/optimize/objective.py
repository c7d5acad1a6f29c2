"""`gain(proposal, best, objective)`: is a proposal significantly better than the current best?

Time: perfgym's one speed decision (`timing.decision.speed_call`, significant by default: the
paired test when both were measured in the same interleaved rounds, the same-source tie, the
noise band at too few rounds), with the ratio's CI from `timing.compare` where samples allow.
Memory and integral: the judge measures one peak (and one integral per workload median) per
variant, no samples, so a change counts only beyond a band (`MEMORY_BAND`, `INTEGRAL_BAND`):
peaks of one program move by a few per cent run to run (allocator, page placement), and the
integral carries the time's noise as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from perfgym.judge.verdict import Timing
from perfgym.timing.compare import compare, timing_margin
from perfgym.timing.decision import SpeedOutcome, by_band, speed_call

Objective = Literal["time", "memory", "integral"]
OBJECTIVES: tuple[Objective, ...] = ("time", "memory", "integral")

#: Relative change a peak-memory figure must exceed to count (no samples to test).
MEMORY_BAND = 0.05
#: Relative change a memory integral must exceed (it moves with the run time as well).
INTEGRAL_BAND = 0.10


@dataclass(frozen=True)
class Gain:
    """The proposal against the best: `better` only when significant. `ratio` < 1: better."""

    better: bool
    outcome: SpeedOutcome  # the proposal's
    ratio: float | None
    ci: tuple[float, float] | None
    how: str


def value_of(t: Timing | None, objective: Objective) -> float | None:
    """The figure the objective minimises, or None when it was not measured usably."""
    if t is None or not t.ok:
        return None
    if objective == "time":
        return t.usable_s
    x = t.peak_rss_mb if objective == "memory" else t.memory_integral_mb_s
    return None if x is None or not x > 0 else float(x)


def gain(
    proposal: Timing | None,
    best: Timing | None,
    objective: Objective,
    *,
    same_source: bool = False,
    alpha: float = 0.05,
) -> Gain:
    """The decision for one proposal against the current best on `objective`."""
    if same_source:
        a, b = value_of(proposal, objective), value_of(best, objective)
        ratio = a / b if a is not None and b is not None else None
        return Gain(False, SpeedOutcome.TIE, ratio, None, "same-source")
    if objective == "time":
        return _time_gain(proposal, best, alpha)
    a, b = value_of(proposal, objective), value_of(best, objective)
    if a is None or b is None:
        return Gain(False, SpeedOutcome.TIE, None, None, f"no {objective} measurement")
    band = MEMORY_BAND if objective == "memory" else INTEGRAL_BAND
    ratio = a / b
    outcome = by_band(ratio, band)
    return Gain(outcome is SpeedOutcome.FASTER, outcome, ratio, None, f"{objective}-band {band:g}")


def _time_gain(proposal: Timing | None, best: Timing | None, alpha: float) -> Gain:
    call = speed_call(proposal, best, alpha=alpha)
    if call is None or proposal is None or best is None:
        return Gain(False, SpeedOutcome.TIE, None, None, "no usable timing")
    ci = None
    xa, xb = proposal.samples_s, best.samples_s
    if call.how in ("paired-t", "mann-whitney"):
        c = compare(xa, xb, alpha=alpha, paired=call.how == "paired-t",
                    margin=timing_margin(proposal.clock))  # fmt: skip
        ci = c.ci
    return Gain(call.faster, call.outcome, call.ratio, ci, call.how)
