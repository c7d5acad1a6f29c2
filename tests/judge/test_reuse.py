"""The baseline's and reference's timings reused across calls of one Judge while the drift
probes show the machine unchanged, and dropped when they move (a forced drift signal)."""

import time

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.reuse import REUSED_FLAG
from perfgym.tasks.task import Language
from perfgym.timing.drift import DriftCheck, DriftConfig

SUM = PROGRAMS[Language.PYTHON][0]


class ForcedDrift:
    """A drift monitor whose machine level the test sets: checks at different levels moved."""

    def __init__(self) -> None:
        self.level = 1.0
        self.checks: list[DriftCheck] = []
        self.shift_after: int | None = None  # move the level after this many checks

    def check(self) -> DriftCheck:
        if self.shift_after is not None and len(self.checks) >= self.shift_after:
            self.level, self.shift_after = 2.0, None
        c = DriftCheck(at=time.time(), medians_s={"interpreter": self.level}, moves={},
                       drifted=False)  # fmt: skip
        self.checks.append(c)
        return c

    def between(self, before: DriftCheck, after: DriftCheck) -> str:
        a, b = before.medians_s["interpreter"], after.medians_s["interpreter"]
        return "" if a == b else f"probes moved {b / a - 1:+.0%}"

    def used(self) -> None:
        pass


def reuse_judge(**overrides) -> tuple[Judge, ForcedDrift]:
    """A reusing judge whose drift the test forces; the canary's tolerance is wide unless the
    test sets it (a 10 ms program's estimate moves by more than 3 % on a shared machine)."""
    overrides = {"reuse_tolerance": 10.0, **overrides}
    config = JudgeConfig(repeats=2, drift=DriftConfig(), reuse_references=True, **overrides)
    j = Judge(config)
    fake = ForcedDrift()
    j._monitor = fake  # type: ignore[assignment]
    return j, fake


def call(j: Judge, k: int):
    task = sum_task(Language.PYTHON)
    (v,) = j.judge_many([Candidate(task, source=f"{SUM}# call {k}\n", model="m", sample=k)])
    assert v.stage.value == "OK", v.reason
    return v


def test_reused_while_unchanged_dropped_when_the_probes_move():
    j, fake = reuse_judge()
    with j:
        first = call(j, 0)
        second = call(j, 1)
        assert REUSED_FLAG not in first.baseline.flags
        assert REUSED_FLAG in second.baseline.flags
        assert second.baseline.samples_s == first.baseline.samples_s  # the same measurement
        # the reference, the canary, is measured afresh beside the candidate, paired by round
        assert REUSED_FLAG not in second.reference.flags
        assert second.reference.samples_s != first.reference.samples_s
        assert second.candidate.samples_s != first.candidate.samples_s  # the candidate's own
        assert second.baseline.ok and second.candidate.ok
        fake.level = 2.0  # the machine moved between calls
        third = call(j, 2)
        assert REUSED_FLAG not in third.baseline.flags
        assert third.baseline.samples_s != first.baseline.samples_s  # measured again, together
        fourth = call(j, 3)  # kept from the third call, at the new level
        assert REUSED_FLAG in fourth.baseline.flags
        assert fourth.baseline.samples_s == third.baseline.samples_s


def test_a_move_during_the_candidates_measurement_measures_everything_again():
    j, fake = reuse_judge()
    with j:
        first = call(j, 0)
        fake.shift_after = len(fake.checks) + 1  # the check opening call 2 passes, then it moves
        second = call(j, 1)
        assert REUSED_FLAG not in second.baseline.flags
        assert second.baseline.samples_s != first.baseline.samples_s


def test_a_reference_that_moved_drops_the_kept_baseline():
    """The canary: the drift probes say nothing moved, but the task's reference, measured again
    beside the candidates, is outside the tolerance of its kept timing."""
    j, _fake = reuse_judge(reuse_tolerance=1e-9)
    with j:
        first = call(j, 0)
        second = call(j, 1)
        assert REUSED_FLAG not in second.baseline.flags
        assert second.baseline.samples_s != first.baseline.samples_s


def test_off_by_default_and_without_probes():
    assert JudgeConfig().reuse_references is False
    assert JudgeConfig.protocol("training").reuse_references is True
    j = Judge(JudgeConfig(repeats=2, drift=DriftConfig()))
    j._monitor = ForcedDrift()  # type: ignore[assignment]
    with j:
        call(j, 0)
        assert REUSED_FLAG not in call(j, 1).baseline.flags


def test_reuse_without_drift_probes_is_refused():
    """Malformed input: reuse with no way to tell the machine is unchanged."""
    with pytest.raises(ValueError, match="reuse_references needs drift probes"):
        JudgeConfig(reuse_references=True)


def test_old_timings_are_measured_again():
    j, _fake = reuse_judge(reuse_max_age_s=0.001)
    with j:
        call(j, 0)
        time.sleep(0.01)
        assert REUSED_FLAG not in call(j, 1).baseline.flags
