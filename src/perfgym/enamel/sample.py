"""One code sample through ENAMEL's levels, against a problem's measured reference.

ENAMEL's `evaluate1`, rule by rule: level by level and test by test, each test `repeats` times
(a weight-0 level once), each call killed at T / min(c, 1) + 0.01 s; a run that exceeds the
limit, runs out of memory or overflows ends the sample at that level (that level and later
ones score 0; on level 0 the sample fails); a wrong answer or any other error zeroes every
level and fails it; t_j is the largest corrected Hodges–Lehmann time among level j's tests.
The correction c is 1 in ENAMEL's order (the default) and, paired, the reference's time on the
test over its time in calls interleaved with the sample's (`enamel.pairing`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfgym.enamel.pairing import (
    ENAMEL_TOLERANCE_S,
    EnamelTiming,
    corrected_time,
    correction,
    raw_limit,
    reference_first,
)
from perfgym.enamel.reference import (
    ReferenceFailed,
    ReferenceRun,
    call,
    enamel_program,
    level_repeats,
)
from perfgym.enamel.timer import call_time, trusted_call_time
from perfgym.errors import PerfgymError, SandboxUnavailable
from perfgym.judge.oracle import check
from perfgym.metrics.enamel_levels import EnamelSample
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits, on_cpu
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Task, TestCase

#: ENAMEL's allowance beyond the limit before a call counts as timed out.
ENAMEL_KILL_SLACK_S = ENAMEL_TOLERANCE_S
#: Process start-up and argument transfer happen outside the timed call: the kill limit of a
#: call is the level limit plus this slack (the timed call's own limit is T + 0.01 s), of CPU;
#: its wall limit is `WALL_BACKSTOP` times that, so a loaded machine does not end a level that
#: the call's CPU time would not.
KILL_SLACK_S = 0.5
#: Paired: a call over the limit is run again before it ends the level, once (a slow sample is
#: slow twice; a spike of the machine's, on a sub-millisecond limit, is not); flagged.
TIMEOUT_TRIES = 2
TIMEOUT_RETRIED = "timeout_retried"
#: Errors ENAMEL counts as a level break, like a timeout, rather than a wrong sample.
LEVEL_BREAK_ERRORS = ("MemoryError", "OverflowError")


@dataclass
class SampleRun:
    """A sample's outcome: what eff@k reads, and why it stopped."""

    sample: EnamelSample
    stopped: str = ""
    flags: list[str] = field(default_factory=list)
    #: Per level, the time correction c of the test that gave t_j (1 in ENAMEL's order;
    #: None where the level did not finish).
    corrections: list[float | None] = field(default_factory=list)


class _Stop(PerfgymError):
    """A test ended the sample: a level break (`broke`) or a wrong answer / error."""

    def __init__(self, why: str, broke: bool) -> None:
        super().__init__(why)
        self.why, self.broke = why, broke


def evaluate_sample(
    task: Task,
    ref: ReferenceRun,
    source: str,
    workers: PythonWorkerPool,
    repeats: int,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> SampleRun:
    program = enamel_program(task, source)
    flags: list[str] = []
    n = len(ref.levels)
    times: list[float | None] = [None] * n
    corrections: list[float | None] = [None] * n
    paired = timing is EnamelTiming.PAIRED
    for j, cases in enumerate(ref.levels):
        per_test: list[tuple[float, float]] = []
        for case in cases:
            try:
                per_test.append(_test(task, ref, program, case, workers,
                                      level_repeats(j, repeats), paired, flags))  # fmt: skip
            except _Stop as stop:
                if stop.broke:  # this level and every later one were never finished: no time
                    return SampleRun(EnamelSample(correct=True, level_times_s=times),
                                     f"{stop.why} at level {j} ({case.id})",
                                     sorted(set(flags)), corrections)  # fmt: skip
                return SampleRun(EnamelSample(correct=False, level_times_s=[None] * n),
                                 stop.why, sorted(set(flags)), [None] * n)  # fmt: skip
        times[j], corrections[j] = max(per_test)
    return SampleRun(EnamelSample(correct=True, level_times_s=times), "", sorted(set(flags)),
                     corrections)  # fmt: skip


def _test(task: Task, ref: ReferenceRun, program: str, case: TestCase,
          workers: PythonWorkerPool, reps: int, paired: bool,
          flags: list[str]) -> tuple[float, float]:  # fmt: skip
    """(corrected time, correction) of the sample on one test, its calls paired with the
    reference's when `paired`; raises `_Stop` when the sample stops here."""
    limit = ref.limit_s
    mine: list[float] = []
    theirs: list[float] = []
    first_value: object = None
    for rep in range(reps):
        if paired and reference_first(rep):
            theirs.append(_reference_call(task, ref, case, workers, flags))
        c = correction(ref.test_times_s[case.id], theirs) if paired else 1.0
        # The call forgets what it cached (`Limits.forget_page_cache`): a later repeat of this
        # test could otherwise time lookups to read the answer it left (red team helper-95).
        kill = on_cpu(limit / min(c, 1.0) + KILL_SLACK_S, memory_mb=task.memory_limit_mb or 4096,
                      forget_page_cache=True)  # fmt: skip
        tries = TIMEOUT_TRIES if paired else 1
        for attempt in range(tries):
            r = call(workers, task, program, case, kill)
            if r.status is Status.SANDBOX_ERROR:  # the machine's failure, not the sample's
                raise SandboxUnavailable(f"{task.id} {case.id}: {r.error}")
            t = call_time(r, flags, ref.gap_s.get(case.id)) if r.status is Status.OK else None
            slow = r.status is Status.TIMEOUT or (t is not None and t > raw_limit(limit, c))
            if not slow:
                break
            if attempt + 1 < tries:
                flags.append(TIMEOUT_RETRIED)
        broke = r.status is Status.MEMORY_LIMIT or (
            r.status is Status.RUNTIME_ERROR and r.error.startswith(LEVEL_BREAK_ERRORS)
        )
        if slow or broke:
            raise _Stop(("TIMEOUT" if r.status is Status.OK else r.status.value).lower(), True)
        if r.status is not Status.OK:
            raise _Stop(f"error on {case.id}: {r.error[:200]}", broke=False)
        # Every repeat's output is judged, as ENAMEL does; an output equal to the first
        # repeat's has the first one's verdict.
        if rep == 0 or r.value != first_value:
            ok, message = check(task.oracle, case, ref.expected[case.id], r.value)
            if not ok:
                raise _Stop(f"wrong on {case.id}: {message[:200]}", broke=False)
        if rep == 0:
            first_value = r.value
        assert t is not None
        mine.append(t)
        if paired and not reference_first(rep):
            theirs.append(_reference_call(task, ref, case, workers, flags))
    c = correction(ref.test_times_s[case.id], theirs) if paired else 1.0
    return corrected_time(mine, c), c


def _reference_call(task: Task, ref: ReferenceRun, case: TestCase, workers: PythonWorkerPool,
                    flags: list[str]) -> float:  # fmt: skip
    """One paired call of the reference: its trusted time (it passed this test before)."""
    roomy = Limits(wall_s=60.0, memory_mb=task.memory_limit_mb or 4096)  # as its first run's
    r = call(workers, task, ref.program, case, roomy)
    if r.status is Status.SANDBOX_ERROR:
        raise SandboxUnavailable(f"{task.id} {case.id} (reference): {r.error}")
    if r.status is not Status.OK:
        raise ReferenceFailed(f"{task.id}: the reference fails on {case.id} in a paired call: "
                              f"{r.error}")  # fmt: skip
    return trusted_call_time(r, flags)
