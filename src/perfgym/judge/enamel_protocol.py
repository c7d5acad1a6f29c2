"""ENAMEL's evaluation protocol: level by level, reference-derived limits, six timed calls per test.

For each problem: the expert reference runs every generated test (its outputs are the expected
answers) and each test is timed 6 times; r_j is the largest Hodges–Lehmann time of level j;
the limit is T = 2 · max_{j>0} r_j. A sample then runs level 0 for correctness, and each later
level test by test: a wrong answer zeroes the sample, a timeout ends it at that level (later
levels are never run), otherwise each test is timed 6 times. `perfgym.metrics.enamel` turns the
level times into eff@k and pass@k.

Every call is a fresh forked child of a warm worker (no state survives between calls, so a
cached answer cannot speed up the repeats). The duration is the entry point's own call time,
measured in that child around the call, as ENAMEL measures it; it is cross-checked against the
worker's external fork-to-exit wall time (a reported time above it is impossible and flagged).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import PerfgymError
from perfgym.judge.enamel_levels import (
    ENAMEL_WEIGHTS,
    EnamelProblem,
    EnamelSample,
    enamel_level_limits,
)
from perfgym.judge.oracle import check
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import CallResult, PythonWorkerPool
from perfgym.tasks.generate import ENAMEL_KEY, materialize_all
from perfgym.tasks.task import Task, TestCase
from perfgym.timing.estimators import hodges_lehmann

#: Names users know the shipped solution sets by -> the label they carry in the ENAMEL suite.
SOLUTION_ALIASES = {
    "humaneval-canonical": "baseline",
    "enamel-reference": "reference",
    "humanevalplus-canonical": "humanevalplus-canonical",
}
REPEATS = 6
#: ENAMEL's own allowance beyond the limit before a call counts as timed out.
ENAMEL_KILL_SLACK_S = 0.01
#: Process start-up and argument transfer happen outside the timed call: the kill limit of a
#: call is the level limit plus this slack (ENAMEL adds 0.01 s to its in-process limit).
KILL_SLACK_S = 0.5


class ReferenceFailed(PerfgymError, RuntimeError):
    """The expert reference itself failed on a generated input: the problem cannot be scored."""


class EnamelTrace(BaseModel):
    """What happened to one sample on one problem (for logs and results files)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    solution: str
    correct: bool
    level_times_s: list[float | None]
    reference_times_s: list[float]
    limit_s: float
    stopped: str = Field("", description="Why the sample stopped early, if it did.")
    flags: list[str] = Field(default_factory=list)


def is_enamel(task: Task) -> bool:
    return ENAMEL_KEY in task.metadata


def _levels(task: Task) -> list[list[TestCase]]:
    cases = materialize_all(task, [*task.tests, *task.workloads])
    n = len(task.metadata[ENAMEL_KEY]["levels"])
    return [[c for c in cases if c.level == j] for j in range(n)]


def _timed(
    workers: PythonWorkerPool, task: Task, source: str, case: TestCase, limits: Limits
) -> CallResult:
    return workers.call(source, task.entry_point, case.args or [], limits)


def _call_time(r: CallResult, flags: list[str]) -> float:
    t = r.reported_call_s
    if t is None or t < 0 or t > r.wall_s:
        flags.append("call_timer_mismatch")
        return r.wall_s  # never trust an impossible self-report: fall back to the outside clock
    return t


