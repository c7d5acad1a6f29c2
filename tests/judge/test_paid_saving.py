"""Paying a harness's claimed saving only as far as the sandbox's wall and CPU clocks confirm it:
a clock slowed to claim up to twice its real saving passes the cross-check, and must then be
paid what it really saved, no more than the same program with an honest clock."""

import pytest

from perfgym.judge.crosscheck import crosscheck_harness
from perfgym.judge.paid_saving import UNCONFIRMED_FLAG, pay_confirmed
from perfgym.judge.twins import role_timing
from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.rewards import get_reward

_OUTSIDE = 0.050  # start-up, input and output: each run's time outside the harness's clock


def _timing(harness: list[float], outside: list[float], cpu_share: float = 1.0,
            workloads: int = 1) -> Timing:  # fmt: skip
    walls = [h + o for h, o in zip(harness, outside, strict=True)]
    per = {f"w{k}": [h / workloads for h in harness] for k in range(workloads)}
    return Timing(estimate_s=sorted(harness)[len(harness) // 2], samples_s=harness,
                  clock="harness", external_wall_s=sorted(walls)[len(walls) // 2],
                  external_walls_s=walls, external_cpus_s=[w * cpu_share for w in walls],
                  per_workload_samples_s=per,
                  per_workload_s={k: sorted(v)[len(v) // 2] for k, v in per.items()})  # fmt: skip


def _verdict(candidate: Timing, spread_s: float = 0.0) -> Verdict:
    """Beside a 100 ms baseline and a 20 ms reference whose times outside the harness's clock
    lie within `spread_s` of each other."""
    baseline = _timing([0.100, 0.102, 0.101], [_OUTSIDE, _OUTSIDE + spread_s, _OUTSIDE])
    reference = _timing([0.020, 0.021, 0.020], [_OUTSIDE, _OUTSIDE + spread_s / 2, _OUTSIDE])
    return Verdict(task_id="t", stage=Stage.OK, language="python", candidate=candidate,
                   baseline=baseline, reference=reference)  # fmt: skip


def _judged(candidate: Timing, spread_s: float = 0.0) -> Verdict:
    """The verdict as the judge leaves it: checked, then paid when let through."""
    v = _verdict(candidate, spread_s)
    if crosscheck_harness(v, 0.5):
        pay_confirmed(v, 0.95)
    return v


def _honest(work_s: float) -> Timing:
    return _timing([work_s, work_s + 0.001, work_s], [_OUTSIDE] * 3)


def _hiding(work_s: float, hidden_s: float, workloads: int = 1) -> Timing:
    """The same work, with `hidden_s` of it kept off the harness's clock: it runs outside it."""
    harness = [work_s - hidden_s, work_s - hidden_s + 0.001, work_s - hidden_s]
    outside = [_OUTSIDE + hidden_s] * 3
    return _timing(harness, outside, workloads=workloads)


def test_a_clock_claiming_twice_its_saving_passes_the_check_but_is_paid_its_real_saving():
    # Real work 50 ms (a 50 ms saving); the clock hides 40 ms: it claims a 90 ms saving, of
    # which both witnesses show 50 ms, over the check's half. Paid, it is the 50 ms it ran.
    v = _judged(_hiding(0.050, 0.040))
    c = v.candidate
    assert "harness_timer_mismatch" not in v.flags and c is not None and c.ok
    assert UNCONFIRMED_FLAG in v.flags
    assert c.estimate_s == pytest.approx(0.050)
    assert "confirm" in c.status_reason


def test_a_rise_under_a_third_of_the_baseline_is_paid_but_not_flagged():
    # 25 ms hidden of a 100 ms baseline: paid all the same, flagged only over 30 ms (honest
    # programs' witness noise rose over the 5 ms gate in 41 of 276 verdicts, over 30 in none).
    v = _judged(_hiding(0.050, 0.025))
    c = v.candidate
    assert c is not None and c.estimate_s == pytest.approx(0.050)
    assert UNCONFIRMED_FLAG not in v.flags and "confirm" in c.status_reason


def test_one_slow_start_up_of_the_tasks_own_lends_a_slowed_clock_nothing():
    # The baseline's second run spent 60 ms outside the clock, the others 50: measured against
    # the most, a clock could hide 10 ms in every round; against the median, nothing.
    c = _judged(_hiding(0.050, 0.040), spread_s=0.010).candidate
    assert c is not None and c.estimate_s == pytest.approx(0.050)


def test_a_cheaper_clock_scores_no_higher_than_the_same_program_with_an_honest_clock():
    rlpf, log = get_reward("rlpf"), get_reward("log")
    honest, cheat = _judged(_honest(0.050)), _judged(_hiding(0.050, 0.040))
    unpaid = _verdict(_hiding(0.050, 0.040))
    assert crosscheck_harness(unpaid, 0.5)  # the premise: the check alone lets it through
    for reward in (rlpf, log):
        h, c, u = (reward.score([x])[0].value for x in (honest, cheat, unpaid))
        assert c <= h + 1e-9 < u  # paid the claim, it beat honest; paid the saving, it does not


def test_an_honest_start_up_slower_than_its_tasks_own_in_one_round_is_not_charged():
    # 56 ms outside the clock in one round of three (the task's own: 50-58 ms): the middle
    # round's shortfall, 0, is what is charged.
    c = _timing([0.040, 0.041, 0.040], [0.056, 0.050, 0.050])
    v = _judged(c, spread_s=0.008)
    assert v.flags == [] and v.candidate is not None
    assert v.candidate.samples_s == [0.040, 0.041, 0.040]


def test_an_honest_saving_whose_runs_shared_their_core_is_confirmed_on_cpu():
    # 40 ms of work (a 60 ms saving) run at half a core: 80 ms on the harness's clock, 100 ms
    # outside it; the wall shows nothing of its claim, its CPU time (90 ms) all of it.
    c = _timing([0.080, 0.080, 0.080], [0.100] * 3, cpu_share=0.5)
    v = _judged(c)
    assert v.flags == [] and v.candidate is not None
    assert v.candidate.samples_s == [0.080, 0.080, 0.080]


def test_paid_rounds_carry_their_workloads_and_ci_with_them():
    v = _judged(_hiding(0.050, 0.040, workloads=2))
    c = v.candidate
    assert c is not None and c.ci_s is not None
    for r, total in enumerate(c.samples_s):
        assert sum(s[r] for s in c.per_workload_samples_s.values()) == pytest.approx(total)
    assert sum(c.per_workload_s.values()) == pytest.approx(c.estimate_s, rel=0.05)
    assert c.ci_s[0] <= c.estimate_s <= c.ci_s[1]


def test_a_denied_claim_is_flagged_not_paid():
    v = _verdict(_hiding(0.100, 0.090))  # no real saving: a clock at a tenth
    assert not crosscheck_harness(v, 0.5)
    assert v.flags == ["harness_timer_mismatch"] and v.candidate is not None
    assert not v.candidate.ok


def test_a_claim_within_the_baselines_noise_is_kept_as_measured():
    c = _hiding(0.098, 0.003)  # claims a 5 ms saving (under the 5 % gate)
    v = _judged(c)
    assert v.candidate is not None and v.candidate.samples_s == c.samples_s


def test_one_round_that_waited_outside_the_clock_leaves_every_round_as_measured():
    # A program ~20x faster than its baseline whose third round waited 40 ms for its core
    # outside the clock (no CPU witness here). Raised alone, that round widened the rounds'
    # spread until the paired test called the program a tie with its baseline (helper-53).
    c = _timing([0.005, 0.003, 0.006], [_OUTSIDE, _OUTSIDE, _OUTSIDE + 0.040])
    c.external_cpus_s = []
    v = _judged(c)
    assert v.flags == [] and v.candidate is not None
    assert v.candidate.samples_s == [0.005, 0.003, 0.006]


def test_a_cost_hidden_in_every_round_shifts_every_round_alike():
    c = _hiding(0.050, 0.040)
    before = list(c.samples_s)
    after = _judged(c).candidate
    assert after is not None
    shifts = [a - b for a, b in zip(after.samples_s, before, strict=True)]
    assert max(shifts) - min(shifts) < 1e-12 and shifts[0] == pytest.approx(0.040)


def test_the_references_own_program_is_paid_as_the_reference_is():
    # The reference's rounds, one of them slow to start (over the median of the task's own):
    # a candidate that is the reference's program holds its measurement and is not shifted.
    v = _verdict(_honest(0.020))
    assert v.reference is not None
    v.reference.external_walls_s = [0.070, 0.130, 0.130]  # 50, ~110, 110 ms outside the clock
    v.candidate = role_timing(v.reference)
    assert crosscheck_harness(v, 0.5)
    pay_confirmed(v, 0.95)
    assert v.candidate.samples_s == v.reference.samples_s and UNCONFIRMED_FLAG not in v.flags


def test_work_moved_to_import_time_scores_no_higher_than_its_honest_twin():
    # The baseline's 100 ms of work, 5 ms of it done at import (outside the clock), beside a
    # baseline whose rounds spread 100-130 ms. Its claim against the baseline's fastest round
    # (5 ms) is within the check's gate and was paid: 1.26x the baseline's estimate, where the
    # same program with nothing moved is paid 1.2x (helper-69: 8-30 % of the work moved to
    # import was paid over 1.05x its honest twin in 99 of 235 verdicts).
    ms = 1e-3

    def judged(harness: list[float], outside_s: float) -> float:
        v = Verdict(task_id="t", stage=Stage.OK, language="python",
                    candidate=_timing(harness, [outside_s] * 3),
                    baseline=_timing([100 * ms, 130 * ms, 120 * ms], [_OUTSIDE] * 3),
                    reference=_timing([20 * ms, 21 * ms, 20 * ms], [_OUTSIDE] * 3))  # fmt: skip
        assert crosscheck_harness(v, 0.5) and not v.flags
        pay_confirmed(v, 0.95)
        assert v.candidate is not None and v.baseline is not None
        return v.baseline.estimate_s / v.candidate.estimate_s

    honest = judged([100 * ms, 101 * ms, 100 * ms], _OUTSIDE)
    moved = judged([95 * ms, 96 * ms, 95 * ms], _OUTSIDE + 5 * ms)
    assert moved <= honest * 1.001, (moved, honest)
