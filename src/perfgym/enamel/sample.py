"""One code sample through ENAMEL's levels, against a problem's measured reference.

ENAMEL's `evaluate1`, rule by rule: level by level and test by test, each test `repeats` times
(a weight-0 level once), each call killed at T + 0.01 s; a run that exceeds the limit, runs
out of memory or overflows ends the sample at that level (that level and later ones score 0;
on level 0 the sample fails); a wrong answer or any other error zeroes every level and fails
it; t_j is the largest Hodges–Lehmann time among level j's tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfgym.enamel.reference import ReferenceRun, call, enamel_program, level_repeats
from perfgym.enamel.timer import call_time
from perfgym.errors import SandboxUnavailable
from perfgym.judge.oracle import check
from perfgym.metrics.enamel_levels import EnamelSample
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import on_cpu
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Task
from perfgym.timing.estimators import hodges_lehmann

#: ENAMEL's allowance beyond the limit before a call counts as timed out.
ENAMEL_KILL_SLACK_S = 0.01
#: Process start-up and argument transfer happen outside the timed call: the kill limit of a
#: call is the level limit plus this slack (the timed call's own limit is T + 0.01 s), of CPU;
#: its wall limit is `WALL_BACKSTOP` times that, so a loaded machine does not end a level that
#: the call's CPU time would not.
KILL_SLACK_S = 0.5
#: Errors ENAMEL counts as a level break, like a timeout, rather than a wrong sample.
LEVEL_BREAK_ERRORS = ("MemoryError", "OverflowError")


@dataclass
class SampleRun:
    """A sample's outcome: what eff@k reads, and why it stopped."""

    sample: EnamelSample
    stopped: str = ""
    flags: list[str] = field(default_factory=list)


def evaluate_sample(
    task: Task, ref: ReferenceRun, source: str, workers: PythonWorkerPool, repeats: int
) -> SampleRun:
    program = enamel_program(task, source)
    limit = ref.limit_s
    kill = on_cpu(limit + KILL_SLACK_S, memory_mb=task.memory_limit_mb or 4096)
    flags: list[str] = []
    n = len(ref.levels)
    times: list[float | None] = [None] * n
    for j, cases in enumerate(ref.levels):
        per_test = []
        for case in cases:
            reps: list[float] = []
            first_value: object = None
            for rep in range(level_repeats(j, repeats)):
                r = call(workers, task, program, case, kill)
                if r.status is Status.SANDBOX_ERROR:  # the machine's failure, not the sample's
                    raise SandboxUnavailable(f"{task.id} {case.id}: {r.error}")
                t = call_time(r, flags, ref.gap_s.get(case.id)) if r.status is Status.OK \
                    else None  # fmt: skip
                broke = r.status in (Status.TIMEOUT, Status.MEMORY_LIMIT) or (
                    r.status is Status.RUNTIME_ERROR and r.error.startswith(LEVEL_BREAK_ERRORS)
                )
                if broke or (t is not None and t > limit + ENAMEL_KILL_SLACK_S):
                    why = r.status.value if broke else "TIMEOUT"
                    return _stopped(times, f"{why.lower()} at level {j} ({case.id})", flags)
                if r.status is not Status.OK:
                    return _wrong(n, f"error on {case.id}: {r.error[:200]}", flags)
                # Every repeat's output is judged, as ENAMEL does; an output equal to the
                # first repeat's has the first one's verdict.
                if rep == 0 or r.value != first_value:
                    ok, message = check(task.oracle, case, ref.expected[case.id], r.value)
                    if not ok:
                        return _wrong(n, f"wrong on {case.id}: {message[:200]}", flags)
                if rep == 0:
                    first_value = r.value
                assert t is not None
                reps.append(t)
            per_test.append(hodges_lehmann(reps))
        times[j] = max(per_test)
    return SampleRun(EnamelSample(correct=True, level_times_s=times), "", sorted(set(flags)))


def _stopped(times: list[float | None], why: str, flags: list[str]) -> SampleRun:
    # The level that broke and every later one were never finished: no time.
    return SampleRun(EnamelSample(correct=True, level_times_s=times), why, sorted(set(flags)))


def _wrong(n: int, why: str, flags: list[str]) -> SampleRun:
    return SampleRun(EnamelSample(correct=False, level_times_s=[None] * n), why, sorted(set(flags)))
