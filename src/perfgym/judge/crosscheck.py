"""Cross-checking a harness's self-reported time against the sandbox's external measurement."""

from __future__ import annotations

import statistics
from typing import NamedTuple

from perfgym.judge.verdict import Timing, TimingStatus, Verdict

#: External wall time can never be shorter than the harness's own timed region; allow jitter.
_SLACK_S = 0.005


def crosscheck_harness(verdict: Verdict, saving_ratio: float) -> bool:
    """Flag (and degrade) a candidate whose harness-claimed speed-up the external clock denies;
    True when its rounds were weighed against the baseline's and let through (then
    `perfgym.judge.paid_saving.pay_confirmed` pays what the witnesses confirm).

    A program can monkeypatch the timer its harness uses; it cannot hide from the sandbox's
    clock. Rule: the harness-claimed saving against the baseline (Tb - Tc by elapsed_ns), round
    by round, must show at least `saving_ratio` of itself in the external wall time (each
    round's time outside the harness's clock against the task's own solutions', so a busy
    machine cancels out) or, on one core, in the CPU time; most of the rounds the estimate
    rests on must (`_denied_rounds`). No harness time may exceed the external wall time of the
    same run; and the run's time outside the harness's clock may not be far over the
    baseline's and the reference's (`_untimed_work`: work moved into start-up, static
    initialisers or imports).
    """
    c, b = verdict.candidate, verdict.baseline
    if c is not None and c.clock != "harness":
        return False  # harness_below_resolution: the harness's times were not used
    # Any estimate of an ok timing is checked (not only `usable_s` ones): a zero claim is a claim.
    if c is None or not c.ok or c.estimate_s is None:
        return False
    ext_c = c.external_wall_s
    if ext_c is not None and c.estimate_s > ext_c + _SLACK_S:
        _degrade(
            verdict, "harness_time_exceeds_wall", "the harness claims more time than the run took"
        )
        return False
    if ext_c is not None and (why := _untimed_work(verdict, ext_c - c.estimate_s)):
        _degrade(verdict, "harness_untimed_work", why)
        return False
    if b is None or not b.ok or b.estimate_s is None:
        return False
    if ext_c is None or b.external_wall_s is None:
        return False
    denied = _denied_rounds(verdict, saving_ratio)
    if denied:
        _degrade(verdict, "harness_timer_mismatch", denied)
    return not denied


def _outside_the_clock(t: Timing) -> list[float]:
    """Each measured round's time outside the harness's clock: its external wall time less its
    harness time (start-up, input, output). Per round, a busy machine cancels out of the timed
    part: a run that shared its core waited inside the clock and outside it alike. A clock that
    runs slow (a patched timer) leaves the work it does not count here, in that round."""
    walls, harness = t.external_walls_s, t.samples_s
    if walls and len(walls) == len(harness):
        return [w - h for w, h in zip(walls, harness, strict=True)]
    assert t.external_wall_s is not None and t.estimate_s is not None
    return [t.external_wall_s - t.estimate_s] * max(1, len(harness))


class Round(NamedTuple):
    """One candidate round's claim and what each witness shows of it (seconds)."""

    at: int  # the round's place in the candidate's rounds
    harness: float  # the round's harness time
    claim: float  # the baseline's fastest round less this round's harness time
    on_wall: float  # the claim less this round's time outside the clock over the least of own
    over_own: float  # this round's time outside the clock over the median of the task's own
    on_cpu: float | None  # the baseline's least CPU less this round's (one core only)
    cpu_claim: float  # the claim with each side's harness time at its busy share


def witness_rounds(verdict: Verdict) -> tuple[list[Round], float]:
    """Every candidate round's claim and witnesses, and the claim's gate (claims at or under
    it are within the baseline's noise and are not weighed). Needs a harness-clocked, ok
    candidate and baseline with external wall times (`crosscheck_harness` checks)."""
    b, c = verdict.baseline, verdict.candidate
    assert b is not None and c is not None and c.estimate_s is not None
    assert b.estimate_s is not None
    own = [u for t in (b, verdict.reference) if t is not None and t.ok
           and t.clock == "harness" and t.estimate_s is not None
           and t.external_wall_s is not None for u in _outside_the_clock(t)]  # fmt: skip
    # The least of the task's own solutions' rounds: the one that waited least for its core.
    own_least, own_median = min(own), statistics.median(own)
    base_s = min(b.samples_s) if b.samples_s else b.estimate_s
    gate = max(_SLACK_S, 0.05 * b.estimate_s)
    cpus = c.external_cpus_s if _cpu_witness(b, c) else []
    harness = c.samples_s or [c.estimate_s]
    base_busy = _busy_share(b, b.samples_s.index(base_s)) if b.samples_s else 1.0
    rounds: list[Round] = []
    for i, (h, outside) in enumerate(zip(harness, _outside_the_clock(c), strict=False)):
        on_cpu = min(b.external_cpus_s) - cpus[i] if len(cpus) == len(harness) else None
        cpu_claim = base_s * base_busy - h * _busy_share(c, i)
        claim = base_s - h
        rounds.append(Round(i, h, claim, claim - (outside - own_least), outside - own_median,
                            on_cpu, cpu_claim))  # fmt: skip
    return rounds, gate


