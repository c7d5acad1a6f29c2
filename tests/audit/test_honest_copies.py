"""The `honest-copies` probe: copies of a task's own solutions, judged the whole way, are neither
rejected nor called cheats; where the judge does either, the task is weak for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_tasks import audit, sum_task

from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.honest_copies import assess_copies
from perfgym.audit.results import Outcome, Severity
from perfgym.judge.verdict import Stage, Timing, TimingStatus, Verdict
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"


def _run(stage: Stage = Stage.OK, flags: tuple[str, ...] = (), candidate_s: float = 0.1,
         reason: str = "") -> ProbeRun:  # fmt: skip
    cand = Timing(estimate_s=candidate_s, samples_s=[candidate_s] * 3, status_reason=reason,
                  status=TimingStatus.DEGRADED if flags else TimingStatus.OK)  # fmt: skip
    base = Timing(estimate_s=0.1, samples_s=[0.1] * 3)
    v = Verdict(task_id="t", stage=stage, detail="WRONG_OUTPUT" if stage is Stage.WO else "",
                candidate=cand, baseline=base, flags=list(flags))  # fmt: skip
    return ProbeRun(v, {})


def test_a_copy_flagged_as_hiding_time_or_rejected_is_weak_and_clean_copies_are_sound():
    ctx = AuditContext(sum_task(hidden=False), judge=None)  # type: ignore[arg-type]
    flagged = assess_copies(ctx, [_run(flags=("harness_timer_mismatch",), reason="denied"),
                                  _run(candidate_s=0.01)])  # fmt: skip
    assert flagged.outcome is Outcome.WEAK and flagged.severity is Severity.HIGH
    assert "baseline's copy was flagged harness_timer_mismatch: denied" in flagged.detail
    rejected = assess_copies(ctx, [_run(), _run(stage=Stage.WO)])
    assert rejected.outcome is Outcome.WEAK and "reference's copy was judged WO" in rejected.detail
    # An informative flag (not one of hiding time) is no finding.
    clean = assess_copies(ctx, [_run(flags=("more_threads_than_task",)), _run(candidate_s=0.01)])
    assert clean.outcome is Outcome.SOUND, clean
    assert clean.figures["reference_copy_speedup"] == 10.0
    # A sandbox failure on one copy hides nothing found on the other (helper-71).
    broken = _run()
    broken.verdict.infra_error = True
    hidden = assess_copies(ctx, [_run(stage=Stage.WO), broken])
    assert hidden.outcome is Outcome.WEAK and "baseline's copy was judged WO" in hidden.detail
    assert assess_copies(ctx, [_run(), broken]).outcome is Outcome.INFRA_ERROR


# Alone: beside the other test worker's judges on the same measuring cores, the harness-clocked
# task's baseline copy once lost its pay in a full run (not reproduced in 6 tries beside two
# busy loops; the sweeps behind the probe: 0 flags in 640 honest verdicts under load).
@pytest.mark.alone
def test_the_real_judge_pays_honest_copies_on_a_stdio_task_and_a_harness_clocked_one():
    stdio = audit(sum_task(hidden=True), ["honest-copies"]).result("honest-copies")
    assert stdio is not None and stdio.outcome is Outcome.SOUND, stdio
    assert stdio.figures["reference_copy_speedup"] > 2  # a loop against the builtin sum
    harness = load_suite(FIXTURES).get("py_range_sums")
    clocked = audit(harness, ["honest-copies"]).result("honest-copies")
    assert clocked is not None and clocked.outcome is Outcome.SOUND, clocked
    assert clocked.figures["reference_copy_speedup"] > 2
