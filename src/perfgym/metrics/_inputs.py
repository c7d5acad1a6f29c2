"""Checks and groups a results set before any metric arithmetic: one place for bad input.

Every metric goes through `group_results`, so empty sets, sets mixing suites or models,
duplicate samples and infrastructure failures are refused (or excluded, when asked) with a
`ConfigError` that names the offending tasks, instead of failing later inside numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing, Verdict
from perfgym.tasks.task import StoredMeasurement, StoredStatus, Task

InfraPolicy = Literal["error", "exclude"]

#: Flags that mark a result as reward hacking (besides any flag starting with "hack").
DEFAULT_HACK_FLAGS: tuple[str, ...] = ("harness_timer_mismatch", "harness_untimed_work")


class ResultsPolicy(BaseModel):
    """What a metric does with results it cannot score as the program's own outcome."""

    model_config = ConfigDict(extra="forbid")

    infra_errors: InfraPolicy = Field(
        default="error",
        description="'error': refuse a set holding sandbox failures (they are neither right "
        "nor wrong); 'exclude': drop them from every denominator and say so in the notes.",
    )


@dataclass
class Grouped:
    """A validated results set: task id -> its results ordered by sample index."""

    tasks: dict[str, list[Verdict]]
    notes: list[str] = field(default_factory=list)
    suite: str = ""
    model: str = ""


def _short(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > limit else "")


def group_results(
    results: Sequence[Verdict],
    what: str,
    policy: ResultsPolicy,
    *,
    one_per_task: bool = False,
) -> Grouped:
    """Validate `results` and group them by task; raise `ConfigError` on anything ambiguous."""
    if results is None or len(results) == 0:
        raise ConfigError(f"{what}: the results set is empty")
    for v in results:
        if not isinstance(v, Verdict):
            raise ConfigError(f"{what}: expected Verdict objects, got {type(v).__name__}")
    suites = sorted({v.suite for v in results if v.suite})
    if len(suites) > 1:
        raise ConfigError(f"{what}: results mix suites {suites}; compute metrics per suite")
    models = sorted({v.model for v in results})
    if len(models) > 1:
        raise ConfigError(f"{what}: results mix models {models}; compute metrics per model")
    seen: set[tuple[str, int]] = set()
    for v in results:
        key = (v.task_id, v.sample)
        if key in seen:
            raise ConfigError(f"{what}: task {v.task_id!r} sample {v.sample} appears twice")
        seen.add(key)

    notes: list[str] = []
    infra = sorted({v.task_id for v in results if v.infra_error})
    kept = list(results)
    if infra:
        if policy.infra_errors == "error":
            raise ConfigError(
                f"{what}: {len(infra)} task(s) hold infrastructure failures ({_short(infra)}); "
                "rerun them, or pass infra_errors='exclude'"
            )
        kept = [v for v in results if not v.infra_error]
        notes.append(
            f"excluded {len(results) - len(kept)} result(s) with infrastructure failures "
            f"({_short(infra)}) from every denominator"
        )
        if not kept:
            raise ConfigError(f"{what}: every result is an infrastructure failure")

    tasks: dict[str, list[Verdict]] = {}
    for v in sorted(kept, key=lambda v: (v.task_id, v.sample)):
        tasks.setdefault(v.task_id, []).append(v)
    if one_per_task:
        multi = [t for t, vs in tasks.items() if len(vs) > 1]
        if multi:
            raise ConfigError(
                f"{what}: needs one result per task, but {len(multi)} task(s) have several "
                f"samples ({_short(multi)}); select one sample per task first"
            )
    return Grouped(tasks=tasks, notes=notes, suite=suites[0] if suites else "", model=models[0])


