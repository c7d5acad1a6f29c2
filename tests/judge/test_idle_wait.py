"""The CPU clock's blind spot, a run that sleeps (red team helper-73's relay held an answer asleep
for the next run of the same input): a candidate that waits far beyond what its core's load
explains is flagged `idle_wait` and gets the lowest speed credit; honest programs under load
are not (their waiting per CPU second is the baseline's)."""

from __future__ import annotations

import pytest
from small_tasks import SLOW_SUM, SUM, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig, idle_wait, stages
from perfgym.judge.idle_wait import IDLE_WAIT, flag_idle_wait, idle_excess_s
from perfgym.judge.verdict import Verdict
from perfgym.timing.result import Timing


def _timing(walls: list[float], cpus: list[float]) -> Timing:
    return Timing(estimator="median", clock="cpu", samples_s=cpus, estimate_s=sorted(cpus)[1],
                  external_walls_s=walls, external_cpus_s=cpus)  # fmt: skip


def _verdict(candidate: Timing, baseline: Timing) -> Verdict:
    return Verdict(task_id="t", stage="OK", candidate=candidate, baseline=baseline)


# The baseline's rounds beside two busy loops on its core: it ran a third of the time.
LOADED_BASELINE = ([0.90, 1.05, 0.96], [0.30, 0.34, 0.31])


def test_an_honest_candidate_waiting_like_the_baseline_is_not_flagged() -> None:
    base = _timing(*LOADED_BASELINE)
    for walls, cpus in (
        ([0.09, 0.12, 0.10], [0.03, 0.03, 0.03]),  # a faster program, the same load
        ([0.20, 0.16, 0.12], [0.03, 0.03, 0.03]),  # more load in its rounds than the baseline's
        ([1.5, 1.4, 1.3], [0.31, 0.30, 0.32]),  # a copy of the baseline under heavier load
    ):
        v = _verdict(_timing(walls, cpus), base)
        assert not flag_idle_wait(v, "cpu", 1), (walls, idle_excess_s(v.candidate, base))


def test_a_candidate_that_sleeps_is_flagged_on_the_cpu_clock_only() -> None:
    base = _timing(*LOADED_BASELINE)
    sleeper = ([0.45, 0.52, 0.60], [0.03, 0.03, 0.03])  # 30 ms of work, then asleep
    v = _verdict(_timing(*sleeper), base)
    assert abs(idle_excess_s(v.candidate, base) - 0.51) < 0.05  # its worst round
    assert flag_idle_wait(v, "cpu", 1)
    assert IDLE_WAIT in v.candidate.flags and not v.candidate.ok
    assert v.candidate.hid_time == [IDLE_WAIT]
    for clock, cores in (("wall", 1), ("cpu", 2)):
        assert not flag_idle_wait(_verdict(_timing(*sleeper), base), clock, cores)


def test_a_short_run_waiting_as_the_reference_waits_is_not_flagged() -> None:
    # beside another judge's runs on the same core, a 10 ms program's rounds waited 100-180 ms
    # whole (its start, its cgroup move, another run's slice), as the reference's did
    base = _timing(*LOADED_BASELINE)
    ref = _timing([0.13, 0.19, 0.16], [0.01, 0.01, 0.01])
    copy = _timing([0.12, 0.20, 0.15], [0.01, 0.01, 0.01])
    assert not flag_idle_wait(Verdict(task_id="t", stage="OK", candidate=copy, baseline=base,
                                      reference=ref), "cpu", 1)  # fmt: skip
    sleeper = _timing([0.16, 0.90, 0.15], [0.01, 0.01, 0.01])
    assert flag_idle_wait(Verdict(task_id="t", stage="OK", candidate=sleeper, baseline=base,
                                  reference=ref), "cpu", 1)  # fmt: skip


def test_a_candidate_that_lingers_in_one_round_only_is_flagged() -> None:
    # helper-75's relay: the holder's round waits, the readers' do not (the median did not see it)
    base = _timing(*LOADED_BASELINE)
    v = _verdict(_timing([0.09, 0.10, 1.20], [0.03, 0.03, 0.04]), base)
    assert flag_idle_wait(v, "cpu", 1)


MINE = SUM + "# mine\n"  # the reference's program, not its text: measured, not a copy


