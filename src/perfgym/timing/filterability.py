"""Duration filterability (DMC-Optim B.7): are a task's workloads timing-informative?

A task is duration-filterable when the robust CV (1.4826 · MAD / median) of its representative
per-workload durations is at least 0.3: its workloads span a ladder of costs, so ranking a
candidate against references on them says something. The representative duration of a
workload is the median over the task's measured solutions.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.timing.summary import robust_cv

THRESHOLD = 0.3


class Filterability(BaseModel):
    """One task's duration filterability."""

    model_config = ConfigDict(extra="forbid")

    robust_cv: float | None = Field(description="Robust CV across representative durations.")
    filterable: bool | None = Field(description="robust_cv >= threshold; None if unknown.")
    workloads: int
    solutions: int
    threshold: float = THRESHOLD
    reason: str = ""


def duration_filterability(
    per_solution: Sequence[Mapping[str, float]], threshold: float = THRESHOLD
) -> Filterability:
    """From each measured solution's per-workload durations (workload id -> seconds)."""
    by_w: dict[str, list[float]] = {}
    for durations in per_solution:
        for w, d in durations.items():
            by_w.setdefault(w, []).append(d)
    reps = [statistics.median(xs) for xs in by_w.values()]
    if len(reps) < 2:
        return Filterability(robust_cv=None, filterable=None, workloads=len(reps),
                             solutions=len(per_solution), threshold=threshold,
                             reason="needs at least two timed workloads")  # fmt: skip
    rcv = robust_cv(reps)
    return Filterability(robust_cv=rcv, filterable=None if rcv is None else rcv >= threshold,
                         workloads=len(reps), solutions=len(per_solution),
                         threshold=threshold)  # fmt: skip