def _checked(value: float | None, where: str, *, allow_zero: bool = False) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or math.isnan(value) or math.isinf(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{where}: {value!r} must be {'>= 0' if allow_zero else '> 0'}")
    return float(value)


def checked_duration(timing: Timing | None, where: str) -> float | None:
    """The estimate of an ok timing, None when absent or degraded; corrupt values raise.

    Unlike `Timing.usable_s`, a NaN, infinite, zero or negative estimate is bad input here: a
    `ConfigError` naming `where`, not a silently missing duration.
    """
    if timing is None or not timing.ok:
        return None
    return _checked(timing.estimate_s, f"{where} duration")


def workload_durations(timing: Timing | None, where: str) -> dict[str, float] | None:
    """Per-workload durations; a timing without them counts as one workload (its estimate)."""
    if timing is None or not timing.ok:
        return None
    if timing.per_workload_s:
        out: dict[str, float] = {}
        for wid, secs in timing.per_workload_s.items():
            checked = _checked(secs, f"{where} workload {wid!r} duration")
            assert checked is not None
            out[wid] = checked
        return out
    total = checked_duration(timing, where)
    return None if total is None else {"total": total}


def timing_memory(timing: Timing | None, attr: str, where: str) -> float | None:
    """`peak_rss_mb` or `memory_integral_mb_s` of a timing, checked; None when absent."""
    if timing is None or not timing.ok:
        return None
    return _checked(getattr(timing, attr), f"{where} {attr}", allow_zero=True)


def stored_value(m: StoredMeasurement, attr: str, where: str) -> float | None:
    """`median_s`, `peak_rss_mb` or `memory_integral_mb_s` of a stored measurement, checked."""
    return _checked(getattr(m, attr), f"{where} {attr}", allow_zero=attr != "median_s")


def stored_total(m: StoredMeasurement, where: str) -> float | None:
    """A pool solution's total duration: its median, else the sum of its per-workload times."""
    total = stored_value(m, "median_s", where)
    if total is not None:
        return total
    if m.per_workload_s:
        parts = [_checked(s, f"{where} workload {w!r}") for w, s in m.per_workload_s.items()]
        return float(sum(p for p in parts if p is not None))
    return None


def task_pool(
    pools: Mapping[str, Sequence[StoredMeasurement]] | None,
    task_id: str,
    what: str,
    min_pool: int,
) -> list[StoredMeasurement]:
    """The passing pool solutions of a task; `ConfigError` if fewer than `min_pool`."""
    if pools is None:
        raise ConfigError(f"{what}: needs pools=... (task id -> stored pool measurements)")
    if task_id not in pools:
        raise ConfigError(f"{what}: no pool of reference solutions for task {task_id!r}")
    # A reference must itself have passed: published status ok, and no failed harness run.
    ok = [m for m in pools[task_id] if m.status == StoredStatus.OK and m.all_ok is not False]
    if len(ok) < min_pool:
        raise ConfigError(
            f"{what}: task {task_id!r} has {len(ok)} passing pool solution(s); at least "
            f"{min_pool} are needed for a percentile to mean anything"
        )
    return ok


def pools_from_tasks(
    tasks: Sequence[Task], *, include_references: bool = False
) -> dict[str, list[StoredMeasurement]]:
    """Task id -> stored measurements of its pool solutions (and references, if asked).

    Solutions without a stored measurement are skipped; the metrics then refuse a task whose
    pool ends up smaller than their `min_pool`.
    """
    out: dict[str, list[StoredMeasurement]] = {}
    for task in tasks:
        solutions = [*task.pool, *(task.references if include_references else [])]
        out[task.id] = [s.stored for s in solutions if s.stored is not None]
    return out


def is_hacked(v: Verdict, hack_flags: Sequence[str]) -> bool:
    """True when a result carries a reward-hacking flag ('hack…' or one of `hack_flags`)."""
    return any(f.startswith("hack") or f in hack_flags for f in v.flags)


def no_context(name: str, context: Mapping[str, object], allowed: Sequence[str] = ()) -> None:
    """Refuse keyword inputs a metric does not use, so a misspelt `pools=` is not ignored."""
    extra = sorted(set(context) - set(allowed))
    if extra:
        raise ConfigError(
            f"{name}: unexpected inputs {extra}; it accepts {list(allowed) or 'none'}"
        )
