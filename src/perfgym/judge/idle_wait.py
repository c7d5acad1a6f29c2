"""`flag_idle_wait`: on the CPU clock, a candidate whose runs waited far longer than they ran,
beyond what its core's load made the baseline wait, is flagged as hiding time.

The CPU clock does not count a process that sleeps. Red team helper-73's relay printed its
answer and slept, holding it for the next run of the same input, which read it in a
millisecond: every run was cheap on the CPU clock, and `perfgym optimize` accepted the
baseline's algorithm as 5.7-14.5x faster (through file locks, closed since; any channel between
runs needs a run that waits for another). A correct program on one core waits only for its
core (and its pipes): in the same rounds, the baseline's waiting per CPU second and the
reference's whole wait say how much that is. The candidate's wait beyond the larger of the two
in its worst round, above `IDLE_FLOOR_S`,
twice its own CPU and a quarter of the baseline's wall time, flags its timing `idle_wait`
(DEGRADED: the lowest speed credit a correct program earns; never accepted as a step). The
worst round, not the median (red team helper-75: a holder lingering in a minority of rounds
was invisible to the median): honest copies of all 80 perfgym-core solutions, 5 rounds beside
two busy loops, reached at most 0.46 of the floor in their worst round.

A round is one draw of the machine's load: beside another test worker's process storms, an
honest 40 ms program waited over 100 ms for its core in one round (a full test run's fast
candidate, paid the floor). So a batch with a suspect is measured once more, all of it, fresh,
and only the second measurement is used, its flags included (`stages`): a spike seldom
strikes twice, a program that waits waits again, and nothing measured the first time (a fast
round bought by waiting in another) survives into the verdict.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from perfgym.judge.verdict import Verdict
from perfgym.timing.result import Timing, TimingStatus

IDLE_WAIT = "idle_wait"
#: The least unexplained wait (seconds, in the worst round) that flags a candidate.
IDLE_FLOOR_S = 0.1
#: A wait more than this (seconds) over the task's floor is no load spike: the candidate is
#: flagged for it even where its batch is measured again (red team helper-122 slept 15 s in the
#: first measurement only, telling the two apart by its file's age, and was measured again
#: unflagged).
SPIKE_MAX_S = 1.0


def _waits(t: Timing | None) -> list[float]:
    walls, cpus = (t.external_walls_s, t.external_cpus_s) if t is not None else ([], [])
    if not walls or not cpus or len(walls) != len(cpus):
        return []
    return [max(0.0, w - c) for w, c in zip(walls, cpus, strict=True)]


def idle_excess_s(
    candidate: Timing, baseline: Timing, reference: Timing | None = None
) -> float | None:
    """The candidate's wait (wall less CPU) in its worst round beyond what the task's own
    programs waited: the baseline's median wait per CPU second times the candidate's CPU, or
    the reference's median wait whole, whichever is more (a run's fixed costs, its start and
    its cgroup move, weigh on a short run as on the reference; beside another judge's runs a
    20 ms program waited 100 ms and more for its core). None without both roles' figures."""
    cw, cc = candidate.external_walls_s, candidate.external_cpus_s
    bw, bc = baseline.external_walls_s, baseline.external_cpus_s
    if not (cw and cc and bw and bc) or len(cw) != len(cc) or len(bw) != len(bc):
        return None
    rates = [max(0.0, w - c) / c for w, c in zip(bw, bc, strict=True) if c > 0]
    if not rates:
        return None
    rate = statistics.median(rates)
    ref_waits = _waits(reference)
    fixed = statistics.median(ref_waits) if ref_waits else 0.0
    return max((w - c) - max(c * rate, fixed) for w, c in zip(cw, cc, strict=True))


class Wait(NamedTuple):
    """A candidate's worst round's unexplained wait, the floor it must pass to flag, and the
    line past which no load spike explains it (`beyond_a_spike`)."""

    excess: float
    floor: float
    spike_line: float


def _over_floor(c: Timing, b: Timing, r: Timing | None) -> Wait | None:
    """The candidate's `Wait`, or None without both roles' figures. The spike line is the
    task's own (the floor's part that is not the candidate's CPU, plus `SPIKE_MAX_S`): red
    team helper-123 burnt CPU in a first measurement to widen a line drawn on its own CPU and
    slept 4.8 s a round unflagged."""
    excess = idle_excess_s(c, b, r)
    if excess is None:
        return None
    cpu = statistics.median(c.external_cpus_s or [0.0])
    task_floor = max(IDLE_FLOOR_S, 0.25 * statistics.median(b.external_walls_s))
    return Wait(excess, max(task_floor, 2.0 * cpu), task_floor + SPIKE_MAX_S)


def idle_suspects(timings: Mapping[str, Timing], labels: Sequence[str], clock: str,
                  cores: int) -> dict[str, Wait]:  # fmt: skip
    """label -> its `Wait` for each of `labels` whose timing `flag_idle_wait` would flag
    beside the baseline and reference in `timings`."""
    b = timings.get("baseline")
    if clock != "cpu" or cores != 1 or b is None:
        return {}
    out = {}
    for label in labels:
        c = timings.get(label)
        figures = _over_floor(c, b, timings.get("reference")) if c is not None and c.ok else None
        if figures is not None and figures.excess > figures.floor:
            out[label] = figures
    return out


def beyond_a_spike(wait: Wait) -> bool:
    """A wait no load spike explains: past its spike line."""
    return wait.excess > wait.spike_line


def flag_timing(c: Timing, wait: Wait, when: str = "") -> None:
    """Flag `c` `idle_wait` (DEGRADED) for `wait`; `when` says which measurement waited when
    it is not `c`'s own."""
    excess, floor = wait.excess, wait.floor
    c.flags.append(IDLE_WAIT)
    c.status = TimingStatus.DEGRADED
    c.status_reason = (
        f"the runs waited {excess * 1e3:.0f} ms more than they ran beyond the baseline's "
        f"waiting for its core (over {floor * 1e3:.0f} ms){when}: time the CPU clock does not "
        "count"
    )


def flag_idle_wait(verdict: Verdict, clock: str, cores: int) -> bool:
    """Flag (and degrade) the candidate's timing when it waited without cause; True if so (the
    verdict takes its candidate's flags after this). Only
    on the CPU clock (the wall clock counts the wait) and for one-core tasks (a program on more
    cores waits for its own threads)."""
    c, b = verdict.candidate, verdict.baseline
    if clock != "cpu" or cores != 1 or c is None or b is None or not c.ok:
        return False
    figures = _over_floor(c, b, verdict.reference)
    if figures is None or figures.excess <= figures.floor:
        return False
    flag_timing(c, figures)
    return True