def evaluate_problem(
    task: Task, label: str, workers: PythonWorkerPool, repeats: int = REPEATS
) -> tuple[EnamelProblem, EnamelTrace]:
    """Reference timings, limits, and one sample (the solution labelled `label`)."""
    by_label = {s.label: s for s in task.solutions()}
    sample_src = by_label[SOLUTION_ALIASES.get(label, label)].source
    ref = task.reference
    assert ref is not None and task.entry_point is not None
    levels = _levels(task)
    roomy = Limits(wall_s=60.0, memory_mb=task.memory_limit_mb or 4096)
    flags: list[str] = []
    expected: dict[str, Any] = {}
    ref_times: list[float] = []
    for cases in levels:
        per_test = []
        for case in cases:
            first = _timed(workers, task, ref.source, case, roomy)
            if first.status is not Status.OK:
                raise ReferenceFailed(f"{task.id}: the reference fails on {case.id}: {first.error}")
            expected[case.id] = first.value
            reps = [_call_time(first, flags)]
            reps += [_call_time(_timed(workers, task, ref.source, case, roomy), flags)
                     for _ in range(repeats - 1)]  # fmt: skip
            per_test.append(hodges_lehmann(reps))
        ref_times.append(max(per_test))
    limit = enamel_level_limits(ref_times, ENAMEL_WEIGHTS)[0]
    kill = Limits(wall_s=limit + KILL_SLACK_S, memory_mb=task.memory_limit_mb or 4096)
    times: list[float | None] = [None] * len(levels)
    correct, stopped = True, ""
    for j, cases in enumerate(levels):
        per_test = []
        for case in cases:
            first = _timed(workers, task, sample_src, case, kill)
            # ENAMEL kills a call at T + 0.01 s; slower-than-T calls that finish just score 0.
            if first.status is Status.TIMEOUT or (
                first.status is Status.OK and _call_time(first, flags) > limit + ENAMEL_KILL_SLACK_S
            ):
                stopped = f"timeout at level {j} ({case.id})"
                break
            if first.status is not Status.OK:
                correct, stopped = False, f"error on {case.id}: {first.error[:200]}"
                break
            ok, message = check(task.oracle, case, expected[case.id], first.value)
            if not ok:
                correct, stopped = False, f"wrong on {case.id}: {message[:200]}"
                break
            reps = [_call_time(first, flags)]
            for _ in range(repeats - 1):
                r = _timed(workers, task, sample_src, case, kill)
                reps.append(_call_time(r, flags) if r.status is Status.OK else limit)
            per_test.append(hodges_lehmann(reps))
        if stopped:
            break
        times[j] = max(per_test)
    if not correct:
        times = [None] * len(levels)
    sample = EnamelSample(correct=correct, level_times_s=times)
    problem = EnamelProblem(task_id=task.id, reference_times_s=ref_times,
                            level_limits_s=[limit] * len(levels), samples=[sample])  # fmt: skip
    trace = EnamelTrace(task_id=task.id, solution=label, correct=correct, level_times_s=times,
                        reference_times_s=ref_times, limit_s=limit, stopped=stopped,
                        flags=sorted(set(flags)))  # fmt: skip
    return problem, trace


def evaluate(
    tasks: Sequence[Task],
    label: str,
    workers: PythonWorkerPool,
    repeats: int = REPEATS,
    progress: Callable[[int, int], None] | None = None,
    finished: Callable[[EnamelTrace], None] | None = None,
) -> tuple[list[EnamelProblem], list[EnamelTrace]]:
    """Evaluate the scored ENAMEL problems among `tasks` with the solution set `label`;
    `finished` receives each problem's trace as soon as it is known (to write it at once)."""
    scored = [t for t in tasks if t.metadata[ENAMEL_KEY].get("scored", True)]
    problems, traces = [], []
    for i, task in enumerate(scored):
        try:
            p, tr = evaluate_problem(task, label, workers, repeats)
        except ReferenceFailed as exc:
            # Not the sample's fault: the problem cannot be scored here. Say so, keep going.
            traces.append(EnamelTrace(task_id=task.id, solution=label, correct=False,
                                      level_times_s=[], reference_times_s=[], limit_s=0.0,
                                      stopped=f"excluded: {exc}"))  # fmt: skip
            if finished is not None:
                finished(traces[-1])
            continue
        problems.append(p)
        traces.append(tr)
        if finished is not None:
            finished(tr)
        if progress is not None:
            progress(i + 1, len(scored))
    return problems, traces
