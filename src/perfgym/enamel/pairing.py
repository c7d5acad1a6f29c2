"""How a sample's calls are timed against the reference's: ENAMEL's order, or paired per test.

`EnamelTiming.SEQUENTIAL` (the default) is ENAMEL's published order: the reference's times r (and the limit
T = 2 · max r) are taken first, then the sample runs against them with no correction (ENAMEL's
time correction c = r_stored / r_now is ≈ 1 when the reference was just measured here).

`EnamelTiming.PAIRED` (`--enamel-timing paired`, an option) keeps r and T from that first reference run, and re-times
the reference on every test interleaved with the sample, call for call (reference first on
even repeats, the sample first on odd ones), and applies ENAMEL's own time correction per test:
c_k = r_k / HL(reference's paired calls), the sample's time HL(sample's calls) · c_k. What the
machine did to both programs in those seconds (load, caches, frequency) cancels in c_k; the
sample is scored as if it had run when r was measured. A call ends the level when its time
exceeds ENAMEL's limit T / min(c, 1) + 0.01 s, c from the reference's paired calls so far
(ENAMEL: c of the problem's slowest test, measured before its samples).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum

from perfgym.errors import ConfigError
from perfgym.timing.estimators import hodges_lehmann

#: ENAMEL's allowance beyond the limit before a call counts as timed out (`tolerence_sec`).
ENAMEL_TOLERANCE_S = 0.01


class EnamelTiming(str, Enum):
    """Which clock order a sample is timed in (see the module docstring)."""

    PAIRED = "paired"
    SEQUENTIAL = "sequential"


def reference_first(rep: int) -> bool:
    """Whether the reference's call of repeat `rep` goes before the sample's (ABAB... then
    BABA...: alternating, so that neither program always runs on the other's warm caches)."""
    return rep % 2 == 0


def correction(reference_s: float, paired_reference_s: Sequence[float]) -> float:
    """ENAMEL's time correction c = r / r_now: the reference's time when T was fixed over its
    time in the paired calls (HL), 1 when there are none yet."""
    if not paired_reference_s:
        return 1.0
    now = hodges_lehmann(list(paired_reference_s))
    if not (math.isfinite(reference_s) and reference_s > 0 and math.isfinite(now) and now > 0):
        raise ConfigError(f"enamel time correction: times must be > 0 ({reference_s!r}, {now!r})")
    return reference_s / now


def raw_limit(limit_s: float, c: float) -> float:
    """The largest uncorrected call time that is not a timeout, as ENAMEL's `evaluate1` kills a
    call: T / min(c, 1) + the tolerance."""
    return limit_s / min(c, 1.0) + ENAMEL_TOLERANCE_S


def corrected_time(sample_s: Sequence[float], c: float) -> float:
    """The sample's time on one test: HL of its calls, times the test's correction c."""
    return hodges_lehmann(list(sample_s)) * c
