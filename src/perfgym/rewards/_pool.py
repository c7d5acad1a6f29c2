"""A reference pool's per-workload durations and DMC-Optim's ranking arithmetic over them (paper 003, §D)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfgym.errors import ConfigError
from perfgym.rewards._durations import valid_seconds
from perfgym.tasks.task import StoredMeasurement

Calibration = Callable[[float], float] | tuple[float, float] | None
"""Stored seconds -> present-machine seconds: a callable, an affine (slope, intercept), or None."""

INF = math.inf


def calibration_fn(calibrate: Calibration) -> Callable[[float], float]:
    """The calibration as a function; (α, β) is DMC-Optim's affine map t -> α·t + β (§C.7)."""
    if calibrate is None:
        return lambda t: t
    if isinstance(calibrate, tuple):
        if len(calibrate) != 2:
            raise ConfigError(f"affine calibration needs (slope, intercept), got {calibrate!r}")
        slope, intercept = (float(x) for x in calibrate)
        return lambda t: slope * t + intercept
    if callable(calibrate):
        return calibrate
    raise ConfigError(f"calibrate must be a callable, (slope, intercept) or None: {calibrate!r}")


class Pool:
    """One task's reference solutions: member -> workload -> calibrated seconds (inf = timed out).

    A member is a mapping {workload: seconds | None} (None: that reference timed out there) or
    a `StoredMeasurement` (its per_workload_s; a measurement whose status is not 'ok' is no
    reference and is left out). A workload a member lacks was not measured for it and is ignored.
    """

    def __init__(self, members: list[dict[str, float]]) -> None:
        self.members = members

    @classmethod
    def parse(cls, entries: Sequence[Any], calibrate: Callable[[float], float], where: str) -> Pool:
        members: list[dict[str, float]] = []
        if isinstance(entries, Mapping | str) or not isinstance(entries, Sequence):
            raise ConfigError(
                f"{where}: a pool is a list of solutions, got {type(entries).__name__}"
            )
        for j, entry in enumerate(entries):
            if isinstance(entry, StoredMeasurement):
                if entry.status != "ok":
                    continue
                raw: Mapping[str, Any] = entry.per_workload_s
            elif isinstance(entry, Mapping):
                raw = entry
            else:
                raise ConfigError(f"{where}[{j}]: expected a mapping or StoredMeasurement")
            member: dict[str, float] = {}
            for workload, seconds in raw.items():
                if seconds is None:
                    member[str(workload)] = INF
                    continue
                if not valid_seconds(seconds):
                    raise ConfigError(f"{where}[{j}][{workload!r}] = {seconds!r}: not seconds > 0")
                fresh = calibrate(float(seconds))
                if not valid_seconds(fresh):
                    raise ConfigError(
                        f"{where}[{j}][{workload!r}]: calibration maps {seconds} s to {fresh!r}"
                    )
                member[str(workload)] = float(fresh)
            members.append(member)
        return cls(members)

    def workloads(self) -> set[str]:
        return {w for m in self.members for w in m}

    def on(self, workload: str) -> list[float]:
        """Every member's duration on `workload` (inf for a timeout), members without it omitted."""
        return [m[workload] for m in self.members if workload in m]

    def leaderboard(
        self, workloads: Sequence[str], extra: Mapping[str, float] | None = None
    ) -> list[float]:
        """Each member's mean percentile position against the rest of the field (see `position`).

        The field is the other members plus `extra` (the candidate) when given. A member with no
        duration on any of `workloads` gets nan and ranks nowhere.
        """
        means: list[float] = []
        for j, member in enumerate(self.members):
            positions = []
            for w in workloads:
                if w not in member:
                    continue
                others = [m[w] for i, m in enumerate(self.members) if i != j and w in m]
                if extra is not None and w in extra:
                    others.append(extra[w])
                if others:
                    positions.append(position(member[w], others))
            means.append(sum(positions) / len(positions) if positions else math.nan)
        return means


def position(seconds: float, others: Sequence[float]) -> float:
    """Percent of `others` strictly faster than `seconds`: 0 = no one faster, 100 = everyone.

    Ties count for the candidate, as in p-tau's 'no slower than the τ-th percentile reference'.
    """
    return 100.0 * sum(o < seconds for o in others) / len(others)


def order_statistic(values: Sequence[float], percentile: float) -> float:
    """The τ-th percentile as an observed value: the ceil(τ/100·n)-th smallest (τ = 100: the max)."""
    ordered = sorted(values)
    k = min(len(ordered), max(1, math.ceil(percentile / 100.0 * len(ordered))))
    return ordered[k - 1]


def mean_position(
    candidate: Mapping[str, float], pool: Pool, workloads: Sequence[str]
) -> float | None:
    """The candidate's mean per-test percentile position over `workloads` the pool has; None if none."""
    positions = [position(candidate[w], pool.on(w)) for w in workloads if pool.on(w)]
    return sum(positions) / len(positions) if positions else None


def leaderboard_position(candidate_mean: float, member_means: Sequence[float]) -> float | None:
    """Percent of pool members whose mean position is strictly better (lower) than the candidate's.

    None when no member ranks on the workloads (there is no leaderboard to stand on).
    """
    ranked = [m for m in member_means if not math.isnan(m)]
    if not ranked:
        return None
    return 100.0 * sum(m < candidate_mean for m in ranked) / len(ranked)
