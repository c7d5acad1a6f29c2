"""The best-patch selector: the fastest correct, significantly faster, unflagged patch."""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.agent.attempt import Attempt
from perfgym.repos.verdict import speedup_counts


def eligible(a: Attempt) -> bool:
    """A counted submission whose speed-up counts (`speedup_counts`: correct, significantly
    faster where it is decided, no hack finding, above 1)."""
    return a.counts and speedup_counts(a.measured, a.significant, a.flagged, a.speedup)


def best_attempt(attempts: Sequence[Attempt], excluded: Sequence[int] = ()) -> Attempt | None:
    """The eligible attempt with the highest speedup (not the last one); ties go to the
    earlier submission. `excluded` names submissions ruled out later (the full suite)."""
    pool = [a for a in attempts if eligible(a) and a.index not in excluded]
    if not pool:
        return None
    return max(pool, key=lambda a: (a.speedup or 0.0, -a.index))


def speedup_curve(attempts: Sequence[Attempt]) -> list[float]:
    """PerfAgent's per-turn figure for one task: after submission k, the best speedup so far
    (1.0 while nothing eligible has been kept)."""
    curve: list[float] = []
    best = 1.0
    for a in (a for a in attempts if a.counts):
        if eligible(a):
            best = max(best, a.speedup or 1.0)
        curve.append(best)
    return curve
