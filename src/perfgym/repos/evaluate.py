"""`evaluate_patch`: one patch of a task, end to end: apply to a fresh copy, build, run the tests,
measure every workload against the original, look for hacks, and the speedup that counts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.repos.checks import build_copy, original_passed, run_tests
from perfgym.repos.copy import RepoCopy, RepoFetchError
from perfgym.repos.findings import Finding
from perfgym.repos.hacks import HackReport, adjusted_speedup, detect_hacks
from perfgym.repos.hacks_testconfig import OUTCOME_KINDS
from perfgym.repos.measure import TaskMeasurement, measure_workloads
from perfgym.repos.outcomes import original_config
from perfgym.repos.shell import PatchError
from perfgym.repos.task import RepoTask
from perfgym.sandbox.base import Sandbox


class PatchEvaluation(BaseModel):
    """What one patch did. `stage` is where it stopped: 'apply', 'build', 'tests', 'measure'
    or 'done'; `speedup` counts only when `correct`; `adjusted_speedup` also drops hacks."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    stage: str
    error: str = ""
    tests_passed: bool = False
    test_output: str = Field("", repr=False)
    measurement: TaskMeasurement | None = None
    hacks: HackReport = HackReport()
    correct: bool = False
    speedup: float | None = None
    ci: tuple[float, float] | None = None
    adjusted_speedup: float = 1.0


def evaluate_patch(
    task: RepoTask,
    patch: str,
    original: RepoCopy,
    *,
    rounds: int = 5,
    repeats: int = 2,
    test_command: str | None = None,
    sandbox: Sandbox | None = None,
    extra_findings: tuple[Finding, ...] = (),
) -> PatchEvaluation:
    """Evaluate `patch` against the built `original` copy (from `check_task`). The tests must
    pass and every output must equal the original's for the patch to be correct."""
    expected = original_passed(task, original, test_command, sandbox=sandbox)
    try:
        patched = build_copy(task, patch, sandbox=sandbox)
    except PatchError as exc:
        return PatchEvaluation(task_id=task.id, stage="apply", error=str(exc))
    except RepoFetchError:
        raise
    except ConfigError as exc:  # the setup (build) failed on the patched copy
        return PatchEvaluation(task_id=task.id, stage="build", error=str(exc))
    try:
        static_only = detect_hacks(task, patch, patched.path, extra=extra_findings)
        outcome_hacks = [f for f in static_only.findings if f.kind in OUTCOME_KINDS]
        if outcome_hacks:  # the tests' outcome would not be the tests' own: not run at all
            return PatchEvaluation(task_id=task.id, stage="tests", hacks=static_only,
                                   error="the patch changes how the tests run: "
                                         + "; ".join(f.message for f in outcome_hacks[:3]))  # fmt: skip
        tests = run_tests(task, patched, test_command, sandbox=sandbox, expected=expected,
                          config=original_config(original.path))  # fmt: skip
        if not tests.ok:
            why = f": {tests.reason}" if tests.reason else ""
            return PatchEvaluation(task_id=task.id, stage="tests", test_output=tests.output,
                                   error=f"the tests fail on the patched repository{why}",
                                   hacks=static_only)  # fmt: skip
        m = measure_workloads(task, original, patched, rounds=rounds, repeats=repeats,
                              sandbox=sandbox)  # fmt: skip
        report = detect_hacks(task, patch, patched.path, m, extra=extra_findings)
    finally:
        patched.remove()
    speedup = m.speedup if m.correct else None
    return PatchEvaluation(
        task_id=task.id,
        stage="done" if m.correct else "measure",
        error=m.error,
        tests_passed=True,
        test_output=tests.output,
        measurement=m,
        hacks=report,
        correct=m.correct,
        speedup=speedup,
        ci=m.ci if m.correct else None,
        adjusted_speedup=adjusted_speedup(speedup, report, m.correct),
    )
