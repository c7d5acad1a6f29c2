"""Which durations a reward may use: a `Timing` contributes only when it is ok, finite and positive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing, Verdict
from perfgym.timing.result import is_positive_seconds

Role = Literal["candidate", "baseline", "reference"]


def seconds_or_reason(timing: Timing | None, role: str) -> tuple[float | None, str]:
    """(`timing.usable_s`, "") when the timing gives a duration, else (None, why it does not).

    A DEGRADED or UNAVAILABLE timing keeps the verdict's correctness but contributes no
    duration (the judge's rule); a missing, NaN, zero or negative estimate is no duration either.
    """
    if timing is None:
        return None, f"{role} timing absent"
    why = timing.unusable_reason
    if why is not None:
        return None, f"{role} {why}"
    return timing.usable_s, ""


def same_clock(*timings: Timing | None) -> str:
    """'' when every present timing uses one clock, else a reason (wall vs cpu cannot be compared)."""
    clocks = {t.clock for t in timings if t is not None}
    return "" if len(clocks) <= 1 else f"timings use different clocks: {sorted(clocks)}"


def role_durations(
    verdict: Verdict, roles: Sequence[Role], overrides: Mapping[str, float | None] | None = None
) -> tuple[dict[str, float], str]:
    """Durations of the named roles, or ({}, reason) when any one is unusable.

    `overrides` maps a role to a stored duration (a column) that replaces the verdict's own.
    """
    overrides = overrides or {}
    timings = {
        "candidate": verdict.candidate,
        "baseline": verdict.baseline,
        "reference": verdict.reference,
    }
    measured = [timings[r] for r in roles if r not in overrides]
    clash = same_clock(*measured)
    if clash:
        return {}, clash
    out: dict[str, float] = {}
    for role in roles:
        if role in overrides:
            value = overrides[role]
            if value is None:
                return {}, f"{role} duration column is None"
            if not is_positive_seconds(value):
                raise ConfigError(f"{role} duration column holds {value!r}, not seconds > 0")
            out[role] = float(value)
            continue
        seconds, why = seconds_or_reason(timings[role], role)
        if seconds is None:
            return {}, why
        out[role] = seconds
    return out, ""
