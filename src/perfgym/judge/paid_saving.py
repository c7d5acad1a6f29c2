"""Paying a harness's claimed saving only as far as the sandbox's clocks confirm it."""

from __future__ import annotations

import statistics
from typing import cast

from perfgym.judge.crosscheck import Round, witness_rounds
from perfgym.judge.twins import ROLE_TIMING
from perfgym.judge.verdict import Verdict
from perfgym.timing.summary import Estimator, cv, estimate, estimate_ci

#: Set on a verdict whose candidate's harness time was raised, by over `FLAG_RISE`, to what the
#: witnesses confirm.
UNCONFIRMED_FLAG = "harness_saving_unconfirmed"

#: The rise, as a share of the baseline's estimate, over which a paid verdict is also flagged.
#: Honest programs are raised too, by what their witnesses' noise leaves unconfirmed: over the
#: check's 5 % gate in 41 of 276 honest verdicts (a copy of the reference among them, flagged in
#: CI), 0.25 at most, none over 0.3; a clock hiding a third or half of its work rose over 0.3 in
#: 60 of 80 (helper-53's programs on py_range_sums, quiet and beside two busy loops).
FLAG_RISE = 0.3


def confirmed_saving(r: Round, gate: float) -> float:
    """What the sandbox's clocks confirm of a round's claimed saving (0 to the claim).

    The wall witness: the claim less the round's time outside the harness's clock beyond the
    median of the task's own solutions' rounds (work a slowed clock did not count lands
    there). Their most let a clock hide as much as one slow start-up of the baseline's: a
    third of the work hidden was paid at 0.14-0.45x the same program's honest time in 4 of 25
    verdicts. The CPU witness (one core only): the claim at the share of the CPU claim the CPU
    time shows; none where the CPU claim is within the check's `gate` (the claim is the
    baseline's waiting, and a CPU time a millisecond under the baseline's, over a CPU claim of a
    fraction of one, confirmed the whole claim). The larger is paid: each is a lower bound on
    the work the round really saved.
    """
    cpu_ok = r.on_cpu is not None and r.cpu_claim > gate
    # Where the CPU claim is within the gate, the cross-check let the round through on that
    # alone; its wall time is then held to the strict test (beyond the least of the task's own).
    strict = r.on_cpu is not None and not cpu_ok
    on_wall = r.on_wall if strict else r.claim - max(0.0, r.over_own)
    on_cpu = r.claim * r.on_cpu / r.cpu_claim if cpu_ok and r.on_cpu is not None else 0.0
    return max(0.0, min(r.claim, max(on_wall, on_cpu)))


def pay_confirmed(verdict: Verdict, ci_level: float) -> None:
    """Add to each of the candidate's harness rounds the saving the witnesses do not confirm
    (`confirmed_saving`), the median over its rounds, then recompute its estimate, CI and
    per-workload times. A clock slowed to claim twice its real saving passed the cross-check
    (each witness needs only `harness_saving_ratio` of a claim) and was paid the reference's
    reward in 10 of 10 verdicts (helper-52); paid what it saved, it scores as the same program
    with an honest clock. One shift for every round, not each round its own: under load an
    honest round often spends longer outside the clock than any of its task's own, and raising
    that round alone widened the rounds' spread until a program 10-25x faster than its
    baseline tied with it in the paired test (0.15 in 16 of 96 busy verdicts, helper-53); a
    hidden cost is in every round, a wait for the core in some. Claims at or under the check's
    gate (5 % of the baseline) count as confirmed. Claims are taken against the baseline's
    estimate, not its fastest round: a claim nothing confirms then pays the baseline's time,
    not its luckiest round's (work moved to import time was paid over 1.05x its honest twin
    in 99 of 235 verdicts that way; 61 against the estimate: helper-69). A candidate that is
    the baseline's or the reference's own program holds that role's measurement
    (`twins.ROLE_TIMING`) and is paid as the role is: unshifted (shifted, a copy of the
    reference scored below the reference). A rise over `FLAG_RISE` of the baseline's time is
    flagged (informative: the candidate is paid, not floored); a smaller one is noise as often
    as a hidden cost and only changes the reason. Call only on a candidate the cross-check let
    through."""
    c, b = verdict.candidate, verdict.baseline
    assert c is not None and c.estimate_s is not None
    assert b is not None and b.estimate_s is not None
    if ROLE_TIMING in c.flags:
        return
    rounds, gate = witness_rounds(verdict)
    if len(rounds) != len(c.samples_s):
        return  # a timing without rounds (a single estimate): nothing to pay per round
    # Claims against the baseline's estimate, not its fastest round: a claim nothing confirms
    # is then paid as the baseline is, not as its luckiest round.
    lift = max(0.0, b.estimate_s - min(b.samples_s)) if b.samples_s else 0.0
    rounds = [r._replace(claim=r.claim + lift, on_wall=r.on_wall + lift) for r in rounds]
    short = statistics.median(
        r.claim - confirmed_saving(r, gate) if r.claim > gate else 0.0 for r in rounds
    )  # what the witnesses do not show of the claims, in the middle round
    if short <= 1e-9:
        return
    claimed, how = c.estimate_s, cast(Estimator, c.estimator)
    paid = [h + short for h in c.samples_s]
    for wid, samples in c.per_workload_samples_s.items():
        if len(samples) == len(paid):  # each workload's round grows with its round's total
            c.per_workload_samples_s[wid] = [
                s * (p / h if h > 0 else 1.0)
                for s, p, h in zip(samples, paid, c.samples_s, strict=True)
            ]
            c.per_workload_s[wid] = estimate(c.per_workload_samples_s[wid], how)
    c.samples_s = paid
    c.estimate_s = estimate(paid, how)
    c.cv = cv(paid)
    c.ci_s = estimate_ci(paid, how, ci_level)
    c.status_reason = (
        f"harness claimed {claimed * 1e3:.1f} ms; the sandbox's clocks confirm "
        f"{c.estimate_s * 1e3:.1f} ms (the saving they show is paid, not the claim)"
    )
    if c.estimate_s > claimed + FLAG_RISE * b.estimate_s:
        verdict.flags.append(UNCONFIRMED_FLAG)
