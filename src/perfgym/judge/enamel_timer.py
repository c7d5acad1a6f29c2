"""How one ENAMEL call's duration is taken: the child's own call timer, checked from outside.

ENAMEL times the entry point inside the process that runs it (`time.time()` around the call).
perfgym's call child does the same (`CallResult.reported_call_s`), but that timer lives in the
program's own process: a program can patch `time.perf_counter_ns` or write its own result. The
worker also counts the program from outside: `CallResult.program_cpu_s`, the CPU the kernel
counted for the child from a reading the child sends before any program code runs to its exit
(the call plus the program's module code, the result's encoding and the exit). Less the
reference's own such gap on the same test (the largest of its runs), a small slack and the
exit's release of the memory the kernel saw the call hold, that is an estimate of the call's
duration no program can lower: computing an answer takes CPU. CPU, not the outside wall time,
because on a loaded machine the worker's own wake-up after the child's exit adds milliseconds
of scheduling delay that are nobody's work. The call's time is the larger of the self-report
and that estimate (flag `call_timer_mismatch` when the estimate overrules the report): an
honest report stands, and a program that fakes its timer gains at most the slack. A program
that waits instead of computing (sleep) is not caught here: waiting computes nothing.
"""

from __future__ import annotations

from perfgym.sandbox.pyworker import CallResult

#: The gap a run may show when no reference gap is known: module code, result, exit.
DEFAULT_GAP_S = 0.02
#: What a run's gap may exceed the reference's by, beyond memory release, before the outside
#: estimate overrules its self-report: the most a faked timer can hide per run.
GAP_SLACK_S = 0.002
#: Exit releases the memory a call still holds (~0.12 ms per MiB measured on the dev machine):
#: the allowance is 0.1 ms per MiB of the call's peak RSS, which the kernel reports (a program
#: cannot grow its allowance without paying at least as much to allocate that memory).
TEARDOWN_S_PER_MB = 1e-4
MISMATCH = "call_timer_mismatch"


def outside_time(r: CallResult) -> float:
    """The worker's own count of the program's run: its CPU from the pre-program reading to the
    exit (the fork-to-exit wall time when the worker sent no such reading)."""
    return r.program_cpu_s if r.program_cpu_s is not None else r.wall_s


def outside_estimate(r: CallResult, reference_gap_s: float | None = None) -> float:
    """The call's duration as the outside clock bounds it from below, give or take the slack."""
    gap = DEFAULT_GAP_S if reference_gap_s is None else reference_gap_s
    allowance = gap + GAP_SLACK_S + TEARDOWN_S_PER_MB * max(0.0, r.peak_rss_mb)
    return max(0.0, outside_time(r) - allowance)


def call_time(r: CallResult, flags: list[str], reference_gap_s: float | None = None) -> float:
    """The call's duration: the self-report, unless the outside estimate is larger (or the
    report is impossible), then that estimate."""
    t, estimate = r.reported_call_s, outside_estimate(r, reference_gap_s)
    if t is None or t < 0 or t > r.wall_s or estimate > t:
        flags.append(MISMATCH)
        return estimate
    return t


def trusted_call_time(r: CallResult, flags: list[str]) -> float:
    """The expert reference's call time: its self-report, refused only when impossible (the
    reference is the task's own code; its gap is the yardstick, not the suspect)."""
    t = r.reported_call_s
    if t is None or t < 0 or t > r.wall_s:
        flags.append(MISMATCH)
        return r.wall_s
    return t


def gap_of(r: CallResult) -> float:
    """A trusted run's outside − reported time, the yardstick for candidates' runs."""
    t = r.reported_call_s if r.reported_call_s is not None else 0.0
    return max(0.0, outside_time(r) - t)
