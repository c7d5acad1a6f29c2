"""The speed claims a reward pays for (faster than the baseline, level with the reference),
decided by `perfgym.timing.decision.speed_call` under the reward's `decision`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from perfgym.judge.verdict import Timing, Verdict
from perfgym.timing.decision import Decision, SpeedCall, speed_call


@dataclass
class SpeedCalls:
    """The candidate against each role; a role with no decision counts as no claim."""

    decision: Decision
    calls: dict[str, SpeedCall | None] = field(default_factory=dict)

    def faster(self, role: str) -> bool:
        call = self.calls.get(role)
        return call is not None and call.faster

    def level_or_better(self, role: str) -> bool:
        call = self.calls.get(role)
        return call is not None and call.at_least_as_fast

    @property
    def text(self) -> str:
        """e.g. 'significant: baseline tie (same-source), reference slower (paired-t)'."""
        parts = [
            f"{role} {'undecided' if c is None else f'{c.outcome} ({c.how})'}"
            for role, c in self.calls.items()
        ]
        return f"{self.decision}: " + ", ".join(parts)


def decided(
    verdict: Verdict,
    decision: Decision,
    overrides: Mapping[str, float | None],
    roles: Sequence[str],
) -> SpeedCalls:
    """The candidate against each of `roles` ('baseline', 'reference'); a role in `overrides`
    is compared as the given duration (a stored column, no samples)."""
    timings: dict[str, Timing | None] = {"baseline": verdict.baseline,
                                         "reference": verdict.reference}  # fmt: skip
    out = SpeedCalls(decision)
    for role in roles:
        other: Timing | float | None = overrides[role] if role in overrides else timings[role]
        same = role in verdict.same_source and role not in overrides
        out.calls[role] = speed_call(verdict.candidate, other, decision, same_source=same)
    return out
