"""How one ENAMEL call's duration is taken: the child's own timer, checked from outside.

ENAMEL times the entry point inside the process that runs it (`time.time()` around the call),
on a machine of its own. perfgym's call child times the call too, and reports its time on a
machine of its own (`CallResult.reported_call_own_s`): the call's wall time less the time its
thread was runnable but waiting for a CPU that another process held (the kernel's schedstat
run delay), and never below its CPU time. On a quiet core that is the wall time ENAMEL
measures; on a shared or loaded machine it leaves out what the scheduler gave other
processes, which on a sub-millisecond call was most of the wall time (the reference-derived
limit T of one problem moved by a median factor of 1.82 between two wall-clock runs here,
HumanEval/55 from 0.17 ms to 13.8 ms). What the call waited for itself (a sleep, I/O, a child
doing its work) still counts, as on ENAMEL's clock. Without schedstat the wall time is used.

That timer lives in the program's own process: a program can patch the clock or write its own
result. The worker also counts the call from outside: `CallResult.program_cpu_s`. With the
worker's cgroup (`program_cpu_call_only`) it is the CPU of every process of the call (the child
and whatever it forked, waited for or not) from the child's word that its module ran to its word
that its result was written: the arguments are a frame the worker reads after the child's fork
and hands over only after that first word, so module code cannot compute the answer early, and
the result is taken at the second word, so a word sent early is an answer missing. Neither the
module's execution (an `import statistics` cost ten times a call) nor the exit is counted: what
ENAMEL times is the call alone. Without the cgroup it is the child's own CPU from a reading it
sends before any program code runs to its exit (module code, the result's encoding, the exit).
Less the reference's own such gap on the same test (the largest of its runs), a small slack
(and, without the cgroup, where every call's exit is counted, a share of its release of the
memory the kernel saw the call hold: `TEARDOWN_S_PER_MB`), that
is an estimate of the call's duration no program can lower: computing an answer takes CPU. The
call's time is the larger of the self-report and that estimate (flag `call_timer_mismatch` when
the estimate overrules the report): an honest report stands, and a program that fakes its timer
gains at most the slack and the spread of the reference's gap (~0.1 ms on HumanEval/1).
"""

from __future__ import annotations

from perfgym.sandbox.pyworker import CallResult
from perfgym.sandbox.worker_messages import CPU_BY_CGROUP

#: The gap a run may show when no reference gap is known: module code, result, exit.
DEFAULT_GAP_S = 0.02
#: What a run's gap may exceed the reference's by, beyond memory release, before the outside
#: estimate overrules its self-report: the most a faked timer can hide per run (the
#: reference's gap on HumanEval/1, T = 2 ms, was 0.44-0.50 ms over its tests, the call alone).
GAP_SLACK_S = 0.0001
#: Exit releases the memory a call still holds (~0.12 ms per MiB of anonymous memory measured
#: on the dev machine). Where the exit is counted for every call (no worker cgroup: the count is
#: the child's own, from before its module ran to its exit), the allowance is this much per MiB
#: of the call's peak RSS: no more than the cheapest way to raise that peak costs inside the
#: count (mapping an already-cached file `MAP_POPULATE` rises about 0.03 ms per MiB; red team
#: helper-85 bought 300 ms of allowance for 90 ms at 0.1). With the cgroup, an honest call's
#: count ends at its "done" and never holds its exit: a count that runs to the exit is one the
#: program chose (it wrote its own result and never said "done"), and its module, where it
#: can raise and free that peak, is outside the count; it gets no allowance (helper-85: 60 and
#: 250 ms of work behind a 2 us report, 3 of 3, at 0.1 ms per MiB of an 800 or 3,000 MiB peak).
TEARDOWN_S_PER_MB = 2e-5
MISMATCH = "call_timer_mismatch"

#: Readings of one clock inside and outside the child agree to this; a self-report above the
#: worker's fork-to-exit wall time by more is impossible.
CLOCK_TOLERANCE_S = 0.001


def reported_time(r: CallResult) -> float | None:
    """The call's self-reported duration on a machine of its own (its wall time from a worker
    or kernel that reported no such time)."""
    return r.reported_call_own_s if r.reported_call_own_s is not None else r.reported_call_s


def impossible(r: CallResult, t: float | None) -> bool:
    """A self-report no honest run can give: missing, zero or negative (a call on a ns clock
    takes some), or above the fork-to-exit wall time the worker measured."""
    return t is None or t <= 0 or t > r.wall_s + CLOCK_TOLERANCE_S


def outside_time(r: CallResult) -> float:
    """The worker's own count of the program's run: its CPU from the pre-program reading to the
    exit (the fork-to-exit wall time when the worker sent no such reading). Without the
    worker's cgroup that CPU is the child's own rusage, which never sees a grandchild the kernel
    reaps (SIGCHLD ignored): one doing the call's work behind a forged self-report was timed
    at 8 ms for ~150 ms of work (red team helper-71). The call's processes share its one core,
    so its stamp-to-exit wall time bounds their work from above: the larger stands (a loaded
    machine then inflates honest calls too, and flags them; the cgroup is the accurate mode)."""
    if r.program_cpu_s is None:
        return r.wall_s
    if r.cpu_mechanism == CPU_BY_CGROUP or r.program_wall_s is None:
        return r.program_cpu_s
    return max(r.program_cpu_s, r.program_wall_s)


def outside_estimate(r: CallResult, reference_gap_s: float | None = None) -> float:
    """The call's duration as the outside clock bounds it from below, give or take the slack."""
    gap = DEFAULT_GAP_S if reference_gap_s is None else reference_gap_s
    teardown = 0.0
    if not r.program_cpu_call_only and r.cpu_mechanism != CPU_BY_CGROUP:
        teardown = TEARDOWN_S_PER_MB * max(0.0, r.peak_rss_mb)
    allowance = gap + GAP_SLACK_S + teardown
    return max(0.0, outside_time(r) - allowance)


def call_time(r: CallResult, flags: list[str], reference_gap_s: float | None = None) -> float:
    """The call's duration: the self-report, unless the outside estimate is larger (or the
    report is impossible), then that estimate."""
    t, estimate = reported_time(r), outside_estimate(r, reference_gap_s)
    if impossible(r, t) or estimate > t:  # type: ignore[operator]
        flags.append(MISMATCH)
        return estimate
    assert t is not None
    return t


def trusted_call_time(r: CallResult, flags: list[str]) -> float:
    """The expert reference's call time: its self-report, refused only when impossible (the
    reference is the task's own code; its gap is the yardstick, not the suspect)."""
    t = reported_time(r)
    if impossible(r, t):
        flags.append(MISMATCH)
        return outside_time(r)
    assert t is not None
    return t


def gap_of(r: CallResult) -> float:
    """A trusted run's outside − reported time, the yardstick for candidates' runs."""
    t = reported_time(r)
    return max(0.0, outside_time(r) - (t if t is not None else 0.0))