def _counting_measure(monkeypatch, first=None) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every measurement the judge makes (its timings by label); `first` edits the first one."""
    real, made = stages.measure, []

    def measure(*args, **kwargs):  # type: ignore[no-untyped-def]
        timings = real(*args, **kwargs)
        if first is not None and not made:
            first(timings)
        made.append(timings)
        return timings

    monkeypatch.setattr(stages, "measure", measure)
    return made


def test_the_judge_flags_a_sleeping_program_and_not_its_honest_twin(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the product's floor (100 ms): a 20 ms program's one round may wait that long for its core
    # beside the other test worker, and the batch is then measured again; the sleeper waits in
    # both measurements, and only the second is in the verdicts
    made = _counting_measure(monkeypatch)
    task = sum_task("idle-sum")
    sleeper = SUM + "import time\ntime.sleep(1.0)\n"
    with Judge(JudgeConfig(repeats=3, clock="cpu")) as judge:
        slept, honest = judge.judge_many([
            Candidate(task, source=sleeper, model="m", sample=0),
            Candidate(task, source=SLOW_SUM + "# a copy\n", model="m", sample=1),
        ])  # fmt: skip
    assert slept.stage == "OK" and IDLE_WAIT in slept.flags and IDLE_WAIT in slept.hid_time
    assert honest.stage == "OK" and IDLE_WAIT not in honest.flags, honest.candidate
    assert len(made) == 2  # the sleeper's wait in the first made a second
    assert slept.candidate.samples_s == made[1]["candidate-m-0"].samples_s


def _spiked(timings: dict) -> None:
    """One round of every candidate waits more, as beside a burst of another's processes: its
    unexplained wait set halfway between the floor and the spike line, whatever the machine's
    load made them (a fixed +0.5 s fell under a floor raised by a loaded baseline, or past the
    line with the round's own wait, beside compile-heavy tests), and its estimate is one no run
    made (what a program that waited in order to gain would want kept)."""
    b, r = timings["baseline"], timings.get("reference")
    for label, t in timings.items():
        if not label.startswith("candidate-"):
            continue
        t.external_walls_s[0] = t.external_cpus_s[0] + 10.0  # this round's wait the worst
        far = idle_wait._over_floor(t, b, r)
        assert far is not None
        explained = 10.0 - far.excess  # what the task's own waits explain of this round's
        t.external_walls_s[0] += (far.floor + far.spike_line) / 2 + explained - 10.0
        t.estimate_s = 1e-6


def test_a_load_spike_in_one_round_is_measured_again_not_flagged(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A full test run's honest fast candidate waited over 100 ms for its core in one round
    and was paid the floor; now the batch is measured again and the second measurement
    decides, and nothing of the first (its estimate, its flag) reaches the verdict."""
    made = _counting_measure(monkeypatch, first=_spiked)
    with Judge(JudgeConfig(repeats=3, clock="cpu")) as judge:
        (v,) = judge.judge_many([Candidate(sum_task("idle-spike"), source=MINE, model="m")])
    assert len(made) == 2
    assert v.stage == "OK" and IDLE_WAIT not in v.flags and v.candidate.ok, v.candidate
    assert v.candidate.estimate_s != 1e-6
    assert v.candidate.samples_s == made[1]["candidate-m-0"].samples_s
    assert v.baseline.samples_s == made[1]["baseline"].samples_s  # paired: the same rounds


def test_a_batch_with_no_suspect_is_measured_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    made = _counting_measure(monkeypatch)
    with Judge(JudgeConfig(repeats=3, clock="cpu")) as judge:
        (v,) = judge.judge_many([Candidate(sum_task("idle-once"), source=MINE, model="m")])
    assert v.stage == "OK" and IDLE_WAIT not in v.flags
    # measured again only when the first measurement had a suspect (a rare spike on a loaded
    # machine may make one): never for nothing
    suspects = idle_wait.idle_suspects(made[0], ["candidate-m-0"], "cpu", 1)
    assert len(made) == (2 if suspects else 1), suspects


def test_the_suspects_are_the_flagged_ones() -> None:
    base = _timing(*LOADED_BASELINE)
    timings = {"baseline": base, "a": _timing([0.09, 0.10, 1.20], [0.03, 0.03, 0.04]),
               "b": _timing([0.09, 0.12, 0.10], [0.03, 0.03, 0.03])}  # fmt: skip
    assert list(idle_wait.idle_suspects(timings, ["a", "b"], "cpu", 1)) == ["a"]
    assert idle_wait.idle_suspects(timings, ["a", "b"], "wall", 1) == {}
    assert idle_wait.idle_suspects(timings, ["a", "b"], "cpu", 2) == {}
    assert idle_wait.idle_suspects({"a": timings["a"]}, ["a"], "cpu", 1) == {}  # no baseline
    wait = idle_wait.idle_suspects(timings, ["a"], "cpu", 1)["a"]
    # the line is the task's: 0.25 of the baseline's wall (0.24 s) + 1 s, not the candidate's
    assert wait.spike_line == pytest.approx(0.25 * 0.96 + idle_wait.SPIKE_MAX_S)
    assert not idle_wait.beyond_a_spike(wait)
    assert idle_wait.beyond_a_spike(wait._replace(excess=1.3))


def test_cpu_burnt_does_not_widen_the_spike_line() -> None:
    """Red team helper-123: 1 s of CPU a run raised a floor drawn on 2x the candidate's CPU,
    and with it the line, so 4.8 s of sleep a round was measured again, not flagged."""
    base = _timing(*LOADED_BASELINE)
    burner = _timing([6.0, 6.2, 6.1], [1.0, 1.0, 1.0])
    wait = idle_wait.idle_suspects({"baseline": base, "x": burner}, ["x"], "cpu", 1)["x"]
    assert wait.floor == pytest.approx(2.0) and idle_wait.beyond_a_spike(wait), wait


def _waited(seconds: dict[str, float]):  # type: ignore[no-untyped-def]
    """A first-measurement edit: the named candidates' first round waits that much longer."""

    def edit(timings: dict) -> None:
        for label, extra in seconds.items():
            timings[label].external_walls_s[0] += extra

    return edit


def test_a_wait_beyond_any_spike_is_flagged_without_a_second_measurement(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Red team helper-122 slept 15 s in the first measurement only (its file's age told it
    which one it was in) and was measured again, unflagged: such a wait is no load spike."""
    made = _counting_measure(monkeypatch, first=_waited({"candidate-m-0": 3.0}))
    with Judge(JudgeConfig(repeats=3, clock="cpu")) as judge:
        (v,) = judge.judge_many([Candidate(sum_task("idle-long"), source=MINE, model="m")])
    assert len(made) == 1
    assert v.stage == "OK" and IDLE_WAIT in v.flags and IDLE_WAIT in v.hid_time


def test_beside_a_spike_a_long_first_wait_is_still_flagged(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One candidate's spike measures the batch again; another's wait beyond any spike in the
    first measurement is flagged on the second's timing, whatever it did there."""
    made = _counting_measure(monkeypatch, first=_waited({"candidate-m-0": 3.0,
                                                         "candidate-m-1": 0.5}))  # fmt: skip
    task = sum_task("idle-mixed")
    with Judge(JudgeConfig(repeats=3, clock="cpu")) as judge:
        long, spiked = judge.judge_many([Candidate(task, source=MINE, model="m", sample=0),
                                         Candidate(task, source=MINE + "#\n", model="m",
                                                   sample=1)])  # fmt: skip
    assert len(made) == 2
    assert IDLE_WAIT in long.flags and "first measurement" in long.candidate.status_reason
    assert IDLE_WAIT not in spiked.flags and spiked.candidate.ok, spiked.candidate


def test_what_is_kept_for_reuse_is_the_second_measurement(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Red team helper-122: the first measurement's baseline was kept for the next call to
    reuse while its verdicts used the second's."""
    from perfgym.timing.drift import DriftConfig

    made = _counting_measure(monkeypatch, first=_spiked)
    config = JudgeConfig(repeats=3, clock="cpu", drift=DriftConfig(), reuse_references=True)
    with Judge(config) as judge:
        (v,) = judge.judge_many([Candidate(sum_task("idle-reuse"), source=MINE, model="m")])
        kept = [k.timings for k in judge._reused._by_key.values()]
    assert len(made) == 2 and IDLE_WAIT not in v.flags
    assert len(kept) == 1 and kept[0]["baseline"].samples_s == made[1]["baseline"].samples_s
