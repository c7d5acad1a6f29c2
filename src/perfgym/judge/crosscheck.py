"""Cross-checking a harness's self-reported time against the sandbox's external measurement."""

from __future__ import annotations

import statistics

from perfgym.judge.verdict import TimingStatus, Verdict

#: External wall time can never be shorter than the harness's own timed region; allow jitter.
_SLACK_S = 0.005


def crosscheck_harness(verdict: Verdict, saving_ratio: float) -> None:
    """Flag (and degrade) a candidate whose harness-claimed speed-up the external clock denies.

    A program can monkeypatch the timer its harness uses; it cannot hide from the sandbox's
    clock. Rule: the harness-claimed saving against the baseline (Tb - Tc by elapsed_ns) must
    show at least `saving_ratio` of itself in the external wall time saving; and no harness
    time may exceed the external wall time of the same run.
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
    if b is None or not b.ok or b.estimate_s is None:
        return
    ext_b = b.external_wall_s
    if ext_c is None or ext_b is None:
        return
    claimed = b.estimate_s - c.estimate_s
    external = _external_saving(ext_b, ext_c, b.external_walls_s, c.external_walls_s)
    if claimed > max(_SLACK_S, 0.05 * b.estimate_s) and external < saving_ratio * claimed:
        _degrade(
            verdict,
            "harness_timer_mismatch",
            f"harness claims {claimed * 1e3:.1f} ms saved vs the baseline, the external clock "
            f"shows {external * 1e3:.1f} ms",
        )


def _external_saving(
    ext_b: float, ext_c: float, walls_b: list[float], walls_c: list[float]
) -> float:
    """The baseline's external wall time less the candidate's: the median of the per-round
    differences when both were measured in the same interleaved rounds (a load spike then hits
    both sides of a pair, instead of one side's median), else the difference of the medians."""
    if walls_b and len(walls_b) == len(walls_c):
        return statistics.median(b - c for b, c in zip(walls_b, walls_c, strict=True))
    return ext_b - ext_c


def _degrade(verdict: Verdict, flag: str, why: str) -> None:
    verdict.flags.append(flag)
    assert verdict.candidate is not None
    verdict.candidate.status = TimingStatus.DEGRADED
    verdict.candidate.status_reason = why
