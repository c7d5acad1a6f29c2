"""ENAMEL's evaluation protocol: level by level, reference-derived limits, six timed calls per test.

For each problem the expert reference is measured once (`enamel.reference`: expected answers,
r_j = the largest Hodges–Lehmann time of level j over 6 timed calls per test, one limit
T = 2 · max_{j>0} r_j), then every sample runs the levels against it (`enamel.sample`: a
wrong answer zeroes the sample, a timeout ends it at that level), or, as an option, with its
calls paired with the reference's and ENAMEL's time correction applied per test
(`enamel.pairing`).
`perfgym.metrics.enamel` turns the level times into eff@k and pass@k.

Every call is a fresh forked child of a warm worker (no state survives between calls, so a
cached answer cannot speed up the repeats). The duration is the entry point's own call time,
measured in that child around the call, as ENAMEL measures it, and believed only when the
worker's external fork-to-exit wall time agrees (`enamel.timer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.reference import ReferenceFailed, ReferenceRun, measure_reference
from perfgym.enamel.sample import ENAMEL_KILL_SLACK_S, KILL_SLACK_S, evaluate_sample
from perfgym.metrics.enamel_levels import EnamelProblem
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.generate import ENAMEL_KEY
from perfgym.tasks.task import Task

__all__ = ["ENAMEL_KILL_SLACK_S", "KILL_SLACK_S", "REPEATS", "SOLUTION_ALIASES", "EnamelTiming",
           "EnamelTrace", "ReferenceFailed", "evaluate", "evaluate_problem",
           "is_enamel"]  # fmt: skip

#: Names users know the shipped solution sets by -> the label they carry in the ENAMEL suite.
SOLUTION_ALIASES = {
    "humaneval-canonical": "baseline",
    "enamel-reference": "reference",
    "humanevalplus-canonical": "humanevalplus-canonical",
}
REPEATS = 6


class EnamelTrace(BaseModel):
    """What happened to one sample on one problem (for logs and results files)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    solution: str
    sample: int = Field(0, description="The sample's index among its model's samples.")
    correct: bool
    level_times_s: list[float | None]
    reference_times_s: list[float]
    limit_s: float
    stopped: str = Field("", description="Why the sample stopped early, if it did.")
    flags: list[str] = Field(default_factory=list)
    timing: EnamelTiming = Field(
        EnamelTiming.SEQUENTIAL,
        description="How the sample was timed against the reference (`enamel.pairing`); "
        "results files written before issue 28 item 7 were all sequential.",
    )
    corrections: list[float | None] = Field(
        default_factory=list,
        description="Per level, the time correction c of the test that gave t_j (paired).",
    )


def is_enamel(task: Task) -> bool:
    return ENAMEL_KEY in task.metadata


def trace_of(task: Task, label: str, ref: ReferenceRun, source: str, workers: PythonWorkerPool,
             repeats: int, sample: int = 0,
             timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
             ) -> tuple[EnamelProblem, EnamelTrace]:  # fmt: skip
    """One sample against a measured reference: its problem entry (one sample) and trace."""
    run = evaluate_sample(task, ref, source, workers, repeats, timing)
    times = run.sample.level_times_s
    problem = EnamelProblem(task_id=task.id, reference_times_s=ref.level_times_s,
                            level_limits_s=[ref.limit_s] * len(times),
                            samples=[run.sample])  # fmt: skip
    trace = EnamelTrace(task_id=task.id, solution=label, sample=sample,
                        correct=run.sample.correct, level_times_s=times,
                        reference_times_s=ref.level_times_s, limit_s=ref.limit_s,
                        stopped=run.stopped, flags=sorted({*ref.flags, *run.flags}),
                        timing=timing, corrections=run.corrections)  # fmt: skip
    return problem, trace


def evaluate_problem(
    task: Task,
    label: str,
    workers: PythonWorkerPool,
    repeats: int = REPEATS,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> tuple[EnamelProblem, EnamelTrace]:
    """Reference timings, limits, and one sample (the solution labelled `label`)."""
    by_label = {s.label: s for s in task.solutions()}
    sample_src = by_label[SOLUTION_ALIASES.get(label, label)].source
    ref = measure_reference(task, workers, repeats)
    return trace_of(task, label, ref, sample_src, workers, repeats, timing=timing)


def evaluate(
    tasks: Sequence[Task],
    label: str,
    workers: PythonWorkerPool,
    repeats: int = REPEATS,
    progress: Callable[[int, int], None] | None = None,
    finished: Callable[[EnamelTrace], None] | None = None,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> tuple[list[EnamelProblem], list[EnamelTrace]]:
    """Evaluate the scored ENAMEL problems among `tasks` with the solution set `label`;
    `finished` receives each problem's trace as soon as it is known (to write it at once)."""
    scored = [t for t in tasks if t.metadata[ENAMEL_KEY].get("scored", True)]
    problems, traces = [], []
    for i, task in enumerate(scored):
        try:
            p, tr = evaluate_problem(task, label, workers, repeats, timing)
        except ReferenceFailed as exc:
            # Not the sample's fault: the problem cannot be scored here. Say so, keep going.
            traces.append(EnamelTrace(task_id=task.id, solution=label, correct=False,
                                      level_times_s=[], reference_times_s=[], limit_s=0.0,
                                      stopped=f"excluded: {exc}",
                                      timing=timing))  # fmt: skip
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
