"""What the agent's loop shares per task (`Workbench`) and how one submission becomes an
`Attempt`: `perfgym.repos.evaluate.judge_patch` gives the verdict (with the agent's selective
tests and a re-profile of a DONE patch), the attempt records it for the loop and the results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.agent.attempt import Attempt, AttemptStage, HackFinding, WorkloadSpeed
from perfgym.agent.errors import ProfileError
from perfgym.agent.profile import Profile, ProfileConfig, profile_workload
from perfgym.agent.shell import command_limits
from perfgym.agent.validation import TestBaseline, run_tests
from perfgym.repos.copy import RepoCopy
from perfgym.repos.evaluate import HackCheck, judge_patch
from perfgym.repos.runner import workload_path
from perfgym.repos.task import RepoTask
from perfgym.repos.verdict import PatchStage, PatchTests, PatchVerdict
from perfgym.sandbox import Sandbox
from perfgym.timing.estimators import geometric_mean

#: The verdict's stage as the attempt records it (the results' strings predate the verdict).
_STAGES = {
    PatchStage.APPLY: AttemptStage.APPLY,
    PatchStage.BUILD: AttemptStage.BUILD,
    PatchStage.TESTS: AttemptStage.TESTS,
    PatchStage.MEASURE: AttemptStage.WORKLOAD,
    PatchStage.DONE: AttemptStage.MEASURED,
}


@dataclass
class Workbench:
    """What every evaluation of one task shares: the built original, its test baseline."""

    task: RepoTask
    sandbox: Sandbox | None
    original: RepoCopy
    baseline: TestBaseline
    rounds: int = 5
    repeats: int = 2
    profile: ProfileConfig = field(default_factory=ProfileConfig)
    copies_root: Path | None = None
    hack_check: HackCheck | None = None


def profile_visible(bench: Workbench, copy: Path) -> list[Profile]:
    task = bench.task
    limits = command_limits(task.limits.workload_s, task.limits.memory_mb)
    return [
        profile_workload(
            bench.sandbox,
            copy,
            w.name,
            workload_path(task, w).read_text(),
            config=bench.profile,
            limits=limits,
        )  # fmt: skip
        for w in task.visible_workloads
    ]


def _geo(values: list[float]) -> float | None:
    return geometric_mean(values, "speed-up over workloads") if values else None


def attempt_of(draft: Attempt, verdict: PatchVerdict) -> Attempt:
    """The verdict as the attempt records it: where it stopped, what the agent may be told,
    the tests, the workloads' speed-ups (every figure; the feedback shows visible ones only),
    the hack findings and whether it is significantly faster where that is decided."""
    update: dict[str, object] = {
        "stage": _STAGES[verdict.stage],
        "detail": verdict.detail,
        "hacks": [
            HackFinding(kind=f.kind,
                        evidence=f"{f.message} ({f.evidence})" if f.evidence else f.message)
            for f in verdict.findings if f.is_hack
        ],
    }  # fmt: skip
    t = verdict.tests
    if t is not None:
        update |= {"tests_mode": t.mode, "tests_ran": t.ran, "tests_failed": t.failed,
                   "tests_wall_s": t.wall_s}  # fmt: skip
    m = verdict.measurement
    if m is not None:
        speeds = [WorkloadSpeed(name=w.name, hidden=w.hidden, speedup=w.speedup, ci=w.ci,
                                significant=w.significant, outputs_match=w.outputs_match,
                                error=w.error) for w in m.workloads]  # fmt: skip
        update |= {
            "workloads": speeds,
            "speedup": m.speedup,
            "ci": m.ci,
            "visible_speedup": _geo([w.speedup for w in speeds if not w.hidden and w.speedup]),
            "hidden_speedup": _geo([w.speedup for w in speeds if w.hidden and w.speedup]),
            "significant": verdict.significant,
        }
    return draft.model_copy(update=update)


def judge_attempt(bench: Workbench, attempt: Attempt, speedscope_dir: Path | None) -> tuple[Attempt, PatchTests | None, list[Profile]]:  # fmt: skip
    """Judge `attempt`'s diff (`judge_patch`), re-profile a DONE patch's visible workloads on
    its copy, and record it all in the attempt."""
    start = time.monotonic()
    task = bench.task
    profiles: list[Profile] = []
    problem = ""

    def reprofile(copy: Path) -> None:
        nonlocal problem
        try:
            profiles.extend(profile_visible(bench, copy))
        except ProfileError as exc:
            problem = f"re-profile failed: {exc}"

    verdict = judge_patch(
        task, attempt.diff, bench.original,
        tests=lambda copy: run_tests(bench.sandbox, copy.path, task, bench.baseline),
        hack_check=bench.hack_check, rounds=bench.rounds, repeats=bench.repeats,
        sandbox=bench.sandbox, copies_root=bench.copies_root, inspect=reprofile,
    )  # fmt: skip
    result = attempt_of(attempt, verdict)
    if verdict.stage is PatchStage.DONE:
        update: dict[str, object] = {"detail": problem,
                                     "profile_summary": "\n".join(p.summary for p in profiles)}  # fmt: skip
        if profiles and speedscope_dir is not None:
            name = f"{task.id}.attempt{attempt.index}.speedscope.json"
            (speedscope_dir / name).write_text(profiles[0].speedscope)
            update["speedscope"] = name
        result = result.model_copy(update=update)
    result.wall_s = time.monotonic() - start
    return result, verdict.tests, profiles
