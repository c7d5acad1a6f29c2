"""Cross-checking a harness's self-reported time against the sandbox's external measurement."""

from __future__ import annotations

import statistics

from perfgym.judge.verdict import Timing, TimingStatus, Verdict

#: External wall time can never be shorter than the harness's own timed region; allow jitter.
_SLACK_S = 0.005


def crosscheck_harness(verdict: Verdict, saving_ratio: float) -> None:
    """Flag (and degrade) a candidate whose harness-claimed speed-up the external clock denies.

    A program can monkeypatch the timer its harness uses; it cannot hide from the sandbox's
    clock. Rule: the harness-claimed saving against the baseline (Tb - Tc by elapsed_ns) must
    show at least `saving_ratio` of itself in the external saving (CPU time where the task's
    baseline keeps its one core busy, `_on_cpu`; else wall time); no harness time
    may exceed the external wall time of the same run; and the run's time outside the
    harness's clock may not be far over the baseline's and the reference's (`_untimed_work`:
    work moved into start-up, static initialisers or imports).
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
    ext_b = b.external_wall_s
    if ext_c is None or ext_b is None:
        return
    if _on_cpu(b, c):
        # Each run's fastest round: a loaded machine only ever adds to a harness's wall time
        # (and to the baseline's more often than not would inflate the claim past the work).
        claimed = min(b.samples_s or [b.estimate_s]) - min(c.samples_s or [c.estimate_s])
        external = _paired_saving(b.external_cpus_s, c.external_cpus_s)
        clock = "CPU"
    else:
        claimed = b.estimate_s - c.estimate_s
        external = _external_saving(ext_b, ext_c, b.external_walls_s, c.external_walls_s)
        clock = "wall"
    if claimed > max(_SLACK_S, 0.05 * b.estimate_s) and external < saving_ratio * claimed:
        _degrade(
            verdict,
            "harness_timer_mismatch",
            f"harness claims {claimed * 1e3:.1f} ms saved vs the baseline, the external "
            f"{clock} time shows {external * 1e3:.1f} ms",
        )


#: A baseline whose fastest run's wall time is over this many times its CPU time (plus the
#: slack) waits (sleeps, I/O): its savings are judged on wall time, where waiting shows.
WAITS_FACTOR, WAITS_SLACK_S = 3.0, 0.05


def _on_cpu(b: Timing, c: Timing) -> bool:
    """Whether the claimed saving is checked against CPU time rather than wall time.

    Each measured run holds its one core alone (timing mode), so a run's wall time is its CPU
    time plus whatever it waited for: a core shared with another process, or sleep and I/O.
    Wall time across runs cannot tell the two apart: with another process on the machine, the
    run that shared its core looks slower, and a clock-patching candidate whose baseline ran
    beside the other process showed the saving it claimed (CI). CPU time does not grow while
    a run waits, so it is the external figure where the task's own baseline is busy on its
    core (it does not sleep or wait on I/O) and the task asks for one core (with more, an
    honest candidate's threads spend CPU beyond the wall they save). The choice depends only
    on the task and its baseline, never on the candidate's runs."""
    if b.cores_wanted != 1 or c.cores_wanted != 1:
        return False
    if not b.external_cpus_s or not c.external_cpus_s or not b.external_walls_s:
        return False
    return min(b.external_walls_s) <= WAITS_FACTOR * min(b.external_cpus_s) + WAITS_SLACK_S


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


def _external_saving(
    ext_b: float, ext_c: float, walls_b: list[float], walls_c: list[float]
) -> float:
    """The baseline's external wall time less the candidate's: the median of the per-round
    differences when both were measured in the same interleaved rounds (a load spike then hits
    both sides of a pair, instead of one side's median), else the difference of the medians."""
    if walls_b and len(walls_b) == len(walls_c):
        return _paired_saving(walls_b, walls_c)
    return ext_b - ext_c


def _paired_saving(base: list[float], cand: list[float]) -> float:
    """The median of the per-round differences (rounds paired), else of the medians."""
    if len(base) == len(cand):
        return statistics.median(b - c for b, c in zip(base, cand, strict=True))
    return statistics.median(base) - statistics.median(cand)


def _degrade(verdict: Verdict, flag: str, why: str) -> None:
    verdict.flags.append(flag)
    assert verdict.candidate is not None
    verdict.candidate.status = TimingStatus.DEGRADED
    verdict.candidate.status_reason = why
