"""The quality ladder: every task's solutions (and synthetic failures) ordered by known quality.

One rung per (task, solution): the verdict a candidate identical to that solution gets, i.e.
its own measured timing as the candidate with the baseline's and reference's timings beside
it, exactly what `perfgym eval SUITE --solutions LABEL` records. Quality order within a task:

    NX < NC < NR < WO  (synthetic failures, RLPF Eq. 7)  <  baseline  <  pool by `quality`  <  references

Pool solutions of equal `quality` share a level, as do several references. The level is
normalised per task to [0, 1] (level / (levels − 1)), so tasks with pools of different sizes
span the same quality axis, as DMC-Optim normalises sample quality per problem (§E.2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, TestResult, Timing, Verdict
from perfgym.run_status import Status
from perfgym.simulate.config import SimulatorConfig
from perfgym.tasks.task import Solution, Task

#: How each synthetic failure looks to a reward: the judge's own detail strings and statuses.
_SYNTHETIC: dict[Stage, tuple[str, Status | None]] = {
    Stage.NX: ("NO_CODE", None),
    Stage.NC: ("COMPILE_ERROR", None),
    Stage.NR: ("RUNTIME_ERROR", Status.RUNTIME_ERROR),
    Stage.WO: ("WRONG_OUTPUT", Status.OK),
}


@dataclass(frozen=True)
class Rung:
    """One point of the simulation: a (task, solution) at its quality level."""

    task_id: str
    label: str  # the solution's label, or NX/NC/NR/WO for a synthetic failure
    synthetic: bool
    level: int
    levels: int
    verdict: Verdict
    pool: list[dict[str, float]]

    @property
    def quality(self) -> float:
        """The level normalised to [0, 1] within its task."""
        return self.level / (self.levels - 1)


@dataclass
class Ladder:
    """Every task's rungs, plus what was left out and why."""

    suite: str
    rungs: list[Rung]
    config: SimulatorConfig
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def columns(self) -> dict[str, list[Any]]:
        """Per-rung columns a reward may read: the reference pool, format_ok, objective."""
        return {
            "pool": [r.pool for r in self.rungs],
            # A real solution is well-formed code; only the NX rung has none to format.
            "format_ok": [r.verdict.stage is not Stage.NX for r in self.rungs],
            "objective": ["optimization"] * len(self.rungs),
        }

    def task_ids(self) -> list[str]:
        return list(dict.fromkeys(r.task_id for r in self.rungs))


def _finite_positive(x: float | None) -> bool:
    return x is not None and isinstance(x, int | float) and math.isfinite(x) and x > 0


def _check_timing(t: Timing | None, where: str) -> None:
    """A stored duration that is NaN, infinite or not positive is corrupt data: refuse it."""
    if t is None or not t.ok:
        return
    if t.estimate_s is not None and not _finite_positive(t.estimate_s):
        raise ConfigError(f"{where}: duration {t.estimate_s!r} is not a finite number > 0")
    for wid, secs in t.per_workload_s.items():
        if not _finite_positive(secs):
            raise ConfigError(f"{where}: workload {wid!r} duration {secs!r} is not > 0")


def _check_verdicts(verdicts: Sequence[Verdict], suite: str) -> None:
    if not verdicts:
        raise ConfigError("the results set is empty: nothing to simulate")
    suites = sorted({v.suite for v in verdicts if v.suite})
    if len(suites) > 1:
        raise ConfigError(f"results mix suites {suites}; simulate one suite at a time")
    if suites and suites[0] != suite:
        raise ConfigError(f"results come from suite {suites[0]!r}, not {suite!r}")
    seen: set[tuple[str, str, int]] = set()
    for v in verdicts:
        key = (v.task_id, v.model, v.sample)
        if key in seen:
            raise ConfigError(f"task {v.task_id!r} solution {v.model!r} sample {v.sample} twice")
        seen.add(key)
        where = f"task {v.task_id!r} solution {v.model!r}"
        for part in ("candidate", "baseline", "reference"):
            _check_timing(getattr(v, part), f"{where} {part}")


def _quality_key(task: Task, sol: Solution) -> tuple[int, float] | None:
    """Sort key of a solution's quality; None when a pool member has no known quality."""
    if sol.label == task.baseline.label:
        return (0, 0.0)
    if any(sol.label == r.label for r in task.references):
        return (2, 0.0)
    if sol.quality is None or not math.isfinite(sol.quality):
        return None
    return (1, float(sol.quality))


