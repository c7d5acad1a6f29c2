"""Which durations a reward may use: a `Timing` contributes only when it is ok, finite and positive."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing, TimingStatus, Verdict

Role = Literal["candidate", "baseline", "reference"]


def valid_seconds(value: object) -> bool:
    """A duration a reward can divide by: a finite number above zero."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def duration(timing: Timing | None, role: str) -> tuple[float | None, str]:
    """`timing.estimate_s` when usable, else None and the reason it is not.

    A DEGRADED or UNAVAILABLE timing keeps the verdict's correctness but contributes no
    duration (the judge's rule); a missing, NaN, zero or negative estimate is no duration either.
    """
    if timing is None:
        return None, f"{role} timing absent"
    if timing.status is not TimingStatus.OK:
        why = f": {timing.status_reason}" if timing.status_reason else ""
        return None, f"{role} timing {timing.status.value}{why}"
    if timing.estimate_s is None:
        return None, f"{role} timing has no estimate"
    if not valid_seconds(timing.estimate_s):
        return None, f"{role} estimate {timing.estimate_s!r} is not a positive finite duration"
    return float(timing.estimate_s), ""


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
            if not valid_seconds(value):
                raise ConfigError(f"{role} duration column holds {value!r}, not seconds > 0")
            out[role] = float(value)
            continue
        seconds, why = duration(timings[role], role)
        if seconds is None:
            return {}, why
        out[role] = seconds
    return out, ""


def column_value(columns: Mapping[str, Sequence[Any]], name: str, index: int) -> Any:
    """The `index`-th entry of column `name`; KeyError when the column was not given."""
    return columns[name][index]
