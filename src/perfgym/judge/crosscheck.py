"""Cross-checking a harness's self-reported time against the sandbox's external measurement."""

from __future__ import annotations

from perfgym.judge.verdict import Timing, TimingStatus, Verdict

#: External wall time can never be shorter than the harness's own timed region; allow jitter.
_SLACK_S = 0.005


def crosscheck_harness(verdict: Verdict, saving_ratio: float) -> None:
    """Flag (and degrade) a candidate whose harness-claimed speed-up the external clock denies.

    A program can monkeypatch the timer its harness uses; it cannot hide from the sandbox's
    clock. Rule: the harness-claimed saving against the baseline (Tb - Tc by elapsed_ns) must
    show at least `saving_ratio` of itself in the external wall time (compared per round, so
    a busy machine cancels out: `_outside_the_clock`) or in the runs' CPU time (`_cpu_saving`):
    the verdict is flagged only when both deny it; no harness time may exceed the external
    wall time of the same run; and the run's time outside the harness's clock may not be far
    over the baseline's and the reference's (`_untimed_work`: work moved into start-up,
    static initialisers or imports).
    """
    c, b = verdict.candidate, verdict.baseline
    if c is not None and c.clock != "harness":
        return  # the harness's times were not used (harness_below_resolution): nothing to check
    # Any estimate of an ok timing is checked (not only `usable_s` ones): a zero claim is a claim.
    if c is None or not c.ok or c.estimate_s is None:
        return
    ext_c = c.external_wall_s
    if ext_c is not None and c.estimate_s > ext_c + _SLACK_S:
        _degrade(
            verdict, "harness_time_exceeds_wall", "the harness claims more time than the run took"
        )
        return
    if ext_c is not None and (why := _untimed_work(verdict, ext_c - c.estimate_s)):
        _degrade(verdict, "harness_untimed_work", why)
        return
    if b is None or not b.ok or b.estimate_s is None:
        return
    if ext_c is None or b.external_wall_s is None:
        return
    # The fastest round of each side: a busy machine only ever adds to a run's times.
    claimed = min(b.samples_s or [b.estimate_s]) - min(c.samples_s or [c.estimate_s])
    if claimed <= max(_SLACK_S, 0.05 * b.estimate_s):
        return
    own = [t for t in (b, verdict.reference) if t is not None and t.ok and t.clock == "harness"
           and t.estimate_s is not None and t.external_wall_s is not None]  # fmt: skip
    # The task's own solutions' least: more rounds, fewer of which all waited for a core.
    unclaimed = _outside_the_clock(c) - min(_outside_the_clock(t) for t in own)
    on_wall = claimed - unclaimed
    on_cpu = _cpu_saving(b, c)
    if on_wall >= saving_ratio * claimed or (
        on_cpu is not None and on_cpu >= saving_ratio * claimed
    ):
        return
    cpu = "" if on_cpu is None else f", CPU time {on_cpu * 1e3:.1f} ms"
    _degrade(
        verdict,
        "harness_timer_mismatch",
        f"harness claims {claimed * 1e3:.1f} ms saved vs the baseline, the external wall time "
        f"shows {on_wall * 1e3:.1f} ms (the candidate's runs spent {unclaimed * 1e3:.1f} ms "
        f"more outside the harness's clock){cpu}",
    )


def _outside_the_clock(t: Timing) -> float:
    """The least time one measured round spent outside the harness's clock (the round's
    external wall time less its harness time: start-up, input, output).

    Per round, so a busy machine cancels out of the timed part: a run that shared its core
    waited inside the harness's clock and outside it alike, and only the waiting outside
    remains; the fastest round is the one that waited least. A candidate whose clock runs slow
    (a patched timer) does work the harness does not count, in every round: that work is here.
    The saving the external clock shows is the claim less the candidate's excess of this over
    the baseline's (wall times compared across runs instead let a baseline that waited for its
    core make a half-speed clock's claim look real, and a candidate that waited have an honest
    saving flagged: both seen in CI on a busy 2-core machine)."""
    walls, harness = t.external_walls_s, t.samples_s
    if walls and len(walls) == len(harness):
        return min(w - h for w, h in zip(walls, harness, strict=True))
    assert t.external_wall_s is not None and t.estimate_s is not None
    return t.external_wall_s - t.estimate_s


def _cpu_saving(b: Timing, c: Timing) -> float | None:
    """The baseline's least CPU time in a round less the candidate's (None where either side's
    CPU was not read): the second witness. A clock that runs slow does not make the work it
    hides cost less CPU, whatever the machine's load; a run that waited, for its core or by
    sleeping, spent no CPU on it. So an honest saving that a slow start-up in the candidate's
    runs hid from the wall clock shows here, and one made of less sleeping shows on the wall.
    Only where both ask for one core: on several, a baseline's threads spend CPU beyond its
    wall time, and a single-threaded cheat would show a CPU saving it never made on the wall."""
    if b.cores_wanted != 1 or c.cores_wanted != 1:
        return None
    if not b.external_cpus_s or not c.external_cpus_s:
        return None
    return min(b.external_cpus_s) - min(c.external_cpus_s)


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
