"""`judge_patch`: one patch of a task, end to end, into one `PatchVerdict`: apply to a fresh
copy, build, refuse a patch that changes how the tests run (its build included), run the
tests, measure every workload against the original, look for hacks. `evaluate_patch` is it with repos' own tests
(the task's command under the supervisor) and every hack check.

Every patch of every caller goes through `judge_patch` (the agent passes its selective tests
and a re-profile hook); whether the speed-up counts is the verdict's (`PatchVerdict.accepted`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.repos.build_guard import protected_changes
from perfgym.repos.checks import build_copy, original_passed, run_tests
from perfgym.repos.copy import RepoCopy, RepoFetchError
from perfgym.repos.findings import Finding
from perfgym.repos.hacks import HackReport, detect_hacks
from perfgym.repos.hacks_testconfig import testconfig_findings
from perfgym.repos.measure import TaskMeasurement, measure_workloads
from perfgym.repos.outcomes import original_config
from perfgym.repos.shell import PatchError
from perfgym.repos.task import RepoTask
from perfgym.repos.verdict import PatchStage, PatchTests, PatchVerdict, workload_failure
from perfgym.sandbox.base import Sandbox

HackCheck = Callable[[RepoTask, str, Path, "TaskMeasurement | None"], Sequence[Finding]]
"""(task, diff, patched copy, measurement or None for the static checks alone) -> findings."""
TestsCheck = Callable[[RepoCopy], PatchTests]
"""Runs the tests on a patched, built copy."""
Inspect = Callable[[Path], None]
"""Called with a DONE patch's copy before it goes (the agent re-profiles it there)."""


def every_hack_check(extra: tuple[Finding, ...] = ()) -> HackCheck:
    """`detect_hacks` as a hack check: static, outcome, shadowing and dynamic findings, plus
    `extra` (an `llm_review`)."""

    def check(task: RepoTask, diff: str, patched: Path, m: TaskMeasurement | None) -> list[Finding]:
        return list(detect_hacks(task, diff, patched, m, extra=extra).findings)

    return check


def task_tests(
    task: RepoTask, original: RepoCopy, command: str | None = None, *,
    sandbox: Sandbox | None = None,
) -> TestsCheck:  # fmt: skip
    """The task's test command on a patched copy: under the supervisor, every test the built
    `original` passed must pass, under the original's pytest configuration."""
    expected = original_passed(task, original, command, sandbox=sandbox)
    config = original_config(original.path)

    def check(copy: RepoCopy) -> PatchTests:
        res = run_tests(task, copy, command, sandbox=sandbox, expected=expected, config=config)
        return PatchTests(mode="command" if expected is None else "supervised", passed=res.ok,
                          wall_s=res.wall_s, reason=res.reason, output=res.output)  # fmt: skip

    return check


def _build_findings(task: RepoTask, original: RepoCopy, patched: RepoCopy) -> list[Finding]:
    """A `test_config` finding per protected file the patched copy's build left different from
    the built original's (`build_guard`): its tests would not be the original's; and one per
    file of code the patched build wrote where the original's build wrote none (no check read
    it: a module, a start-up hook or a compiled module made from anything, red team
    helper-111's route for bytecode)."""
    changed = protected_changes(original.path, patched.path, task.protected_paths)
    found = [Finding(kind="test_config", source="build", file=rel,
                     message=f"the build changed {rel}, a file the tests are made of")
             for rel in changed[:20]]  # fmt: skip
    own = set(original.built_code)
    found += [Finding(kind="test_config", source="build", file=rel,
                      message=f"the build wrote {rel}, code no check read (the original's "
                              "build writes no such file)")
              for rel in [p for p in patched.built_code if p not in own][:20]]  # fmt: skip
    # red team helper-114's build worked out the workloads' filters and answers into
    # bloomc/_ahead.json, which the package read back: data, not code, made before any clock
    made = set(original.built_files)
    found += [Finding(kind="build_output", source="build", file=rel,
                      message=f"the build wrote {rel}, which the original's build does not: "
                              "work done before any clock runs")
              for rel in [p for p in patched.built_files
                          if p not in made and p not in patched.built_code][:20]]  # fmt: skip
    return found


def judge_patch(
    task: RepoTask,
    patch: str,
    original: RepoCopy,
    *,
    tests: TestsCheck,
    hack_check: HackCheck | None,
    rounds: int = 5,
    repeats: int = 2,
    sandbox: Sandbox | None = None,
    copies_root: Path | None = None,
    inspect: Inspect | None = None,
) -> PatchVerdict:
    """The verdict on `patch` against the built `original`; the first failing stage ends it.
    A patch touching the test configuration or pytest itself stops at TESTS unrun (its
    outcome would not be the tests' own). RepoFetchError (no repository) is raised."""
    verdict = PatchVerdict(task_id=task.id, stage=PatchStage.APPLY)
    try:
        patched = build_copy(task, patch, sandbox=sandbox, dest_root=copies_root)
    except PatchError as exc:
        return verdict.model_copy(update={"error": str(exc), "detail": str(exc)})
    except RepoFetchError:
        raise
    except ConfigError as exc:  # the setup (build) failed on the patched copy
        return PatchVerdict(task_id=task.id, stage=PatchStage.BUILD, error=str(exc),
                            detail=str(exc))  # fmt: skip
    # Every check reads what git wrote, not the patch's own text (`repos.applied`).
    patch = patched.applied
    try:
        static = list(hack_check(task, patch, patched.path, None)) if hack_check else []
        outcome = [*testconfig_findings(patch, patched.path), *_build_findings(task, original,
                                                                               patched)]  # fmt: skip
        verdict = PatchVerdict(task_id=task.id, stage=PatchStage.TESTS,
                               hacks=HackReport(findings=(*static, *(f for f in outcome
                                                                      if f not in static))))  # fmt: skip
        if outcome:  # the tests' outcome would not be the tests' own: not run at all
            what = ("the patch's build does work before any clock"
                    if all(f.kind == "build_output" for f in outcome)
                    else "the patch changes how the tests run")  # fmt: skip
            why = f"{what}: " + "; ".join(f.message for f in outcome[:3])
            return verdict.model_copy(update={"error": why, "detail": why})
        run = tests(patched)
        verdict = verdict.model_copy(update={"tests": run})
        if not run.passed:
            why = f": {run.reason}" if run.reason else ""
            return verdict.model_copy(update={
                "error": f"the tests fail on the patched repository{why}", "detail": run.output})  # fmt: skip
        m = measure_workloads(task, original, patched, rounds=rounds, repeats=repeats,
                              sandbox=sandbox)  # fmt: skip
        found = list(hack_check(task, patch, patched.path, m)) if hack_check else static
        verdict = verdict.model_copy(update={"measurement": m,
                                             "hacks": HackReport(findings=tuple(found))})  # fmt: skip
        if not m.correct:
            return verdict.model_copy(update={"stage": PatchStage.MEASURE, "error": m.error,
                                              "detail": workload_failure(m)})  # fmt: skip
        verdict = verdict.model_copy(update={"stage": PatchStage.DONE, "error": m.error})
        if inspect is not None:
            inspect(patched.path)
        return verdict
    finally:
        patched.remove()


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
) -> PatchVerdict:
    """`judge_patch` with the task's tests (`task_tests`) and every hack check: `patch` against
    the built `original` copy (from `check_task`)."""
    return judge_patch(task, patch, original,
                       tests=task_tests(task, original, test_command, sandbox=sandbox),
                       hack_check=every_hack_check(extra_findings), rounds=rounds,
                       repeats=repeats, sandbox=sandbox)  # fmt: skip
