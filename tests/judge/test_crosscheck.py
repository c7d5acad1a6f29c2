"""The harness cross-check's external saving: paired by round when both sides share rounds."""

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


def _cpu_verdict(cand: tuple[list[float], list[float], list[float]],
                 base: tuple[list[float], list[float], list[float]], cores: int = 1) -> Verdict:  # fmt: skip
    """Each side: (harness seconds, wall seconds, CPU seconds) per round."""

    def timing(harness: list[float], walls: list[float], cpus: list[float]) -> Timing:
        mid = sorted(harness)[len(harness) // 2]
        return Timing(estimate_s=mid, samples_s=harness, clock="harness",
                      external_wall_s=sorted(walls)[len(walls) // 2], external_walls_s=walls,
                      external_cpus_s=cpus, cores_wanted=cores)  # fmt: skip

    return Verdict(task_id="t", stage=Stage.OK, language="python", candidate=timing(*cand),
                   baseline=timing(*base))  # fmt: skip


# The baseline's runs shared their core with another process in 2 of 3 rounds (its harness and
# wall time doubled there); its CPU time did not grow. A 0.1 s start-up outside the harness.
LOADED_BASE = ([0.20, 0.40, 0.40], [0.30, 0.60, 0.60], [0.30, 0.30, 0.30])


def test_a_half_speed_clock_is_flagged_though_the_baseline_ran_beside_another_process():
    # The same work as the baseline (0.2 s of CPU), its clock read at half speed.
    v = _cpu_verdict(([0.10, 0.10, 0.10], [0.30, 0.30, 0.30], [0.30, 0.30, 0.30]), LOADED_BASE)
    # On wall time the paired saving (0.3 s) is over half the claim (0.3 s): passed before.
    crosscheck_harness(v, 0.5)
    assert v.flags == ["harness_timer_mismatch"] and "CPU" in v.candidate.status_reason


def test_an_honest_saving_is_not_flagged_though_its_runs_ran_beside_another_process():
    # A real 4x (0.05 s of work for the baseline's 0.2 s): the candidate shared its core in
    # rounds 1-2, the baseline in round 3. On wall time the paired saving is 0 (rounds 1-2)
    # against a 0.1 s claim: flagged before.
    base = ([0.20, 0.20, 0.40], [0.30, 0.30, 0.60], [0.30, 0.30, 0.30])
    v = _cpu_verdict(([0.10, 0.10, 0.05], [0.30, 0.30, 0.15], [0.15, 0.15, 0.15]), base)
    crosscheck_harness(v, 0.5)
    assert v.flags == []


def test_a_baseline_that_sleeps_is_checked_on_wall_time():
    # The baseline sleeps 0.5 s (little CPU); the candidate does not: its saving shows on the
    # wall only, and CPU time would flag it.
    base = ([0.55, 0.55, 0.55], [0.65, 0.65, 0.65], [0.12, 0.12, 0.12])
    v = _cpu_verdict(([0.05, 0.05, 0.05], [0.15, 0.15, 0.15], [0.12, 0.12, 0.12]), base)
    crosscheck_harness(v, 0.5)
    assert v.flags == []


def test_a_task_on_several_cores_is_checked_on_wall_time():
    # Two cores: the candidate's threads spend as much CPU as the baseline in half the wall.
    base = ([0.20, 0.20, 0.20], [0.30, 0.30, 0.30], [0.30, 0.30, 0.30])
    v = _cpu_verdict(([0.10, 0.10, 0.10], [0.20, 0.20, 0.20], [0.30, 0.30, 0.30]), base, cores=2)
    crosscheck_harness(v, 0.5)
    assert v.flags == []
