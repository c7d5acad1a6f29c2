"""The harness cross-check: the saving the external wall clock shows, judged per round (each
round's time outside the harness's clock), so a busy machine cancels out of both sides."""

from perfgym.judge.crosscheck import crosscheck_harness
from perfgym.judge.verdict import Stage, Timing, Verdict


def _verdict(cand_walls: list[float], base_walls: list[float]) -> Verdict:
    def timing(harness_s: float, walls: list[float]) -> Timing:
        ordered = sorted(walls)
        return Timing(estimate_s=harness_s, samples_s=[harness_s] * len(walls), clock="harness",
                      external_wall_s=ordered[len(ordered) // 2], external_walls_s=walls)  # fmt: skip

    return Verdict(task_id="t", stage=Stage.OK, language="python",
                   candidate=timing(0.000001, cand_walls), baseline=timing(0.100, base_walls))  # fmt: skip


def test_a_load_spike_in_some_rounds_cannot_fake_an_external_saving():
    # Rounds 1-3 hit the candidate's and the baseline's runs alike (slow machine), but the
    # baseline's medians land on slow rounds and the candidate's on fast ones.
    cand = [0.150, 0.151, 0.400, 0.152, 0.401]
    base = [0.151, 0.152, 0.401, 0.400, 0.402]
    v = _verdict(cand, base)  # medians differ by 249 ms; paired, the saving is ~1 ms
    crosscheck_harness(v, 0.5)
    assert "harness_timer_mismatch" in v.flags


def test_a_real_external_saving_passes():
    v = _verdict([0.05, 0.051, 0.052], [0.15, 0.151, 0.152])
    crosscheck_harness(v, 0.5)
    assert v.flags == []


def _with_reference(cand: tuple[float, float], base: tuple[float, float],
                    ref: tuple[float, float]) -> Verdict:  # fmt: skip
    def timing(harness_s: float, wall_s: float) -> Timing:
        return Timing(estimate_s=harness_s, samples_s=[harness_s] * 3, clock="harness",
                      external_wall_s=wall_s, external_walls_s=[wall_s] * 3)  # fmt: skip

    return Verdict(task_id="t", stage=Stage.OK, language="python", candidate=timing(*cand),
                   baseline=timing(*base), reference=timing(*ref))  # fmt: skip


def test_work_moved_out_of_the_harness_clock_is_flagged():
    # (harness time, wall time): the baseline and the reference spend ~30 ms outside the
    # harness's clock; the candidate claims 1 ms of harness time in a 0.9 s run.
    v = _with_reference((0.001, 0.900), (0.800, 0.830), (0.100, 0.130))
    crosscheck_harness(v, 0.5)
    assert v.flags == ["harness_untimed_work"]
    assert v.candidate is not None and not v.candidate.ok


def test_an_honest_start_up_under_load_is_not_flagged():
    # The candidate's start-up took twice the reference's (a loaded machine): within margin.
    v = _with_reference((0.050, 0.110), (0.800, 0.830), (0.100, 0.130))
    crosscheck_harness(v, 0.5)
    assert v.flags == []


def _rounds_verdict(cand: tuple[list[float], ...], base: tuple[list[float], ...],
                    cores: int = 1) -> Verdict:  # fmt: skip
    """Each side: (harness seconds, wall seconds[, CPU seconds]) per round."""

    def timing(harness: list[float], walls: list[float], cpus: list[float] | None = None) -> Timing:  # fmt: skip
        mid = sorted(harness)[len(harness) // 2]
        return Timing(estimate_s=mid, samples_s=harness, clock="harness",
                      external_wall_s=sorted(walls)[len(walls) // 2], external_walls_s=walls,
                      external_cpus_s=cpus or [], cores_wanted=cores)  # fmt: skip

    return Verdict(task_id="t", stage=Stage.OK, language="python", candidate=timing(*cand),
                   baseline=timing(*base))  # fmt: skip


def _flagged(v: Verdict) -> bool:
    """Whether the candidate's timing was flagged and degraded (by any of the checks)."""
    crosscheck_harness(v, 0.5)
    assert v.candidate is not None and bool(v.flags) is not v.candidate.ok
    return bool(v.flags)


# The baseline's runs shared their core with another process in 2 of 3 rounds: its harness and
# wall time doubled there, its CPU time did not grow. A 0.1 s start-up outside the harness.
LOADED_BASE = ([0.20, 0.40, 0.40], [0.30, 0.60, 0.60], [0.30, 0.30, 0.30])


def test_a_half_speed_clock_is_flagged_though_the_baseline_ran_beside_another_process():
    # The same work as the baseline (0.2 s of CPU), its clock read at half speed. On wall time
    # across runs the paired saving (0.3 s) was over half the claim (0.3 s): passed (CI).
    v = _rounds_verdict(([0.10, 0.10, 0.10], [0.30, 0.30, 0.30], [0.30, 0.30, 0.30]), LOADED_BASE)  # fmt: skip
    assert _flagged(v) and v.flags == ["harness_timer_mismatch"], v.candidate.status_reason
    # Without the CPU figures the wall time alone, per round, denies it too.
    v = _rounds_verdict(([0.10, 0.10, 0.10], [0.30, 0.30, 0.30]), LOADED_BASE[:2])
    assert _flagged(v)


def _loaded(work_s: float, load: float) -> tuple[list[float], list[float], list[float]]:
    """3 rounds of `work_s` of harness time and a 0.1 s start-up, sharing their core `load`x."""
    return [work_s * load] * 3, [(0.1 + work_s) * load] * 3, [0.3] * 3


def test_a_clock_at_a_twentieth_is_flagged_whatever_the_load_on_either_side():
    # 0.2 s of work, reported as 0.01 s; the task's reference (0.05 s) measured in the same
    # interleaved rounds.
    cand = ([0.01] * 3, [0.3] * 3, [0.3] * 3)
    for base_load, cand_load in ((1, 1), (1, 2), (3, 3), (1.5, 1)):
        v = _rounds_verdict(([0.01 * cand_load] * 3, [0.3 * cand_load] * 3, [0.3] * 3),
                            _loaded(0.2, base_load))  # fmt: skip
        v.reference = _rounds_verdict(cand, _loaded(0.05, 1)).baseline
        assert _flagged(v), (base_load, cand_load)
    # Without the reference, where every one of the baseline's rounds waited for its core and
    # none of the candidate's, its waiting outside the clock hides the candidate's untimed
    # work, and inside the clock it grows the claim: CPU time denies the claim, wall time
    # per round does not.
    assert not _flagged(_rounds_verdict(cand, _loaded(0.2, 1.5)))


def test_a_clock_slowed_a_little_in_one_round_and_much_in_the_others_is_flagged():
    # The baseline's work in every round (0.2 s, 0.1 s start-up). In round 1 the clock runs at
    # 1/1.2 (little outside the clock: it held the least of that), in rounds 2-5 at 1/20 (the
    # least harness time and the median). Minima taken separately paired round 1's outside
    # time with round 2's claim: passed, and paid as the reference (helper-51).
    harness = [0.2 / 1.2] + [0.01] * 4
    walls = [0.3] * 5
    base = ([0.2] * 5, [0.3] * 5, [0.3] * 5)
    assert _flagged(_rounds_verdict((harness, walls, [0.3] * 5), base))
    assert _flagged(_rounds_verdict((harness, walls), base[:2]))


def test_a_round_that_started_slowly_is_outvoted_by_the_others():
    # A real 4x; one of the three rounds' start-up waited 0.1 s (its wall time denies), and its
    # CPU time read high too (both witnesses deny that round): the other two confirm.
    base = ([0.2] * 3, [0.3] * 3, [0.3] * 3)
    cand = ([0.05] * 3, [0.25, 0.15, 0.15], [0.25, 0.15, 0.15])
    assert not _flagged(_rounds_verdict(cand, base))


def test_an_honest_saving_is_not_flagged_though_its_runs_ran_beside_another_process():
    # A real 4x (0.05 s of work for the baseline's 0.2 s): the candidate shared its core in
    # rounds 1-2, the baseline in round 3. On wall time across runs the paired saving was 0
    # (rounds 1-2) against a 0.1 s claim: flagged before.
    base = ([0.20, 0.20, 0.40], [0.30, 0.30, 0.60], [0.30, 0.30, 0.30])
    v = _rounds_verdict(([0.10, 0.10, 0.05], [0.30, 0.30, 0.15], [0.15, 0.15, 0.15]), base)
    assert not _flagged(v)


def test_an_honest_saving_whose_only_round_started_slowly_is_not_flagged():
    # One round each (repeats=1): the candidate's start-up waited 0.1 s for its core (wall
    # time denies the 0.15 s saving), its CPU time shows it (CI: an honest reference flagged).
    base = ([0.20], [0.30], [0.30])
    v = _rounds_verdict(([0.05], [0.25], [0.15]), base)
    assert not _flagged(v)
    # Without the CPU witness the wall time alone cannot tell: flagged.
    assert _flagged(_rounds_verdict(([0.05], [0.25]), base[:2]))


def test_an_honest_saving_under_constant_load_is_not_flagged():
    # Every run of both shared its core (times 1.5x to 3x): the claim, in harness wall time,
    # is over twice the CPU saving; the wall time per round still shows it (helper-50).
    base = ([0.45, 0.60, 0.55], [0.70, 0.85, 0.80], [0.30, 0.31, 0.29])
    cand = ([0.10, 0.15, 0.12], [0.30, 0.35, 0.30], [0.15, 0.16, 0.15])
    assert not _flagged(_rounds_verdict(cand, base))


def test_an_honest_saving_whose_claim_grew_with_the_waiting_is_confirmed_on_cpu():
    # 0.2 s of baseline work against 0.15 s (a real 1.3x), 0.1 s start-up each, every run of
    # both sharing its core 3x; the reference's rounds (interleaved) had a quiet one. The claim
    # (0.15 s of harness wall time) is three times the CPU saving (0.05 s), and the candidate's
    # start-up waited past the reference's least: flagged in 6 of 10 verdicts (helper-52).
    base = ([0.6] * 3, [0.9] * 3, [0.3] * 3)
    v = _rounds_verdict(([0.45] * 3, [0.75] * 3, [0.25] * 3), base)
    v.reference = _rounds_verdict(([0.45] * 3, [0.75] * 3), ([0.05] * 3, [0.15] * 3)).baseline
    assert not _flagged(v)
    # The same claim with no CPU saving behind it (a clock read slow, on the baseline's work).
    v = _rounds_verdict(([0.45] * 3, [0.9] * 3, [0.3] * 3), base)
    v.reference = _rounds_verdict(([0.45] * 3, [0.75] * 3), ([0.05] * 3, [0.15] * 3)).baseline
    assert _flagged(v)


def test_a_baseline_that_sleeps_is_confirmed_on_wall_time():
    # The baseline sleeps 0.5 s (little CPU); the candidate does not: its saving shows on the
    # wall only, CPU time denies it.
    base = ([0.55, 0.55, 0.55], [0.65, 0.65, 0.65], [0.12, 0.12, 0.12])
    v = _rounds_verdict(([0.05, 0.05, 0.05], [0.15, 0.15, 0.15], [0.12, 0.12, 0.12]), base)
    assert not _flagged(v)


def test_cpu_time_is_no_witness_on_several_cores():
    # Two cores: the baseline's 4 threads burn 0.4 s of CPU in 0.1 s; a single-threaded cheat
    # at a twentieth of its clock does 0.3 s of work, claims 15 ms. The CPU "saving" (0.1 s)
    # is over half the claim: only the wall time may judge it.
    base = ([0.10] * 3, [0.25] * 3, [0.50] * 3)
    cand = ([0.015] * 3, [0.40] * 3, [0.40] * 3)
    assert _flagged(_rounds_verdict(cand, base, cores=2))
    # ... and an honest two-core candidate's threads (as much CPU as the baseline in half the
    # wall) pass on the wall time.
    base = ([0.20] * 3, [0.30] * 3, [0.30] * 3)
    assert not _flagged(_rounds_verdict(([0.10] * 3, [0.20] * 3, [0.30] * 3), base, cores=2))


def test_a_claim_made_of_the_baselines_waiting_is_not_flagged():
    # A copy of the baseline beside two busy loops (CI, 1 in 15 such verdicts): the baseline's
    # rounds waited more for their core (harness 95-117 ms, CPU/wall 0.6) than the copy's
    # (67-75 ms, 0.7-0.8). The wall claim (20-28 ms) is that waiting: at each run's busy share
    # the CPU claim is 1-5 ms, within the gate, and there is no saving to confirm or deny.
    ms = 1e-3
    base = ([116.9 * ms, 113.1 * ms, 94.8 * ms], [220.7 * ms, 199.6 * ms, 209.2 * ms],
            [122.2 * ms, 122.7 * ms, 125.1 * ms])  # fmt: skip
    cand = ([71.7 * ms, 75.3 * ms, 66.9 * ms], [165.6 * ms, 179.5 * ms, 162.5 * ms],
            [128.2 * ms, 126.4 * ms, 126.9 * ms])  # fmt: skip
    v = _rounds_verdict(cand, base)
    v.reference = _rounds_verdict(cand, ([6 * ms] * 3, [76 * ms] * 3, [70 * ms] * 3)).baseline
    assert not _flagged(v), v.candidate.status_reason
    # The same runs with the copy's clock read at half speed: a CPU claim of 40 ms, denied.
    v = _rounds_verdict(([h / 2 for h in cand[0]], *cand[1:]), base)
    v.reference = _rounds_verdict(cand, ([6 * ms] * 3, [76 * ms] * 3, [70 * ms] * 3)).baseline
    assert _flagged(v)
