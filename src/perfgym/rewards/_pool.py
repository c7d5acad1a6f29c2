"""A reference pool's per-workload durations and DMC-Optim's ranking arithmetic over them (paper 003, §D)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from perfgym.errors import ConfigError
from perfgym.tasks.task import StoredMeasurement, StoredStatus
from perfgym.timing.result import is_positive_seconds

if TYPE_CHECKING:
    import numpy as np

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
    """One task's reference solutions: a members × workloads matrix of calibrated seconds.

    inf = that member timed out on the workload; nan = it was not measured there (ignored).
    A member is given as a mapping {workload: seconds | None} (None: timed out) or a
    `StoredMeasurement` (its per_workload_s; a measurement whose status is not 'ok' is no
    reference and is left out).
    """

    def __init__(self, workloads: list[str], matrix: np.ndarray) -> None:
        self.index = {w: k for k, w in enumerate(workloads)}
        self.matrix = matrix

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @classmethod
    def parse(cls, entries: Sequence[Any], calibrate: Callable[[float], float], where: str) -> Pool:
        import numpy as np  # numpy loads where a pool is ranked, not on import

        if isinstance(entries, Mapping | str) or not isinstance(entries, Sequence):
            raise ConfigError(
                f"{where}: a pool is a list of solutions, got {type(entries).__name__}"
            )
        members: list[dict[str, float]] = []
        for j, entry in enumerate(entries):
            if isinstance(entry, StoredMeasurement):
                if entry.status != StoredStatus.OK:
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
                if not is_positive_seconds(seconds):
                    raise ConfigError(f"{where}[{j}][{workload!r}] = {seconds!r}: not seconds > 0")
                fresh = calibrate(float(seconds))
                if not is_positive_seconds(fresh):
                    raise ConfigError(
                        f"{where}[{j}][{workload!r}]: calibration maps {seconds} s to {fresh!r}"
                    )
                member[str(workload)] = float(fresh)
            members.append(member)
        names = sorted({w for m in members for w in m})
        matrix = np.full((len(members), len(names)), np.nan)
        column = {w: k for k, w in enumerate(names)}
        for j, member in enumerate(members):
            for w, seconds in member.items():
                matrix[j, column[w]] = seconds
        return cls(names, matrix)

    def workloads(self) -> set[str]:
        return set(self.index)

    def on(self, workload: str) -> np.ndarray:
        """Every member's duration on `workload` (inf for a timeout), unmeasured members left out."""
        import numpy as np  # numpy loads where a pool is ranked, not on import

        k = self.index.get(workload)
        if k is None:
            return np.empty(0)
        column = self.matrix[:, k]
        return column[~np.isnan(column)]

    def leaderboard(
        self, workloads: Sequence[str], extra: Mapping[str, float] | None = None
    ) -> np.ndarray:
        """Each member's mean percentile position against the rest of the field (see `position`).

        The field is the other members plus `extra` (the candidate) where it has a duration.
        A member with no duration on any of `workloads` gets nan and ranks nowhere.
        """
        import numpy as np  # numpy loads where a pool is ranked, not on import

        total = np.zeros(len(self))
        count = np.zeros(len(self))
        for w in workloads:
            k = self.index.get(w)
            if k is None:
                continue
            column = self.matrix[:, k]
            present = ~np.isnan(column)
            # Strictly-faster counts by binary search; a member is never faster than itself.
            faster = np.searchsorted(np.sort(column[present]), column[present], side="left")
            others = np.full(faster.shape, present.sum() - 1.0)
            if extra is not None and w in extra:
                faster = faster + (extra[w] < column[present])
                others += 1
            ranked = others > 0
            rows = np.flatnonzero(present)[ranked]
            total[rows] += 100.0 * faster[ranked] / others[ranked]
            count[rows] += 1
        means = np.full(len(self), np.nan)
        np.divide(total, count, out=means, where=count > 0)
        return means


def position(seconds: float, others: Sequence[float]) -> float:
    """Percent of `others` strictly faster than `seconds`: 0 = no one faster, 100 = everyone.

    Ties count for the candidate, as in p-tau's 'no slower than the τ-th percentile reference'.
    """
    return 100.0 * sum(o < seconds for o in others) / len(others)


def order_statistic(values: np.ndarray, percentile: float) -> float:
    """The τ-th percentile as an observed value: the ceil(τ/100·n)-th smallest (τ = 100: the max)."""
    import numpy as np  # numpy loads where a pool is ranked, not on import

    k = min(len(values), max(1, math.ceil(percentile / 100.0 * len(values))))
    return float(np.partition(values, k - 1)[k - 1])


def mean_position(
    candidate: Mapping[str, float], pool: Pool, workloads: Sequence[str]
) -> float | None:
    """The candidate's mean per-test percentile position over `workloads` the pool has; None if none."""
    import numpy as np  # numpy loads where a pool is ranked, not on import

    shared = [w for w in workloads if w in pool.index]
    if not shared:
        return None
    block = pool.matrix[:, [pool.index[w] for w in shared]]
    mine = np.array([candidate[w] for w in shared])
    measured = np.count_nonzero(~np.isnan(block), axis=0)
    faster = np.count_nonzero(block < mine, axis=0)  # nan compares False: unmeasured never faster
    ranked = measured > 0
    if not ranked.any():
        return None
    return float(np.mean(100.0 * faster[ranked] / measured[ranked]))


def leaderboard_position(candidate_mean: float, member_means: np.ndarray) -> float | None:
    """Percent of pool members whose mean position is strictly better (lower) than the candidate's.

    None when no member ranks on the workloads (there is no leaderboard to stand on).
    """
    import numpy as np  # numpy loads where a pool is ranked, not on import

    ranked = member_means[~np.isnan(member_means)]
    if not len(ranked):
        return None
    return 100.0 * float(np.count_nonzero(ranked < candidate_mean)) / len(ranked)
