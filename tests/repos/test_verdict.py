"""The patch verdict's own rules, on records alone (no sandbox): whether a speed-up counts is
the verdict's, the agent's selector and the metrics read the same decision, no cheaper patch
(flagged, wrong outputs, fast only where it was seen) is accepted, and malformed verdicts,
stages and settings are refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from perfgym.agent.attempt import Attempt, AttemptStage
from perfgym.agent.controller import AgentSettings
from perfgym.agent.profile import ProfileConfig
from perfgym.agent.selector import eligible
from perfgym.agent.workbench import attempt_of
from perfgym.metrics.gso import RepoAttempt
from perfgym.repos.findings import Finding
from perfgym.repos.hacks import HackReport
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison
from perfgym.repos.verdict import PatchStage, PatchTests, PatchVerdict


def _w(name: str, hidden: bool, speedup: float, sig: bool, *, match: bool = True) -> WorkloadComparison:  # fmt: skip
    orig = (0.30, 0.31, 0.29)
    return WorkloadComparison(name=name, hidden=hidden, original_s=orig,
                              patched_s=tuple(x / speedup for x in orig), speedup=speedup,
                              ci=(speedup * 0.9, speedup * 1.1), significant=sig,
                              outputs_match=match,
                              error="" if match else "outputs differ from the original's")  # fmt: skip


def _verdict(*workloads: WorkloadComparison, stage: PatchStage = PatchStage.DONE,
             ci: tuple[float, float] | None = (1.5, 3.0), hacks: tuple[str, ...] = ()) -> PatchVerdict:  # fmt: skip
    m = TaskMeasurement(task_id="t", rounds=3, workloads=workloads, speedup=2.0, ci=ci,
                        correct=stage is PatchStage.DONE)  # fmt: skip
    found = tuple(Finding(kind=k, source="static", message=k) for k in hacks)
    return PatchVerdict(task_id="t", stage=stage, measurement=m, hacks=HackReport(findings=found),
                        tests=PatchTests(mode="full", passed=True, ran=3))  # fmt: skip


HONEST = (_w("visible", False, 2.0, True), _w("hidden", True, 2.0, True))


def _attempt(v: PatchVerdict) -> Attempt:
    draft = Attempt(task_id="t", index=1, stage=AttemptStage.SUBMITTED, diff="d")
    return attempt_of(draft, v)


def test_an_honest_measured_patch_is_accepted_and_every_reader_agrees():
    v = _verdict(*HONEST)
    assert v.correct and v.significant and v.accepted and v.speedup == 2.0
    assert eligible(_attempt(v))
    ra = RepoAttempt.from_verdict(v)
    assert ra.correct and not ra.hacked and ra.workload_speedups == {"visible": 2.0, "hidden": 2.0}


@pytest.mark.parametrize("cheaper", ["flagged", "wrong_outputs", "visible_only", "ci_to_one"])
def test_no_cheaper_patch_is_accepted_by_the_verdict_or_the_agent(cheaper: str):
    """A hack found, outputs differing (even if 'faster'), fast only where the author looked,
    or an interval reaching 1: never accepted, in the verdict and in the agent's selector."""
    v = {
        "flagged": lambda: _verdict(*HONEST, hacks=("caching_signature",)),
        "wrong_outputs": lambda: _verdict(_w("visible", False, 40.0, True),
                                          _w("hidden", True, 40.0, True, match=False),
                                          stage=PatchStage.MEASURE),
        "visible_only": lambda: _verdict(_w("visible", False, 40.0, True),
                                         _w("hidden", True, 1.01, False)),
        "ci_to_one": lambda: _verdict(*HONEST, ci=(0.98, 3.0)),
    }[cheaper]()  # fmt: skip
    assert not v.accepted
    assert not eligible(_attempt(v))
    if cheaper in ("flagged", "wrong_outputs"):
        assert v.adjusted_speedup == 1.0
    if cheaper == "wrong_outputs":
        assert v.speedup is None and not RepoAttempt.from_verdict(v).correct


def test_every_verdict_stage_is_recorded_by_the_agent_with_its_old_spelling():
    spelt = {PatchStage.APPLY: "apply", PatchStage.BUILD: "build", PatchStage.TESTS: "tests",
             PatchStage.MEASURE: "workload", PatchStage.DONE: "measured"}  # fmt: skip
    for stage, word in spelt.items():
        a = _attempt(PatchVerdict(task_id="t", stage=stage))
        assert a.model_dump(mode="json")["stage"] == word


def test_before_and_after_are_timings_round_for_round():
    v = _verdict(*HONEST)
    before, after = v.before, v.after
    assert before is not None and after is not None
    assert set(before.per_workload_s) == set(after.per_workload_s) == {"visible", "hidden"}
    assert len(before.samples_s) == len(after.samples_s) == 3
    assert before.usable_s is not None and after.usable_s is not None
    assert before.usable_s / after.usable_s == pytest.approx(2.0)
    assert PatchVerdict(task_id="t", stage=PatchStage.APPLY).before is None


def test_malformed_verdicts_stages_and_settings_are_refused_in_one_error():
    with pytest.raises(ValidationError, match="extra"):
        PatchVerdict(task_id="t", stage=PatchStage.DONE, accepted=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="stage"):
        PatchVerdict(task_id="t", stage="accepted")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="stage"):
        Attempt(task_id="t", index=1, stage="kept", diff="")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="iteration"):
        AgentSettings(iteration=5)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="rate_hz"):
        ProfileConfig(rate_hz=100)  # type: ignore[call-arg]
    assert AgentSettings(iterations=3).profile == ProfileConfig()