def _workloads(t: Timing | None) -> dict[str, float] | None:
    seconds = None if t is None else t.usable_s
    if t is None or seconds is None:
        return None
    return dict(t.per_workload_s) if t.per_workload_s else {"total": seconds}


def _synthetic(stage: Stage, anchor: Verdict, task: Task) -> Verdict:
    detail, status = _SYNTHETIC[stage]
    tests = []
    if status is not None:  # NR and WO ran: one test that failed as such
        case = (task.tests or task.workloads)[0].id if (task.tests or task.workloads) else "t"
        tests = [TestResult(id=case, passed=False, status=status, message="synthetic")]
    return Verdict(
        task_id=task.id,
        suite=anchor.suite,
        model=f"synthetic-{stage.value}",
        stage=stage,
        detail=detail,
        reason=f"synthetic {stage.value} candidate (simulator)",
        language=task.language.value,
        tests=tests,
        baseline=anchor.baseline,
        reference=anchor.reference,
        machine=anchor.machine,
    )


def build_ladder(
    tasks: Sequence[Task],
    verdicts: Sequence[Verdict],
    config: SimulatorConfig | None = None,
    *,
    suite: str,
    source: str = "",
) -> Ladder:
    """Order every task's measured solutions by quality; add the synthetic failures below."""
    config = config or SimulatorConfig()
    _check_verdicts(verdicts, suite)
    by_task: dict[str, dict[str, list[Verdict]]] = {}
    for v in verdicts:
        by_task.setdefault(v.task_id, {}).setdefault(v.model, []).append(v)
    notes: list[str] = []
    known = {t.id for t in tasks}
    stray = sorted(set(by_task) - known)
    if stray:
        notes.append(f"ignored results of {len(stray)} task(s) not in the suite: {stray[:5]}")
    rungs: list[Rung] = []
    for task in tasks:
        rungs += _task_rungs(task, by_task.get(task.id, {}), config, notes)
    if not rungs:
        labels = sorted({v.model for v in verdicts})
        raise ConfigError(
            f"no task has {config.min_solutions} measured solutions of distinct quality "
            f"(results hold models {labels[:6]}); measure the suite's own solutions, e.g. "
            f"perfgym eval {suite} --solutions baseline --solutions pool-1 --solutions reference"
        )
    return Ladder(suite=suite, rungs=rungs, config=config, source=source, notes=notes)


def _task_rungs(
    task: Task, results: dict[str, list[Verdict]], config: SimulatorConfig, notes: list[str]
) -> list[Rung]:
    placed: list[tuple[tuple[int, float], Solution, Verdict]] = []
    for sol in task.solutions():
        key = _quality_key(task, sol)
        found = results.get(sol.label, [])
        if key is None:
            if found:
                notes.append(f"{task.id}: {sol.label} has no known quality; left out")
            continue
        for v in found:
            if v.infra_error:
                notes.append(f"{task.id}: {sol.label} hit an infrastructure error; left out")
                continue
            placed.append((key, sol, v))
    others = sorted(set(results) - {s.label for s in task.solutions()})
    if others:
        notes.append(f"{task.id}: ignored results of {others} (not solutions of the task)")
    keys = sorted({k for k, _, _ in placed})
    if len(keys) < config.min_solutions:
        if results:
            notes.append(
                f"{task.id}: skipped, {len(keys)} measured solution level(s) < "
                f"min_solutions={config.min_solutions}"
            )
        return []
    failures = list(config.failures)
    levels = len(failures) + len(keys)
    level_of = {k: len(failures) + i for i, k in enumerate(keys)}
    # The reference pool: every correct solution's per-workload durations.
    timed = [(sol.label, v.sample, _workloads(v.candidate)) for _, sol, v in placed
             if v.stage is Stage.OK]  # fmt: skip
    everyone = [w for _, _, w in timed if w is not None]
    anchor = next((v for _, sol, v in placed if sol.label == task.baseline.label), placed[0][2])
    out = [
        Rung(task.id, stage.value, True, i, levels, _synthetic(stage, anchor, task), everyone)
        for i, stage in enumerate(failures)
    ]
    for key, sol, v in sorted(placed, key=lambda p: (p[0], p[2].sample)):
        pool = everyone
        if config.pool == "leave_one_out":
            pool = [w for lab, s, w in timed if w is not None and (lab, s) != (sol.label, v.sample)]
        out.append(Rung(task.id, sol.label, False, level_of[key], levels, v, pool))
    if not any(r.verdict.stage is Stage.OK for r in out):
        notes.append(f"{task.id}: none of its solutions is correct on this run")
    return out
