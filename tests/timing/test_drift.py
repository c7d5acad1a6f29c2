"""Drift probes: bands from the start runs, a machine slowing down during a measurement is
caught (a steadily slow one is not drift), and the fallback policy (correctness kept, duration
withheld) applies to every timing taken meanwhile."""

import pytest

from helpers import busy, graded_task, loop_program
from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, TimingStatus
from perfgym.metrics._inputs import checked_duration
from perfgym.rewards._durations import seconds_or_reason
from perfgym.sandbox.pool import usable_cores
from perfgym.sandbox.warm import WarmSandbox
from perfgym.timing.drift import DriftConfig, DriftMonitor

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone

CORE = usable_cores()[0]


@pytest.fixture(scope="module")
def sandbox():
    with WarmSandbox() as sb:
        yield sb


def test_a_competing_load_on_the_probe_core_moves_the_wall_clock_probes(sandbox):
    # Five runs a check: a probe given a fifth of its core by four loops is noisier than the
    # quiet start runs its band comes from, and with three runs a check two checks of the
    # same steady load once read 26 % apart (band 25 %) on a busy VM host (full93).
    mon = DriftMonitor(sandbox, DriftConfig(start_runs=5, check_runs=5), clock="wall", core=CORE)
    mon.start()
    for band in mon.bands.values():
        assert band.centre_s > 0 and band.half_width >= 0.2
    quiet = mon.check()
    with busy(CORE, processes=4):  # the probe now gets at most a fifth of its core
        mon.used()
        loaded = mon.check()
        mon.used()
        still = mon.check()
    assert loaded.drifted and "moved" in loaded.reason  # the level left the start band
    assert "moved" in mon.between(quiet, loaded)  # drift while going from quiet to loaded
    assert mon.between(loaded, still) == ""  # steadily loaded: not drifting
    report = mon.report()
    assert report.fingerprint and report.checks[-1] == still


def test_timings_taken_during_drift_keep_correctness_and_lose_their_duration():
    task = graded_task("drifting", passes=[1, 2], sizes=[30_000])
    config = JudgeConfig(repeats=3, clock="wall", cores=[CORE],
                         drift=DriftConfig(start_runs=5, check_runs=3, reuse_s=600))  # fmt: skip
    with Judge(config) as judge:
        judge.monitor.check()  # bands and a first check on the quiet core: the one before
        with busy(CORE, processes=4):  # the measurement, which the load then overlaps
            (v,) = judge.judge_many([Candidate(task, source=loop_program(1), model="m")])
    assert v.stage is Stage.OK  # correctness stands
    assert v.candidate.status is TimingStatus.DEGRADED and "drift" in v.candidate.status_reason
    assert "timing_drift" in v.flags
    assert checked_duration(v.candidate, "candidate") is None  # metrics get no duration
    assert seconds_or_reason(v.candidate, "candidate")[0] is None  # nor do rewards
