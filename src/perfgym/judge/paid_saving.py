"""Paying a harness's claimed saving only as far as the sandbox's clocks confirm it."""

from __future__ import annotations

from typing import cast

from perfgym.judge.crosscheck import Round, witness_rounds
from perfgym.judge.verdict import Verdict
from perfgym.timing.summary import Estimator, cv, estimate, estimate_ci

#: Set on a verdict whose candidate's harness time was raised to what the witnesses confirm.
UNCONFIRMED_FLAG = "harness_saving_unconfirmed"


def confirmed_saving(r: Round) -> float:
    """What the sandbox's clocks confirm of a round's claimed saving (0 to the claim).

    The wall witness: the claim less the round's time outside the harness's clock beyond the
    most of the task's own solutions' rounds (work a slowed clock did not count lands there;
    an honest round's start-up stays within its own solutions' spread, so it is paid in full).
    The CPU witness (one core only): the claim at the share of the CPU claim the CPU time
    shows. The larger is paid: each is a lower bound on the work the round really saved."""
    on_wall = r.claim - max(0.0, r.over_most)
    on_cpu = r.claim * r.on_cpu / r.cpu_claim if r.on_cpu is not None and r.cpu_claim > 0 else 0.0
    return max(0.0, min(r.claim, max(on_wall, on_cpu)))


def pay_confirmed(verdict: Verdict, ci_level: float) -> None:
    """Raise each of the candidate's harness rounds to the baseline's fastest round less the
    saving the witnesses confirm (`confirmed_saving`), then its estimate, CI and per-workload
    times with them. A clock slowed to claim twice its real saving passed the cross-check (each
    witness needs only `harness_saving_ratio` of a claim) and was paid the reference's reward
    in 10 of 10 verdicts (helper-52); paid what it saved, it scores as the same program with
    an honest clock. Claims at or under the check's gate (5 % of the baseline) are kept as
    measured. Call only on a candidate the cross-check let through."""
    c = verdict.candidate
    assert c is not None and c.estimate_s is not None
    rounds, gate = witness_rounds(verdict)
    if len(rounds) != len(c.samples_s):
        return  # a timing without rounds (a single estimate): nothing to pay per round
    paid = list(c.samples_s)
    for r in rounds:
        short = r.claim - confirmed_saving(r)  # what the witnesses do not show of the claim
        if r.claim > gate and short > 1e-9:
            paid[r.at] = r.harness + short
    if paid == c.samples_s:
        return
    claimed, how = c.estimate_s, cast(Estimator, c.estimator)
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
    if c.estimate_s > claimed + gate:
        verdict.flags.append(UNCONFIRMED_FLAG)
        c.status_reason = (
            f"harness claimed {claimed * 1e3:.1f} ms; the sandbox's clocks confirm "
            f"{c.estimate_s * 1e3:.1f} ms (the saving they show is paid, not the claim)"
        )