def _denied_rounds(verdict: Verdict, saving_ratio: float) -> str:
    """Why the candidate's claimed saving is denied ('' if it is not).

    Round by round, as the candidate's estimate is made of its rounds: the round's claim is the
    baseline's fastest round less the round's harness time (a busy machine only ever adds to
    a run's times). Two witnesses can confirm it: the wall time (the claim less the round's
    time outside the clock beyond the least of the task's own solutions' rounds) and, on one
    core, the CPU time (the baseline's least round less this round's, against the claim taken
    at each run's busy share, `_busy_share`). A round is denied when neither shows
    `saving_ratio` of its claim; the verdict when most of the rounds its
    estimate rests on (those at or under it) are. Judged on minima taken separately, a
    candidate that slowed its clock a little in one round (which then held the least time
    outside the clock) and 20x in the others (which held the least harness time and the
    median) was paid as the honest reference in 7 of 20 verdicts (helper-51). A round whose CPU
    claim is within the gate claims nothing once each run's waiting is taken out: its wall claim
    is the baseline's wait for its core, there is nothing to deny (a copy of the baseline beside
    two busy loops was flagged in 1 of 15 verdicts, CI), and `paid_saving.pay_confirmed` pays
    it only what the wall time confirms."""
    c = verdict.candidate
    assert c is not None and c.estimate_s is not None
    every, gate = witness_rounds(verdict)
    rounds = [r for r in every if r.harness <= c.estimate_s]  # the rounds the estimate rests on
    denied = [
        r for r in rounds
        if r.claim > gate and r.on_wall < saving_ratio * r.claim
        and (r.on_cpu is None or (r.cpu_claim > gate and r.on_cpu < saving_ratio * r.cpu_claim))
    ]  # fmt: skip
    if not rounds or 2 * len(denied) <= len(rounds):
        return ""
    cpus_denied = [r.on_cpu for r in denied if r.on_cpu is not None]
    return (
        f"harness claims {statistics.median(r.claim for r in denied) * 1e3:.1f} ms saved vs the "
        f"baseline in {len(denied)} of the {len(rounds)} rounds its time rests on; there the "
        f"external wall time shows {statistics.median(r.on_wall for r in denied) * 1e3:.1f} ms"
        + (f", the CPU time {statistics.median(cpus_denied) * 1e3:.1f} ms" if cpus_denied else "")
        + " (medians)"
    )


def _busy_share(t: Timing, i: int) -> float:
    """The share of round `i`'s wall time its run spent on CPU (1 where unknown, at most 1).

    The claim is in harness (wall) time; on a busy machine a run's wall time grows with the
    waiting for its core while its CPU time does not, and an honest 1.3x whose baseline waited
    3x claimed three times its CPU saving: flagged in 6 of 10 verdicts with 5 busy loops
    (helper-52). Each side's harness time is taken at its run's own share before the CPU
    witness compares: a run cannot raise its share over 1 on its one core, and lowering its
    own (sleeping outside the clock) only grows the claim it must show."""
    walls, cpus = t.external_walls_s, t.external_cpus_s
    if len(walls) != len(cpus) or i >= len(walls) or walls[i] <= 0:
        return 1.0
    return min(1.0, cpus[i] / walls[i])


def _cpu_witness(b: Timing, c: Timing) -> bool:
    """Whether CPU time witnesses a saving: the second witness. A clock that runs slow does not
    make the work it hides cost less CPU, whatever the machine's load; a run that waited, for
    its core or by sleeping, spent no CPU on it. So an honest saving that a slow start-up hid
    from the wall clock shows here, and one made of less sleeping shows on the wall. Only where
    both ask for one core: on several, a baseline's threads spend CPU beyond its wall time,
    and a single-threaded cheat would show a CPU saving it never made on the wall."""
    return (b.cores_wanted == 1 and c.cores_wanted == 1 and bool(b.external_cpus_s)
            and bool(c.external_cpus_s))  # fmt: skip


#: A candidate's untimed time (its run's external wall time less its harness time) is work
#: escaping the clock when it exceeds the most of the baseline's and the reference's by this
#: factor plus this slack: generous, as process start-up varies under load.
UNTIMED_FACTOR, UNTIMED_SLACK_S = 3.0, 0.05


def _untimed_work(verdict: Verdict, untimed_c: float) -> str:
    """Why the candidate's untimed time is far over its task's own solutions' ('' if not)."""
    own = [t.external_wall_s - t.estimate_s for t in (verdict.baseline, verdict.reference)
           if t is not None and t.ok and t.estimate_s is not None
           and t.external_wall_s is not None]  # fmt: skip
    if not own or untimed_c <= UNTIMED_FACTOR * max(own) + UNTIMED_SLACK_S:
        return ""
    return (
        f"{untimed_c * 1e3:.1f} ms of the run is outside the harness's clock, the task's own "
        f"solutions' at most {max(own) * 1e3:.1f} ms: work moved out of the timed region"
    )


def _degrade(verdict: Verdict, flag: str, why: str) -> None:
    verdict.flags.append(flag)
    assert verdict.candidate is not None
    verdict.candidate.status = TimingStatus.DEGRADED
    verdict.candidate.status_reason = why
